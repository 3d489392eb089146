# Start and drive tests/tools/fake_s3.py (the S3 endpoint that checks every
# request with botocore's own SigV4 signer, with faults on demand and a fake
# instance metadata service); source it after common.sh. Everything listens
# on 127.0.0.1 and is stopped when the script exits.
#
#   fake_s3_start DIR ARGS...   start it (ARGS: its options), set FAKE_S3_URL
#   fake_s3_faults JSON         replace its fault plan
#   fake_s3_clear_log           forget the requests so far
#   fake_s3_count METHOD [PATH_PREFIX]   requests of METHOD since the last clear
#                               (but the probes of conditional writes: publish.c)
#   fake_s3_object BUCKET KEY OUT        the stored bytes of an object (exit 1: none)
#   fake_s3_meta BUCKET KEY     its metadata as JSON
#   fake_s3_put BUCKET KEY FILE [HEADER...]  store an object as another tool would
#
# The publishing tests' environment, set here: the AWS settings point
# nowhere but at files of the test (HOME too), IMDS is off, a stalled
# transfer is cut after 2 s.

S3_PYTHON=${S3_PYTHON:-/usr/bin/python3}
FAKE_S3_PIDS=()

fake_s3_cleanup() {
	local p
	for p in "${FAKE_S3_PIDS[@]}"; do
		kill "$p" 2>/dev/null
		wait "$p" 2>/dev/null
	done
}
# Stop the servers at exit, then do what was to be done at exit before.
FAKE_S3_PREV_TRAP=$(trap -p EXIT | sed -e "s/^trap -- '//" -e "s/' EXIT\$//")
trap 'fake_s3_cleanup; eval "$FAKE_S3_PREV_TRAP"' EXIT

fake_s3_env() {
	export HOME=$1/home AWS_CONFIG_FILE=$1/no-config AWS_SHARED_CREDENTIALS_FILE=$1/no-credentials
	export AWS_EC2_METADATA_DISABLED=true AWS_DEFAULT_REGION=us-east-1 LIDIAGEN_S3_TIMEOUT=2
	unset AWS_PROFILE AWS_REGION AWS_ENDPOINT_URL AWS_ENDPOINT_URL_S3 AWS_SESSION_TOKEN \
		AWS_EC2_METADATA_SERVICE_ENDPOINT AWS_MAX_ATTEMPTS
	mkdir -p "$HOME"
}

fake_s3_start() {
	local dir=$1 i
	shift
	mkdir -p "$dir"
	rm -f "$dir/port"
	"$S3_PYTHON" "$TESTS_DIR/tools/fake_s3.py" --port-file "$dir/port" --log "$dir/log.jsonl" \
		"$@" >"$dir/server.out" 2>&1 &
	FAKE_S3_PIDS+=($!)
	for i in $(seq 100); do
		[ -s "$dir/port" ] && break
		sleep 0.1
	done
	if [ ! -s "$dir/port" ]; then
		not_ok "fake_s3.py starts" "$(first_lines 20 "$dir/server.out")"
		exit 0
	fi
	FAKE_S3_URL=http://127.0.0.1:$(cat "$dir/port")
}

fake_s3_ctl() { # METHOD PATH [curl args...]
	local m=$1 p=$2
	shift 2
	curl -sS --noproxy '*' -X "$m" "$FAKE_S3_URL/_control/$p" "$@"
}

fake_s3_faults() { fake_s3_ctl POST faults -H 'Content-Type: application/json' --data "$1" >/dev/null; }
fake_s3_clear_log() { fake_s3_ctl POST log/clear >/dev/null; }

fake_s3_count() {
	fake_s3_ctl GET log | "$S3_PYTHON" -c '
import json, sys
m, prefix = sys.argv[1], sys.argv[2]
print(sum(1 for r in json.load(sys.stdin)
          if r.get("method") == m and not r.get("imds") and not r.get("creds") and r.get("path", "").startswith(prefix)
          and "/.lidiagen-probe/" not in r.get("path", "")))
' "$1" "${2:-/}"
}

fake_s3_object() {
	local code
	code=$(curl -sS --noproxy '*' -o "$3" -w '%{http_code}' "$FAKE_S3_URL/_control/object/$1/$2")
	[ "$code" = 200 ]
}

fake_s3_meta() { fake_s3_ctl GET "meta/$1/$2"; }

fake_s3_put() {
	local b=$1 k=$2 f=$3 h=()
	shift 3
	for x in "$@"; do h+=(-H "$x"); done
	fake_s3_ctl PUT "object/$b/$k" --data-binary "@$f" "${h[@]}" >/dev/null
}
