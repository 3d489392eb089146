#!/usr/bin/env bash
# What the S3 client says when it fails, and how often it tries (issue 23,
# parts 7 and 9): a refused connection, a TLS failure, a host name not
# resolved and a stalled server each give one line naming the endpoint; a
# TLS failure (plain HTTP spoken to with https, a certificate that does not
# verify) is tried once, and the line says so; -v says the settings in use
# (endpoint, addressing, region, attempts, where the credentials came from)
# before the bucket check, never a secret nor the whole access key id; a
# problem with the credentials or the region is named as such, not as -o's;
# "MiB sent" counts the bodies the server accepted, each once.
set -u
. "$(dirname "$0")/lib/common.sh"
. "$TESTS_LIB/fake_s3.sh"

L=$LIDIAGEN
w=$(scratch work)
fake_s3_env "$w"
AK=AKIDLIDIAGENTEST SK='secret/Key+with=chars'
export AWS_ACCESS_KEY_ID=$AK AWS_SECRET_ACCESS_KEY=$SK
D=(--connect-timeout 2 --read-timeout 2)

mkdir -p "$w/in"
printf 'int main(void) { return 0; }\n' >"$w/m.c"
if ! gcc -O2 -g -Wl,--build-id=0x11111111111111111111111111111111 -o "$w/in/a" "$w/m.c" 2>"$w/cc.err"; then
	not_ok "s3 errors: the test program builds" "$(cat "$w/cc.err")"
	exit 0
fi
run "$w/local" "$L" -q -r "$w/in" -o "$w/tree"

# lines FILE: how many lines it has (a failure is one).
lines() { grep -c . "$1"; }

# A port nothing listens on: bound by the OS, then closed.
closed_port=$("$S3_PYTHON" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
dead=http://127.0.0.1:$closed_port

# counter_start DIR [--tls CERT KEY]: tests/tools/conn_count.py, its port in
# COUNTER_PORT; counted DIR: the connections it has accepted.
counter_start() {
	local dir=$1 _
	shift
	mkdir -p "$dir"
	"$S3_PYTHON" "$TESTS_DIR/tools/conn_count.py" --port-file "$dir/port" --count-file "$dir/count" \
		"$@" >"$dir/server.out" 2>&1 &
	FAKE_S3_PIDS+=($!) # stopped at exit with the fake S3 servers
	for _ in $(seq 100); do
		[ -s "$dir/port" ] && break
		sleep 0.1
	done
	COUNTER_PORT=$(cat "$dir/port" 2>/dev/null)
	[ -n "$COUNTER_PORT" ] || { not_ok "conn_count.py starts" "$(first_lines 10 "$dir/server.out")"; exit 0; }
}
counted() { cat "$1/count"; }

# ---- a refused connection: one line naming the endpoint ----
run "$w/ref1" env AWS_ENDPOINT_URL="$dead" "$L" "$w/in/a" -o s3://rel/x "${D[@]}"
what="convert, an endpoint refusing connections (AWS_ENDPOINT_URL): exit 1, one line naming 127.0.0.1:$closed_port"
if [ "$RC" -eq 1 ] && [ "$(lines "$w/ref1.err")" -eq 1 ] && grep -q "^lidiagen: s3://rel/x: .*$dead.*ConnectionError" "$w/ref1.err"; then
	ok "$what"
else
	not_ok "$what" "exit $RC" "$(first_lines 5 "$w/ref1.err")"
fi
printf '[default]\nendpoint_url = %s\n' "$dead" >"$w/dead.config"
run "$w/ref2" env AWS_CONFIG_FILE="$w/dead.config" "$L" upload "$w/tree" s3://rel/x "${D[@]}"
what="upload, an endpoint refusing connections (the profile's endpoint_url): exit 1, one line naming it"
if [ "$RC" -eq 1 ] && [ "$(lines "$w/ref2.err")" -eq 1 ] && grep -q "^lidiagen: s3://rel/x: .*$dead.*ConnectionError" "$w/ref2.err"; then
	ok "$what"
else
	not_ok "$what" "exit $RC" "$(first_lines 5 "$w/ref2.err")"
fi

# ---- -v: the settings in use, said before the bucket check, never a secret ----
run "$w/v1" env AWS_ENDPOINT_URL="$dead" AWS_SESSION_TOKEN=tok-SECRET-123 "$L" -v "$w/in/a" -o s3://rel/x "${D[@]}"
what="-v, before a failed bucket check: endpoint, addressing, region, attempts, credentials; no secret, no whole key id"
if [ "$RC" -eq 1 ] && grep -q "^lidiagen: s3: endpoint $dead (from AWS_ENDPOINT_URL), path style" "$w/v1.err" &&
	grep -q "^lidiagen: s3: region us-east-1 (from AWS_DEFAULT_REGION)" "$w/v1.err" &&
	grep -q "^lidiagen: s3: at most 5 attempts" "$w/v1.err" &&
	grep -q "^lidiagen: s3: credentials: environment, access key id \*\{16\}TEST, with a session token" "$w/v1.err" &&
	! grep -qF -e "$SK" -e "$AK" -e tok-SECRET-123 "$w/v1.err" "$w/v1.out"; then
	ok "$what"
else
	not_ok "$what" "exit $RC" "$(first_lines 8 "$w/v1.err")"
fi
cat >"$w/v.creds" <<CREDS
[ci]
aws_access_key_id = AKIDFROMPROFILE9XYZ
aws_secret_access_key = profile-secret-value
CREDS
printf '[profile ci]\nregion = eu-west-3\ns3 =\n  addressing_style = virtual\n' >"$w/v.config"
run "$w/v2" env -u AWS_ACCESS_KEY_ID -u AWS_SECRET_ACCESS_KEY -u AWS_DEFAULT_REGION AWS_PROFILE=ci \
	AWS_SHARED_CREDENTIALS_FILE="$w/v.creds" AWS_CONFIG_FILE="$w/v.config" AWS_MAX_ATTEMPTS=3 \
	"$L" upload -v "$w/tree" s3://rel/x --endpoint-url "$dead" "${D[@]}"
what="upload -v: the profile's region and addressing style, AWS_MAX_ATTEMPTS, 'profile ci in FILE'; no secret"
if [ "$RC" -eq 1 ] && grep -q "^lidiagen: s3: endpoint $dead (from the options), virtual-hosted style (the profile's addressing_style)" "$w/v2.err" &&
	grep -q "^lidiagen: s3: region eu-west-3 (from profile 'ci' in $w/v.config)" "$w/v2.err" &&
	grep -q "^lidiagen: s3: at most 3 attempts a request (from AWS_MAX_ATTEMPTS)" "$w/v2.err" &&
	grep -qF "lidiagen: s3: credentials: profile ci in $w/v.creds, access key id ****************9XYZ" "$w/v2.err" &&
	! grep -qF -e profile-secret-value -e AKIDFROMPROFILE9XYZ "$w/v2.err" "$w/v2.out"; then
	ok "$what"
else
	not_ok "$what" "exit $RC" "$(first_lines 8 "$w/v2.err")"
fi

# ---- TLS: tried once, and said so ----
counter_start "$w/plain"
tls=https://127.0.0.1:$COUNTER_PORT
run "$w/tls1" "$L" "$w/in/a" -o s3://rel/x --endpoint-url "$tls" "${D[@]}"
what="https to a plain-HTTP server: exit 1, one line naming $tls, TLSError, 1 attempt (the server saw $(counted "$w/plain") connection(s))"
if [ "$RC" -eq 1 ] && [ "$(lines "$w/tls1.err")" -eq 1 ] && [ "$(counted "$w/plain")" -eq 1 ] &&
	grep -q "^lidiagen: s3://rel/x: .*$tls.*TLSError: .*(1 attempt, not retried: a TLS failure recurs)$" "$w/tls1.err"; then
	ok "$what"
else
	not_ok "$what" "exit $RC" "$(first_lines 5 "$w/tls1.err")"
fi
before=$(counted "$w/plain")
run "$w/tls2" env AWS_MAX_ATTEMPTS=10 "$L" upload "$w/tree" s3://rel/x --endpoint-url "$tls" "${D[@]}"
n=$(($(counted "$w/plain") - before))
what="upload, the same with AWS_MAX_ATTEMPTS=10: one connection, one line saying 1 attempt ($n connection(s))"
if [ "$RC" -eq 1 ] && [ "$n" -eq 1 ] && [ "$(lines "$w/tls2.err")" -eq 1 ] && grep -q "$tls.*(1 attempt, not retried" "$w/tls2.err"; then
	ok "$what"
else
	not_ok "$what" "exit $RC" "$(first_lines 5 "$w/tls2.err")"
fi
if command -v openssl >/dev/null 2>&1 &&
	openssl req -x509 -newkey rsa:2048 -nodes -keyout "$w/key.pem" -out "$w/cert.pem" -days 2 \
		-subj /CN=127.0.0.1 >"$w/openssl.out" 2>&1; then
	counter_start "$w/selfsigned" --tls "$w/cert.pem" "$w/key.pem"
	ss=https://127.0.0.1:$COUNTER_PORT
	run "$w/tls3" "$L" "$w/in/a" -o s3://rel/x --endpoint-url "$ss" "${D[@]}"
	what="a certificate that does not verify (self-signed): exit 1, one line naming $ss, 1 attempt ($(counted "$w/selfsigned") connection(s))"
	if [ "$RC" -eq 1 ] && [ "$(lines "$w/tls3.err")" -eq 1 ] && [ "$(counted "$w/selfsigned")" -eq 1 ] &&
		grep -q "^lidiagen: s3://rel/x: .*$ss.*TLSError: .*certificate.*(1 attempt, not retried" "$w/tls3.err"; then
		ok "$what"
	else
		not_ok "$what" "exit $RC" "$(first_lines 5 "$w/tls3.err")"
	fi
else
	skip "a certificate that does not verify: openssl cannot make one"
fi

# ---- a host name not resolved: tried twice (doc/publishing.md says why) ----
# .invalid never resolves (RFC 6761); where no resolver answers, the lookup
# times out at --connect-timeout instead, which is tried twice too.
run "$w/dns" "$L" "$w/in/a" -o s3://rel/x --endpoint-url http://lidiagen-test.invalid:9000 "${D[@]}"
what="a host name not resolved: exit 1, one line naming http://lidiagen-test.invalid:9000, DNSError, after 2 attempts"
if [ "$RC" -eq 1 ] && [ "$(lines "$w/dns.err")" -eq 1 ] &&
	grep -q "^lidiagen: s3://rel/x: .*http://lidiagen-test\.invalid:9000.*\(DNSError\|Timeout: Resolving\).*(after 2 attempts)$" "$w/dns.err"; then
	ok "$what"
else
	not_ok "$what" "exit $RC" "$(first_lines 5 "$w/dns.err")"
fi

# ---- settings and credentials: named as such, not as -o's ----
# named_case WHAT WANT ENV...: convert and upload exit 2, and their first line is WANT (a
# regular expression), never "-o:".
named_case() {
	local what=$1 want=$2 bad=""
	shift 2
	run "$w/n1" env "$@" "$L" "$w/in/a" -o s3://rel/x
	[ "$RC" -eq 2 ] && head -n 1 "$w/n1.err" | grep -q "$want" && ! grep -q -- '-o:' "$w/n1.err" ||
		bad="convert: exit $RC: $(head -n 1 "$w/n1.err")"
	run "$w/n2" env "$@" "$L" upload "$w/tree" s3://rel/x
	[ "$RC" -eq 2 ] && head -n 1 "$w/n2.err" | grep -q "$want" ||
		bad="$bad upload: exit $RC: $(head -n 1 "$w/n2.err")"
	if [ -z "$bad" ]; then
		ok "$what: '$(head -n 1 "$w/n1.err" | cut -c1-90)...'"
	else
		not_ok "$what" "$bad"
	fi
}
named_case "a secret key without its key id: a credentials error, not -o's" \
	"^lidiagen: credentials: AWS_SECRET_ACCESS_KEY is set without AWS_ACCESS_KEY_ID" -u AWS_ACCESS_KEY_ID
named_case "no credentials at all: a credentials error, not -o's" \
	"^lidiagen: credentials: none found" -u AWS_ACCESS_KEY_ID -u AWS_SECRET_ACCESS_KEY
named_case "a bad region: named by the bucket, not -o" \
	"^lidiagen: s3://rel/x: region 'Bad_Region' (from AWS_REGION)" AWS_REGION=Bad_Region
named_case "a bad endpoint: named by the bucket, not -o" \
	"^lidiagen: s3://rel/x: endpoint URL 'ftp://x' (from AWS_ENDPOINT_URL_S3)" AWS_ENDPOINT_URL_S3=ftp://x

# ---- against the fake S3: a stalled server, and what "MiB sent" counts ----
fake_s3_start "$w/srv" --access-key "$AK" --secret-key "$SK" --bucket rel
E=(--endpoint-url "$FAKE_S3_URL")

fake_s3_faults '{"stall": 2, "stall_seconds": 4}'
run "$w/stall" "$L" "$w/in/a" -o s3://rel/x "${E[@]}" --connect-timeout 1 --read-timeout 1
fake_s3_faults '{}'
what="a server that stalls at the bucket check: exit 1, one line naming $FAKE_S3_URL, Timeout"
if [ "$RC" -eq 1 ] && [ "$(lines "$w/stall.err")" -eq 1 ] && grep -q "^lidiagen: s3://rel/x: .*$FAKE_S3_URL.*Timeout: " "$w/stall.err"; then
	ok "$what"
else
	not_ok "$what" "exit $RC" "$(first_lines 5 "$w/stall.err")"
fi

run "$w/vok" "$L" -v "$w/in/a" -o s3://rel/ok "${E[@]}"
what="-v on a run that publishes: the settings, then 'publishing to'; no secret, no whole key id"
if [ "$RC" -eq 0 ] && grep -q "^lidiagen: s3: endpoint $FAKE_S3_URL (from the options)" "$w/vok.err" &&
	grep -q "^lidiagen: publishing to s3://rel/ok$" "$w/vok.err" &&
	! grep -qF -e "$SK" -e "$AK" "$w/vok.err" "$w/vok.out"; then
	ok "$what"
else
	not_ok "$what" "exit $RC" "$(first_lines 8 "$w/vok.err")"
fi

# A body large enough to show in "%.1f MiB": the lidia file of lidiagen itself.
run "$w/big" "$L" -q "$L" -o "$w/bigtree"
big=$(find "$w/bigtree" -type f | head -n 1)
mib=$("$S3_PYTHON" -c 'import os, sys; print("%.1f" % (os.path.getsize(sys.argv[1]) / 1048576))' "$big")
if [ "$mib" = 0.0 ]; then
	not_ok "the big lidia file is over 0.05 MiB" "$(ls -l "$big")"
fi

# sent_case WHAT FAULTS WANT_EXIT WANT_MIB ARGS...: the summary's "N MiB sent" after a run under FAULTS.
sent_case() {
	local what=$1 faults=$2 want_rc=$3 want=$4 got
	shift 4
	fake_s3_faults "$faults"
	fake_s3_clear_log
	run "$w/sent" "$L" "$@" "${E[@]}"
	fake_s3_faults '{}'
	got=$(tail -n 1 "$w/sent.err" | sed -n 's/.* \([0-9.]*\) MiB sent$/\1/p')
	if [ "$RC" -eq "$want_rc" ] && [ "$got" = "$want" ]; then
		ok "$what: exit $RC, $got MiB sent"
	else
		not_ok "$what: $want MiB sent" "exit $RC, '$got' MiB sent; PUT bytes in the log: $(fake_s3_ctl GET log |
			"$S3_PYTHON" -c 'import json, sys; print([(r["status"], r["bytes_in"]) for r in json.load(sys.stdin) if r["method"] == "PUT"])')" \
			"$(first_lines 5 "$w/sent.err")"
	fi
}
sent_case "convert, every PUT refused (403 after its body)" '{"deny_put": 100}' 1 0.0 "$L" -o s3://rel/deny1
sent_case "upload, every PUT refused (403 after its body)" '{"deny_put": 100}' 1 0.0 upload "$w/bigtree" s3://rel/deny2
sent_case "convert, a PUT reset mid-body then accepted: counted once" '{"reset_put": 1}' 0 "$mib" "$L" -o s3://rel/reset1
sent_case "upload, a PUT reset mid-body then accepted: counted once" '{"reset_put": 1}' 0 "$mib" upload "$w/bigtree" s3://rel/reset2
