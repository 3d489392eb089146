#!/usr/bin/env bash
# Publishing to S3 (cmd/lidiagen/publish/: s3/, publish.c, upload.c) against
# tests/tools/fake_s3.py, which checks every request with botocore's own
# SigV4 signer and stores what it is sent: the keys and bytes are a local
# run's; a re-run sends no PUT; a weaker or foreign object is replaced and a
# stronger one kept; credentials come from the environment, a profile or
# the instance metadata service (on 127.0.0.1); faults are retried or
# reported with the server's reason, and no object is ever half written.
set -u
. "$(dirname "$0")/lib/common.sh"
. "$TESTS_LIB/fake_s3.sh"

L=$LIDIAGEN
w=$(scratch work)
fake_s3_env "$w"
AK=AKIDLIDIAGENTEST SK='secret/Key+with=chars' TOK='session-token-123'

# ---- inputs: three build IDs; A also built at -O0 (lines, no inline frames) ----
mkdir -p "$w/in" "$w/weak"
printf 'static inline int sq(int x) { return x * x; }\nint work(int x) { return sq(x) + 1; }\nint main(int c, char **v) { (void)v; return work(c); }\n' >"$w/k.c"
printf 'int main(void) { return 0; }\n' >"$w/m.c"
bidA=0x11111111111111111111111111111111 bidB=0x22222222222222222222222222222222
bidC=0x33333333333333333333333333333333
if ! gcc -O2 -g -Wl,--build-id=$bidA -o "$w/in/a" "$w/k.c" 2>"$w/cc.err" ||
	! gcc -O0 -g -Wl,--build-id=$bidA -o "$w/weak/a" "$w/k.c" 2>>"$w/cc.err" ||
	! gcc -O2 -g -Wl,--build-id=$bidB -o "$w/in/b" "$w/m.c" 2>>"$w/cc.err" ||
	! gcc -O2 -Wl,--build-id=$bidC -s -o "$w/in/c" "$w/m.c" 2>>"$w/cc.err"; then
	not_ok "s3: the test programs build" "$(cat "$w/cc.err")"
	exit 0
fi
keyA=symbolizer/anonymous/${bidA#0x}
run "$w/local" "$L" -q -r "$w/in" -o "$w/local"
keys=$(cd "$w/local" && find . -type f | sed 's|^\./||' | sort)
nkeys=$(printf '%s\n' "$keys" | grep -c .)

fake_s3_start "$w/srv" --access-key "$AK" --secret-key "$SK" --bucket rel --region us-east-1 \
	--imds-role ci-role --imds-access-key AKIDIMDS --imds-secret-key imds-secret \
	--imds-token imds-token
export AWS_ACCESS_KEY_ID=$AK AWS_SECRET_ACCESS_KEY=$SK
E=(--endpoint-url "$FAKE_S3_URL")

# same_as_local_at PREFIX: the same on the server started last.
same_as_local_at() { same_as_local "$@"; }

# same_as_local PREFIX: every key of the local run is in the bucket under
# PREFIX with the same bytes, and its sha256 metadata is sha256sum's.
same_as_local() {
	local k why=""
	for k in $keys; do
		if ! fake_s3_object rel "$1/$k" "$w/got"; then
			why="$why missing:$k"
		elif ! cmp -s "$w/got" "$w/local/$k"; then
			why="$why differs:$k"
		elif ! fake_s3_meta rel "$1/$k" | grep -q "\"x-amz-meta-lidia-sha256\": *\"$(sha256sum <"$w/local/$k" | cut -c1-64)\""; then
			why="$why sha256-metadata:$k"
		fi
	done
	printf '%s' "$why"
}

# ---- convert straight into the bucket ----
fake_s3_clear_log
run "$w/p1" "$L" -v -r "$w/in" -o s3://rel/v1 "${E[@]}" --manifest "$w/p1.jsonl"
why=$(same_as_local v1)
puts=$(fake_s3_count PUT) heads=$(fake_s3_count HEAD)
if [ "$RC" -eq 0 ] && [ -z "$why" ] && [ "$puts" -eq "$nkeys" ] && [ "$heads" -eq 0 ]; then
	ok "convert -o s3://: the $nkeys keys and bytes of a local run, one PUT each (no HEAD: the listing showed them absent), sha256 in the metadata"
else
	not_ok "convert -o s3://: the keys and bytes of a local run" "exit $RC, $puts PUT, $heads HEAD, $why" \
		"$(first_lines 10 "$w/p1.err")"
fi
if [ "$(grep -c '"status":"uploaded"' "$w/p1.jsonl")" -eq "$nkeys" ]; then
	ok "the manifest says uploaded for each key"
else
	not_ok "the manifest says uploaded for each key" "$(cat "$w/p1.jsonl")"
fi
if grep -q "credentials: environment" "$w/p1.err" && ! grep -qF "$SK" "$w/p1.err" "$w/p1.out" "$w/p1.jsonl"; then
	ok "-v names where the credentials came from, and no secret is printed"
else
	not_ok "-v names where the credentials came from, and no secret is printed" "$(first_lines 5 "$w/p1.err")"
fi

fake_s3_clear_log
run "$w/p2" "$L" -r "$w/in" -o s3://rel/v1 "${E[@]}" --manifest "$w/p2.jsonl"
puts=$(fake_s3_count PUT) gets=$(fake_s3_count GET /rel/v1/) heads=$(fake_s3_count HEAD)
if [ "$RC" -eq 0 ] && [ "$puts" -eq 0 ] && [ "$gets" -eq 0 ] && [ "$heads" -le $((nkeys + 1)) ] &&
	[ "$(grep -c '"status":"exists"' "$w/p2.jsonl")" -eq "$nkeys" ]; then
	ok "a re-run: no PUT, no GET, $heads HEAD for $nkeys keys, all 'exists'"
else
	not_ok "a re-run: no PUT, no GET, a HEAD per key" "exit $RC: $puts PUT, $gets GET, $heads HEAD" \
		"$(cat "$w/p2.jsonl")"
fi

# With --state: the first run records what it published (each object's
# ETag and holdings); an unchanged re-run then lists the prefix once and
# sends nothing else, not even a HEAD; one whose state is gone (a fresh
# runner) makes at most one HEAD per key.
fake_s3_clear_log
run "$w/st1" "$L" -r "$w/in" -o s3://rel/vs "${E[@]}" --state "$w/vs.state"
fake_s3_clear_log
run "$w/st2" "$L" -r "$w/in" -o s3://rel/vs "${E[@]}" --state "$w/vs.state" --manifest "$w/st2.jsonl"
puts=$(fake_s3_count PUT) heads=$(fake_s3_count HEAD) lists=$(fake_s3_count GET /rel/)
if [ "$RC" -eq 0 ] && [ "$puts" -eq 0 ] && [ "$heads" -eq 0 ] && [ "$lists" -ge 1 ] &&
	[ "$(grep -c '"status":"exists"' "$w/st2.jsonl")" -eq "$nkeys" ]; then
	ok "a re-run with --state: $lists listing request(s), no HEAD, no PUT for $nkeys keys, all 'exists'"
else
	not_ok "a re-run with --state: a listing, no HEAD, no PUT" "exit $RC: $puts PUT, $heads HEAD, $lists GET" \
		"$(cat "$w/st2.jsonl")" "$(first_lines 5 "$w/st2.err")"
fi
fake_s3_clear_log
run "$w/st3" "$L" -r "$w/in" -o s3://rel/vs "${E[@]}"
heads=$(fake_s3_count HEAD) puts=$(fake_s3_count PUT)
if [ "$RC" -eq 0 ] && [ "$puts" -eq 0 ] && [ "$heads" -le "$nkeys" ]; then
	ok "a fresh runner (no state): at most one HEAD per key ($heads for $nkeys), no PUT"
else
	not_ok "a fresh runner (no state): at most one HEAD per key" "exit $RC: $heads HEAD, $puts PUT"
fi

# A dry run over what the bucket holds: b's object has lines and no inline
# frames, less than b's DWARF predicts, so the dry run reads b to know.
run "$w/dry0" "$L" -v -r "$w/in" -o s3://rel/v1 "${E[@]}" --dry-run --manifest "$w/dry0.jsonl"
if [ "$RC" -eq 0 ] && [ "$(grep -c '"status":"exists"' "$w/dry0.jsonl")" -eq "$nkeys" ] &&
	! grep -q would "$w/dry0.out" "$w/dry0.jsonl"; then
	ok "--dry-run where the bucket holds everything: every key 'exists', nothing would be sent"
else
	not_ok "--dry-run where the bucket holds everything" "exit $RC" "$(cat "$w/dry0.out" "$w/dry0.jsonl")"
fi

# ---- stronger kept, weaker and foreign replaced ----
fake_s3_clear_log
run "$w/weak1" "$L" -v "$w/weak/a" -o s3://rel/v1 "${E[@]}"
if [ "$RC" -eq 0 ] && [ "$(fake_s3_count PUT)" -eq 0 ] && grep -q "exists s3://rel/v1/$keyA: it has symbols+lines+inlines already" "$w/weak1.out"; then
	ok "the -O0 build over the bucket's -O2 object: kept, nothing sent"
else
	not_ok "the -O0 build over the bucket's -O2 object: kept" "exit $RC" "$(first_lines 5 "$w/weak1.err")"
fi
run "$w/weak2" "$L" -q "$w/weak/a" -o s3://rel/v2 "${E[@]}"
fake_s3_clear_log
run "$w/strong" "$L" -v "$w/in/a" -o s3://rel/v2 "${E[@]}"
if [ "$RC" -eq 0 ] && [ "$(fake_s3_count PUT)" -eq 1 ] && grep -q "^replaced .*(it had less)" "$w/strong.out" &&
	fake_s3_object rel "v2/$keyA" "$w/got" && cmp -s "$w/got" "$w/local/$keyA"; then
	ok "the -O2 build over a -O0 object: replaced with the local run's bytes"
else
	not_ok "the -O2 build over a -O0 object: replaced" "exit $RC" "$(first_lines 5 "$w/strong.err")"
fi
printf 'pyroscope wrote this' >"$w/foreign"
fake_s3_put rel "v3/$keyA" "$w/foreign"
run "$w/foreign" "$L" -v "$w/in/a" -o s3://rel/v3 "${E[@]}"
if [ "$RC" -eq 0 ] && grep -q "^replaced .*(not written by lidiagen)$" "$w/foreign.out" &&
	fake_s3_object rel "v3/$keyA" "$w/got" && cmp -s "$w/got" "$w/local/$keyA"; then
	ok "an object lidiagen did not write (no metadata of ours): replaced"
else
	not_ok "an object lidiagen did not write: replaced" "exit $RC" "$(first_lines 5 "$w/foreign.err")"
fi
fake_s3_clear_log
run "$w/force" "$L" -q "$w/in/a" -o s3://rel/v3 "${E[@]}" --force
if [ "$RC" -eq 0 ] && [ "$(fake_s3_count PUT)" -eq 1 ]; then
	ok "--force sends it again"
else
	not_ok "--force sends it again" "exit $RC, $(fake_s3_count PUT) PUT"
fi

# ---- --dry-run ----
fake_s3_clear_log
run "$w/dry" "$L" -v -r "$w/in" -o s3://rel/v4 "${E[@]}" --dry-run --manifest "$w/dry.jsonl"
if [ "$RC" -eq 0 ] && [ "$(fake_s3_count PUT)" -eq 0 ] && ! fake_s3_object rel "v4/$keyA" "$w/got" &&
	[ "$(grep -c '"status":"would-upload"' "$w/dry.jsonl")" -eq "$nkeys" ] &&
	grep -q '"status":"skipped","reason":"nothing to symbolize"' "$w/dry.jsonl" &&
	grep -q "would upload s3://rel/v4/$keyA" "$w/dry.out"; then
	ok "--dry-run: says what it would upload, sends nothing"
else
	not_ok "--dry-run: says what it would upload, sends nothing" "exit $RC" "$(first_lines 5 "$w/dry.err")" \
		"$(cat "$w/dry.jsonl")"
fi

run "$w/dryl" "$L" -r "$w/in" -o "$w/dry-local" --dry-run --state "$w/dry.state"
if [ "$RC" -eq 0 ] && [ ! -e "$w/dry-local" ] && [ ! -e "$w/dry.state" ] &&
	grep -q "2 would be written" "$w/dryl.err"; then
	ok "--dry-run into a directory: says what it would write, writes nothing (no state either)"
else
	not_ok "--dry-run into a directory writes nothing" "exit $RC" "$(first_lines 3 "$w/dryl.err")" \
		"$(find "$w/dry-local" "$w/dry.state" 2>/dev/null)"
fi

# ---- the same settings from the YAML config ----
printf 'endpoint-url: %s\nregion: us-east-1\npath-style: true\n' "$FAKE_S3_URL" >"$w/s3.yaml"
run "$w/cfg" "$L" --config "$w/s3.yaml" "$w/in/a" -o s3://rel/cfg
if [ "$RC" -eq 0 ] && fake_s3_object rel "cfg/$keyA" "$w/got" && cmp -s "$w/got" "$w/local/$keyA"; then
	ok "endpoint-url, region and path-style from the YAML config"
else
	not_ok "endpoint-url, region and path-style from the YAML config" "exit $RC" "$(first_lines 3 "$w/cfg.err")"
fi
run "$w/reg" "$L" "$w/in/a" -o s3://rel/reg "${E[@]}" --region eu-west-1
if [ "$RC" -eq 1 ] && grep -q "AuthorizationHeaderMalformed" "$w/reg.err"; then
	ok "--region is the region signed for (the server wants us-east-1: refused)"
else
	not_ok "--region is the region signed for" "exit $RC" "$(first_lines 3 "$w/reg.err")"
fi

# ---- upload: a tree written earlier ----
fake_s3_clear_log
run "$w/up1" "$L" upload "$w/local" s3://rel/up "${E[@]}" --manifest "$w/up1.jsonl"
why=$(same_as_local up)
if [ "$RC" -eq 0 ] && [ -z "$why" ] && [ "$(fake_s3_count PUT)" -eq "$nkeys" ] &&
	[ "$(grep -c '"status":"uploaded"' "$w/up1.jsonl")" -eq "$nkeys" ]; then
	ok "upload DIR: every file at its key, byte for byte"
else
	not_ok "upload DIR: every file at its key" "exit $RC: $why" "$(first_lines 5 "$w/up1.err")"
fi
fake_s3_clear_log
run "$w/up2" "$L" upload "$w/local" s3://rel/up "${E[@]}" --manifest "$w/up2.jsonl"
if [ "$RC" -eq 0 ] && [ "$(fake_s3_count PUT)" -eq 0 ] && [ "$(fake_s3_count GET /rel/up/)" -eq 0 ] &&
	[ "$(fake_s3_count HEAD)" -eq 0 ] && [ "$(grep -c '"status":"exists"' "$w/up2.jsonl")" -eq "$nkeys" ]; then
	ok "upload again: nothing sent, no HEAD (the listing's ETags are the files' MD5), every key 'exists'"
else
	not_ok "upload again: nothing sent" "exit $RC, $(fake_s3_count PUT) PUT, $(fake_s3_count HEAD) HEAD" \
		"$(cat "$w/up2.jsonl")"
fi
# One manifest schema: convert's lines and upload's have the same object
# fields, with the whole s3://BUCKET/PREFIX/KEY of every object.
"$PYTHON" - "$w/p1.jsonl" "$w/up1.jsonl" >"$w/schema.out" <<'PY'
import json, sys
common = {"key": str, "object": str, "status": str, "holds": dict, "counts": dict, "size": int,
          "sha256": str}
own = [{"build_id": str, "inputs": list, "go": bool}, {"file": str}]
prefix = ["s3://rel/v1/", "s3://rel/up/"]
for i, path in enumerate(sys.argv[1:]):
    for line in open(path):
        r = json.loads(line)
        if "key" not in r:
            continue
        want = dict(common, **own[i])
        bad = [k for k, t in want.items() if not isinstance(r.get(k), t)]
        if bad or set(r["holds"]) != {"symbols", "lines", "inlines"} or \
                r["object"] != prefix[i] + r["key"]:
            print("%s: %s (fields %s)" % (path, line.strip(), bad))
PY
if [ ! -s "$w/schema.out" ] && grep -q '"key"' "$w/p1.jsonl" && grep -q '"key"' "$w/up1.jsonl"; then
	ok "manifests: convert's and upload's have one schema for their objects (key, object s3://..., status, holds, counts, size, sha256)"
else
	not_ok "manifests: convert's and upload's have one schema for their objects" "$(head -c 600 "$w/schema.out")"
fi
fake_s3_clear_log
run "$w/up4" "$L" upload --dry-run "$w/local" s3://rel/up-dry "${E[@]}" --manifest "$w/up4.jsonl"
if [ "$RC" -eq 0 ] && [ "$(fake_s3_count PUT)" -eq 0 ] &&
	[ "$(grep -c '"status":"would-upload"' "$w/up4.jsonl")" -eq "$nkeys" ]; then
	ok "upload --dry-run: sends nothing, the manifest says would-upload"
else
	not_ok "upload --dry-run: sends nothing" "exit $RC" "$(cat "$w/up4.jsonl")"
fi
mkdir -p "$w/notlidia/x"
printf 'junk' >"$w/notlidia/x/y"
run "$w/up3" "$L" upload "$w/notlidia" s3://rel/junk "${E[@]}"
if [ "$RC" -eq 1 ] && grep -q "notlidia/x/y: not a lidia file" "$w/up3.err" &&
	! fake_s3_object rel junk/x/y "$w/got"; then
	ok "upload of a file that is no lidia file: named, not sent, exit 1"
else
	not_ok "upload of a file that is no lidia file: named, not sent, exit 1" "exit $RC" \
		"$(first_lines 5 "$w/up3.err")"
fi

# ---- the listing is of PREFIX/, and keys come back unescaped ----
# A flat tree (keys at the top of the prefix): an object "fl-KEY" beside the
# prefix "fl" is no object under it.
run "$w/flat" "$L" -q -r "$w/in" -o "$w/flat" --layout flat
fk=$(cd "$w/flat" && ls | head -n 1)
fake_s3_put rel "fl-$fk" "$w/flat/$fk"
fake_s3_clear_log
run "$w/fl" "$L" upload "$w/flat" s3://rel/fl "${E[@]}"
if [ "$RC" -eq 0 ] && fake_s3_object rel "fl/$fk" "$w/got" && cmp -s "$w/got" "$w/flat/$fk"; then
	ok "a flat tree: an object beside the prefix (fl-KEY) is not taken for one under it (fl/KEY)"
else
	not_ok "a flat tree: an object beside the prefix is not taken for one under it" "exit $RC" \
		"$(first_lines 5 "$w/fl.err")"
fi
# A key with characters XML escapes: known from the listing, so a weaker
# file under the same name is left, not sent blindly over the stronger one.
mkdir -p "$w/odd1" "$w/odd2"
cp "$w/local/$keyA" "$w/odd1/it's & <more>.lidia"
run "$w/odd2" "$L" -q "$w/in/a" -o - --symbols-only
cp "$w/odd2.out" "$w/odd2/it's & <more>.lidia"
run "$w/o1" "$L" upload "$w/odd1" s3://rel/odd "${E[@]}"
fake_s3_clear_log
run "$w/o2" "$L" upload "$w/odd2" s3://rel/odd "${E[@]}" --manifest "$w/o2.jsonl"
if [ "$RC" -eq 0 ] && [ "$(fake_s3_count PUT)" -eq 0 ] && grep -q '"status":"exists"' "$w/o2.jsonl"; then
	ok "a key XML escapes in a listing (' & < >): a weaker file is left as 'exists', nothing sent"
else
	not_ok "a key XML escapes in a listing: a weaker file is left" "exit $RC, $(fake_s3_count PUT) PUT" \
		"$(cat "$w/o2.jsonl")"
fi

# ---- the listing, page by page (this server: 2 keys a page) ----
# Twelve objects of another run where upload's keys go: the listing stops
# after a few pages (HEADs then cost less), and the keys it did not reach
# are asked about one by one; the outcome is the same.
fake_s3_start "$w/srv3" --access-key "$AK" --secret-key "$SK" --bucket rel --page-size 2
E3=(--endpoint-url "$FAKE_S3_URL")
for i in 00 01 02 03 04 05 06 07 08 09 10 11; do
	fake_s3_put rel "pg/symbolizer/anonymous/00$i" "$w/foreign"
done
run "$w/pg1" "$L" upload "$w/local" s3://rel/pg "${E3[@]}" --manifest "$w/pg1.jsonl"
lists=$(fake_s3_count GET /rel/) heads=$(fake_s3_count HEAD)
why=$(same_as_local_at pg)
if [ "$RC" -eq 0 ] && [ -z "$why" ] && [ "$lists" -le 4 ] && [ "$heads" -eq "$nkeys" ]; then
	ok "a listing over full pages: stops after $((lists - 1)) pages, HEADs what it did not reach, uploads"
else
	not_ok "a listing over full pages" "exit $RC, $lists GET, $heads HEAD, $why" "$(cat "$w/pg1.jsonl")"
fi
# Two objects before ours: our keys are on the second page, reached only
# through the first page's continuation token.
fake_s3_put rel pg2/symbolizer/anonymous/0000 "$w/foreign"
fake_s3_put rel pg2/symbolizer/anonymous/0001 "$w/foreign"
run "$w/pg2" "$L" upload "$w/local" s3://rel/pg2 "${E3[@]}"
fake_s3_clear_log
run "$w/pg3" "$L" upload "$w/local" s3://rel/pg2 "${E3[@]}" --manifest "$w/pg3.jsonl"
if [ "$RC" -eq 0 ] && [ "$(fake_s3_count HEAD)" -eq 0 ] && [ "$(fake_s3_count PUT)" -eq 0 ] &&
	[ "$(grep -c '"status":"exists"' "$w/pg3.jsonl")" -eq "$nkeys" ]; then
	ok "a listing of several pages (continuation tokens): every key known from it, nothing sent"
else
	not_ok "a listing of several pages" "exit $RC, $(fake_s3_count HEAD) HEAD" "$(cat "$w/pg3.jsonl")"
fi
FAKE_S3_URL=${E[1]}

# ---- signatures: each failure is the server's, with its reason ----
# fail_case WHAT CODE CMD...: exit 1, S3's code in the message, no object
# of the run in the bucket, and no secret in anything printed.
fail_case() {
	local what=$1 code=$2
	shift 2
	run "$w/f" "$@"
	if [ "$RC" -eq 1 ] && grep -q "$code" "$w/f.err" && ! grep -qF -e "$SK" -e "$TOK" "$w/f.err" "$w/f.out" &&
		! grep -v '^lidiagen: ' "$w/f.err" | grep -q .; then
		ok "$what: exit 1, says $code, each message one line"
	else
		not_ok "$what: exit 1, says $code" "exit $RC" "$(first_lines 5 "$w/f.err")"
	fi
}
fail_case "a wrong secret key" SignatureDoesNotMatch \
	env AWS_SECRET_ACCESS_KEY=wrong "$L" -v "$w/in/a" -o s3://rel/w1 "${E[@]}"
fail_case "an unknown access key" InvalidAccessKeyId \
	env AWS_ACCESS_KEY_ID=AKIDOTHER "$L" "$w/in/a" -o s3://rel/w1 "${E[@]}"
fail_case "a bucket that does not exist" NoSuchBucket "$L" "$w/in/a" -o s3://nosuchbucket/x "${E[@]}"
fake_s3_faults '{"corrupt_body": 1}'
fail_case "a body damaged on its way (payload hash)" XAmzContentSHA256Mismatch \
	"$L" "$w/in/a" -o s3://rel/w2 "${E[@]}"
fake_s3_faults '{"clock_offset": 3600}'
fail_case "a clock an hour off" RequestTimeTooSkewed "$L" "$w/in/a" -o s3://rel/w3 "${E[@]}"
fake_s3_faults '{"deny": true}'
fake_s3_clear_log
fail_case "403 AccessDenied (not retried)" AccessDenied "$L" "$w/in/a" -o s3://rel/w4 "${E[@]}"
if [ "$(fake_s3_count GET)" -eq 1 ] && [ "$(fake_s3_count HEAD)" -eq 0 ]; then
	ok "403 is not retried: one request, and nothing after it"
else
	not_ok "403 is not retried: one request" "$(fake_s3_count GET) GET, $(fake_s3_count HEAD) HEAD"
fi
fake_s3_faults '{}'

# ---- faults worth retrying: the run succeeds ----
# retry_case WHAT FAULTS: with FAULTS planned, the run still publishes the
# local bytes, and the log shows the failed attempts.
retry_case() {
	local what=$1 prefix=$2
	fake_s3_faults "$3"
	fake_s3_clear_log
	run "$w/r" "$L" -j 1 "$w/in/a" -o "s3://rel/$prefix" "${E[@]}"
	if [ "$RC" -eq 0 ] && fake_s3_object rel "$prefix/$keyA" "$w/got" && cmp -s "$w/got" "$w/local/$keyA" &&
		grep -q "[1-9][0-9]* retried" "$w/r.err"; then
		ok "$what: retried, then published"
	else
		not_ok "$what: retried, then published" "exit $RC" "$(first_lines 5 "$w/r.err")"
	fi
	fake_s3_faults '{}'
}
retry_case "a burst of 503 SlowDown" r1 '{"slowdown": 3, "retry_after": 0}'
retry_case "429 Too Many Requests" r2 '{"status_429": 2}'
retry_case "500 InternalError" r3 '{"internal_error": 2}'
retry_case "a connection reset mid-body" r4 '{"reset_put": 1}'
retry_case "a server that stalls (cut after LIDIAGEN_S3_TIMEOUT=2 s)" r5 '{"stall": 1, "stall_seconds": 30}'
fake_s3_faults '{"slowdown": 1000, "retry_after": 0}'
fail_case "SlowDown that never ends: bounded attempts" "SlowDown.*after 3 attempts" \
	env AWS_MAX_ATTEMPTS=3 "$L" "$w/in/a" -o s3://rel/r6 "${E[@]}"
fake_s3_faults '{}'
if ! fake_s3_object rel "r6/$keyA" "$w/got"; then
	ok "after the failures, no object at the key"
else
	not_ok "after the failures, no object at the key"
fi

# ---- credentials: a profile, a session token, the metadata service ----
cat >"$w/creds" <<EOF
[default]
aws_access_key_id = AKIDNOBODY
aws_secret_access_key = nothing

[ci]
aws_access_key_id = $AK
aws_secret_access_key = $SK
EOF
printf '[profile ci]\nregion = us-east-1\n' >"$w/config"
run "$w/prof" env -u AWS_ACCESS_KEY_ID -u AWS_SECRET_ACCESS_KEY AWS_SHARED_CREDENTIALS_FILE="$w/creds" \
	AWS_CONFIG_FILE="$w/config" AWS_PROFILE=ci "$L" -v "$w/in/a" -o s3://rel/c1 "${E[@]}"
if [ "$RC" -eq 0 ] && grep -q "credentials: profile ci" "$w/prof.err" && ! grep -qF "$SK" "$w/prof.err"; then
	ok "credentials from AWS_PROFILE's section of the credentials file; -v names the source, not the secret"
else
	not_ok "credentials from a profile" "exit $RC" "$(first_lines 5 "$w/prof.err")"
fi
run "$w/imds" env -u AWS_ACCESS_KEY_ID -u AWS_SECRET_ACCESS_KEY AWS_EC2_METADATA_DISABLED=false \
	AWS_EC2_METADATA_SERVICE_ENDPOINT="$FAKE_S3_URL" "$L" -v "$w/in/a" -o s3://rel/c2 "${E[@]}"
if [ "$RC" -eq 0 ] && grep -q "credentials: instance metadata" "$w/imds.err" &&
	! grep -qF -e imds-secret -e imds-token "$w/imds.err"; then
	ok "credentials from the instance metadata service (IMDSv2 on 127.0.0.1)"
else
	not_ok "credentials from the instance metadata service" "exit $RC" "$(first_lines 5 "$w/imds.err")"
fi

fake_s3_start "$w/srv2" --access-key "$AK" --secret-key "$SK" --session-token "$TOK" --bucket rel
E2=(--endpoint-url "$FAKE_S3_URL")
run "$w/tok" env AWS_SESSION_TOKEN="$TOK" "$L" -v "$w/in/a" -o s3://rel/t1 "${E2[@]}"
if [ "$RC" -eq 0 ] && ! grep -qF "$TOK" "$w/tok.err"; then
	ok "a session token is sent, signed and accepted"
else
	not_ok "a session token is sent, signed and accepted" "exit $RC" "$(first_lines 5 "$w/tok.err")"
fi
fail_case "no session token where one is needed" InvalidToken "$L" "$w/in/a" -o s3://rel/t2 "${E2[@]}"
fake_s3_faults '{"expire_token": true}'
fail_case "an expired session token" ExpiredToken \
	env AWS_SESSION_TOKEN="$TOK" "$L" "$w/in/a" -o s3://rel/t3 "${E2[@]}"
fake_s3_faults '{}'

# ---- usage: settings checked before any work ----
run "$w/u1" "$L" "$w/in/a" -o s3://Bad_Bucket/x "${E[@]}"
run "$w/u2" env -u AWS_ACCESS_KEY_ID -u AWS_SECRET_ACCESS_KEY "$L" "$w/in/a" -o s3://rel/x "${E[@]}"
if [ "$RC" -eq 2 ] && grep -q "credentials" "$w/u2.err" && [ "$(cat "$w/u1.err" | wc -l)" -ge 1 ]; then
	ok "no credentials anywhere: exit 2, says where it looked"
else
	not_ok "no credentials anywhere: exit 2" "exit $RC" "$(first_lines 5 "$w/u2.err")"
fi
