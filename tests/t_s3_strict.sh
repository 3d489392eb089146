#!/usr/bin/env bash
# What the S3 client believes, and how long it waits (issue 20): against
# tests/tools/fake_s3.py made to misbehave, a listing answered 200 with an
# <Error>, an HTML page or XML cut short decides nothing (a stronger object
# is not replaced); a PUT answered 200 with an <Error> is no upload; a
# server gone mid-run ends the run in seconds with one line, not a retried
# request per key; a stalled or trickling answer is cut at its deadline; a
# 4,000-character session token is sent whole; the deadlines' options and
# YAML keys are checked.
set -u
. "$(dirname "$0")/lib/common.sh"
. "$TESTS_LIB/fake_s3.sh"

L=$LIDIAGEN
w=$(scratch work)
fake_s3_env "$w"
unset LIDIAGEN_S3_TIMEOUT # the deadlines come from the options here
AK=AKIDLIDIAGENTEST SK='secret/Key+with=chars'
# As long as a web identity's or SSO's token can be, and more.
TOK=$("$S3_PYTHON" -c 'import string; a = string.ascii_letters + string.digits + "/+="; print("".join(a[i * 7 % len(a)] for i in range(4000)))')

mkdir -p "$w/in"
printf 'static inline int sq(int x) { return x * x; }\nint work(int x) { return sq(x) + 1; }\nint main(int c, char **v) { (void)v; return work(c); }\n' >"$w/k.c"
bidA=0x11111111111111111111111111111111
if ! gcc -O2 -g -Wl,--build-id=$bidA -o "$w/in/a" "$w/k.c" 2>"$w/cc.err"; then
	not_ok "s3 strict: the test program builds" "$(cat "$w/cc.err")"
	exit 0
fi
keyA=symbolizer/anonymous/${bidA#0x}

fake_s3_start "$w/srv" --access-key "$AK" --secret-key "$SK" --session-token "$TOK" --bucket rel
export AWS_ACCESS_KEY_ID=$AK AWS_SECRET_ACCESS_KEY=$SK AWS_SESSION_TOKEN=$TOK
E=(--endpoint-url "$FAKE_S3_URL")
# Short deadlines, so that what waits on them ends fast.
D=(--connect-timeout 2 --read-timeout 2)

# seconds_since START: whole seconds since START (date +%s.%N).
seconds_since() { "$S3_PYTHON" -c "import sys, time; print(int(time.time() - float(sys.argv[1])))" "$1"; }

# lines PATTERN FILE: how many lines of FILE match.
lines() { grep -c -e "$1" "$2"; }

# ---- a long session token, sent whole ----
run "$w/tok" "$L" -v "$w/in/a" -o s3://rel/strong "${E[@]}" "${D[@]}"
if [ "$RC" -eq 0 ] && fake_s3_object rel "strong/$keyA" "$w/strong.lidia"; then
	ok "a 4000-character session token is sent whole and accepted"
else
	not_ok "a 4000-character session token is sent whole and accepted" "exit $RC" \
		"$(first_lines 5 "$w/tok.err")"
	exit 0 # every case below starts from that object
fi

# ---- a listing that is not one decides nothing ----
# listing_case BODY: a --symbols-only run over the stronger object while
# the listing answers 200 with BODY: the object stays, exit 1, one line
# naming the endpoint and the request.
listing_case() {
	local body=$1 d=$w/list-$1 what
	mkdir -p "$d"
	fake_s3_ctl PUT "object/rel/$body/$keyA" --data-binary "@$w/strong.lidia" \
		-H "x-amz-meta-lidia-holds: $(fake_s3_meta rel "strong/$keyA" |
			"$S3_PYTHON" -c 'import json, sys; print(json.load(sys.stdin)["x-amz-meta-lidia-holds"])')" \
		>/dev/null
	fake_s3_faults "{\"bad_list\": 5, \"bad_list_body\": \"$body\"}"
	run "$d/run" "$L" --symbols-only "$w/in/a" -o "s3://rel/$body" "${E[@]}" "${D[@]}" \
		--manifest "$d/m.jsonl"
	fake_s3_faults '{}'
	what="a listing answered 200 with $body: nothing replaced, exit 1, one line naming the request"
	if [ "$RC" -eq 1 ] && fake_s3_object rel "$body/$keyA" "$d/got" && cmp -s "$d/got" "$w/strong.lidia" &&
		[ "$(lines "GET $FAKE_S3_URL/rel.*not a ListBucketResult" "$d/run.err")" -eq 1 ] &&
		grep -q '"status":"failed"' "$d/m.jsonl"; then
		ok "$what"
	else
		not_ok "$what" "exit $RC; stored bytes $(cmp -s "$d/got" "$w/strong.lidia" && echo kept || echo replaced)" \
			"$(first_lines 6 "$d/run.err")"
	fi
}
for body in error html truncated; do
	listing_case "$body"
done

# ---- a PUT answered 200 with an <Error> is no upload ----
fake_s3_faults '{"bad_put": 1}'
run "$w/bp" "$L" "$w/in/a" -o s3://rel/badput "${E[@]}" "${D[@]}" --manifest "$w/bp.jsonl"
fake_s3_faults '{}'
if [ "$RC" -eq 1 ] && grep -q '"status":"failed"' "$w/bp.jsonl" && ! grep -q '"status":"uploaded"' "$w/bp.jsonl" &&
	grep -q "PUT $FAKE_S3_URL.*<Error>" "$w/bp.err" && ! fake_s3_object rel "badput/$keyA" "$w/bp.got"; then
	ok "a PUT answered 200 with an <Error> body fails (exit 1, the manifest says failed), naming the endpoint"
else
	not_ok "a PUT answered 200 with an <Error> body fails" "exit $RC" "$(first_lines 5 "$w/bp.err")" \
		"$(cat "$w/bp.jsonl")"
fi

# ---- a server gone mid-run: 50 keys, seconds, one line ----
mkdir -p "$w/tree/symbolizer/anonymous"
for i in $(seq 10 59); do
	cp "$w/strong.lidia" "$w/tree/symbolizer/anonymous/${i}000000000000000000000000000000"
done
fake_s3_clear_log
fake_s3_faults '{"close": 100000}'
t0=$(date +%s.%N)
run "$w/dead" timeout 100 "$L" upload "$w/tree" s3://rel/dead "${E[@]}" "${D[@]}" --manifest "$w/dead.jsonl"
took=$(seconds_since "$t0")
fake_s3_faults '{}'
tries=$(fake_s3_count PUT)
tries=$((tries + $(fake_s3_count HEAD) + $(fake_s3_count GET)))
breaker=$(lines "$FAKE_S3_URL: 3 requests in a row failed to connect or timed out.*the remaining [0-9]* keys were not sent" "$w/dead.err")
errs=$(lines "^lidiagen: " "$w/dead.err")
if [ "$RC" -eq 1 ] && [ "$took" -le 10 ] && [ "$breaker" -eq 1 ] && [ "$tries" -le 12 ] && [ "$errs" -le 5 ] &&
	[ "$(grep -c '"status":"failed"' "$w/dead.jsonl")" -eq 50 ]; then
	ok "a server gone mid-run: 50 keys end in ${took}s, $tries requests, one line for the keys not sent, all failed in the manifest"
else
	not_ok "a server gone mid-run ends in seconds with one line" \
		"exit $RC, ${took}s, $tries requests, $breaker breaker lines, $errs lines" "$(first_lines 8 "$w/dead.err")"
fi

# ---- a server that stalls after its status line: cut at --read-timeout ----
fake_s3_faults '{"stall_body": 100000, "stall_seconds": 60}'
t0=$(date +%s.%N)
run "$w/stall" timeout 100 "$L" upload "$w/tree" s3://rel/stall "${E[@]}" "${D[@]}"
took=$(seconds_since "$t0")
fake_s3_faults '{}'
if [ "$RC" -eq 1 ] && [ "$took" -le 12 ] && [ "$(lines "the remaining [0-9]* keys were not sent" "$w/stall.err")" -eq 1 ] &&
	grep -q "Timeout" "$w/stall.err"; then
	ok "a server that stalls after its status line: cut at --read-timeout 2, the run over in ${took}s"
else
	not_ok "a server that stalls after its status line is cut at --read-timeout" "exit $RC, ${took}s" \
		"$(first_lines 6 "$w/stall.err")"
fi

# ---- a server trickling a byte a second: cut at the whole request's deadline ----
fake_s3_faults '{"trickle": 2}'
t0=$(date +%s.%N)
run "$w/trickle" timeout 100 "$L" "$w/in/a" -o s3://rel/trickle "${E[@]}" --connect-timeout 1 --read-timeout 1
took=$(seconds_since "$t0")
fake_s3_faults '{}'
if [ "$RC" -eq 0 ] && [ "$took" -le 12 ] && fake_s3_object rel "trickle/$keyA" "$w/tr.got"; then
	ok "a listing trickled a byte a second is cut at its deadline (connect + 2 x read): published in ${took}s"
else
	not_ok "a trickled listing is cut at its deadline" "exit $RC, ${took}s" "$(first_lines 6 "$w/trickle.err")"
fi

# ---- the deadlines' options and YAML keys ----
bad=""
for args in "--read-timeout 0" "--connect-timeout x" "--read-timeout 3601" "--connect-timeout -1"; do
	# shellcheck disable=SC2086
	run "$w/opt" "$L" "$w/in/a" -o s3://rel/opt "${E[@]}" $args
	[ "$RC" -eq 2 ] && grep -q -e "${args%% *}" "$w/opt.err" || bad="$bad [$args: exit $RC]"
	# shellcheck disable=SC2086
	run "$w/opt" "$L" upload "$w/tree" s3://rel/opt "${E[@]}" $args
	[ "$RC" -eq 2 ] && grep -q -e "${args%% *}" "$w/opt.err" || bad="$bad [upload $args: exit $RC]"
done
printf 'read-timeout: 0\n' >"$w/bad.yaml"
run "$w/opt" "$L" --config "$w/bad.yaml" "$w/in/a" -o s3://rel/opt "${E[@]}"
[ "$RC" -eq 2 ] && grep -q "read-timeout" "$w/opt.err" || bad="$bad [yaml read-timeout: 0: exit $RC]"
printf 'connect-timeout: 3\nread-timeout: 4\n' >"$w/good.yaml"
run "$w/opt" "$L" --config "$w/good.yaml" "$w/in/a" -o s3://rel/opt "${E[@]}"
[ "$RC" -eq 0 ] || bad="$bad [yaml good: exit $RC $(head -c 300 "$w/opt.err")]"
if [ -z "$bad" ]; then
	ok "--connect-timeout and --read-timeout (and their YAML keys): 1 to 3600 seconds, else a usage error"
else
	not_ok "--connect-timeout and --read-timeout are checked" "$bad"
fi
