#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Proves tests/tools/fake_s3.py against real clients: Debian's awscli
# (/usr/bin/aws, botocore's own signer) and curl's --aws-sigv4. Prints
# "ok - WHAT" / "not ok - WHAT" (with "# " lines saying why); exit 1 if any
# check failed. FAKE_S3_KEEP=1 keeps the temporary directory (servers'
# stderr and --log files) and prints its name. Needs /usr/bin/python3 with python3-botocore, /usr/bin/aws, curl.
set -u
here=$(cd "$(dirname "$0")" && pwd)
PY=/usr/bin/python3
AWS=/usr/bin/aws
AK=AKIDSELFTEST SK=selftest-secret TOK=selftest-session-token
IAK=ASIAIMDSROLE ISK=imds-secret ITOK=imds-session-token

failed=0
ok() { echo "ok - $*"; }
not_ok() {
	echo "not ok - $*"
	failed=1
}
diag() { printf '%s\n' "$@" | sed 's/^/# /'; }
# expect WHAT STATUS: "ok" when STATUS is 0, else "not ok" with $out as diag.
expect() {
	if [ "$2" -eq 0 ]; then ok "$1"; else
		not_ok "$1"
		diag "$out"
	fi
}

tmp=$(mktemp -d)
pids=()
cleanup() {
	local pid
	for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null; done
	if [ -n "${FAKE_S3_KEEP:-}" ]; then echo "# kept $tmp"; else rm -rf "$tmp"; fi
}
trap cleanup EXIT

# start NAME ARGS...: a server in $tmp/NAME; sets port and base.
start() {
	local name=$1
	shift
	mkdir -p "$tmp/$name"
	rm -f "$tmp/$name/port"
	"$PY" "$here/fake_s3.py" --port-file "$tmp/$name/port" \
		--log "$tmp/$name/log.jsonl" "$@" 2>"$tmp/$name/stderr" &
	pids+=($!)
	server_pid=$!
	local i
	for i in $(seq 100); do
		[ -s "$tmp/$name/port" ] && break
		sleep 0.1
	done
	port=$(cat "$tmp/$name/port" 2>/dev/null)
	base=http://127.0.0.1:$port
}

# The AWS CLI, isolated from any configuration and credentials of this machine.
awscli() {
	env -i PATH=/usr/bin:/bin HOME="$tmp" AWS_CONFIG_FILE=/dev/null \
		AWS_SHARED_CREDENTIALS_FILE=/dev/null AWS_EC2_METADATA_DISABLED=true \
		AWS_DEFAULT_REGION=us-east-1 AWS_ACCESS_KEY_ID="$AK" \
		AWS_SECRET_ACCESS_KEY="$SK" ${AWS_ENV:-} \
		"$AWS" --endpoint-url "$base" "$@"
}
# curl_s3 CREDS SHA ARGS...: curl signing with SigV4 as creds AK:SK.
curl_s3() {
	local creds=$1 sha=$2
	shift 2
	curl -sS --aws-sigv4 "aws:amz:us-east-1:s3" --user "$creds" \
		-H "x-amz-content-sha256: $sha" "$@"
}
faults() { curl -sS -X POST --data "$1" "$base/_control/faults" >/dev/null; }
clear_log() { curl -sS -X POST "$base/_control/log/clear" >/dev/null; }
# log_statuses [METHOD]: the statuses logged so far, space-separated.
log_statuses() {
	curl -sS "$base/_control/log" | "$PY" -c '
import json, sys
print(" ".join(str(r["status"]) for r in json.load(sys.stdin)
               if len(sys.argv) < 2 or r["method"] == sys.argv[1]))' "$@"
}
sha_of() { sha256sum "$1" | cut -d' ' -f1; }
EMPTY_SHA=$(sha256sum </dev/null | cut -d' ' -f1)

head -c 2097152 /dev/urandom >"$tmp/big" # > 1 MiB: awscli sends Expect
head -c 3000 /dev/urandom >"$tmp/small"  # > 1 KiB: curl sends Expect

# ------------------------------------------------ server A: plain keys
start a --access-key "$AK" --secret-key "$SK" --bucket bkt
[ -n "$port" ] && ok "server writes its port file" || not_ok "server writes its port file"

out=$(awscli s3api put-object --bucket bkt --key 'dir/big one+x~y.bin' \
	--body "$tmp/big" --content-type application/x-lidia \
	--metadata build-id=abc123,gnu-build-id=0f0e 2>&1)
expect "aws s3api put-object (2 MiB, key with space, + and ~)" $?
out=$(awscli s3api head-object --bucket bkt --key 'dir/big one+x~y.bin' 2>&1)
grep -q '"build-id": "abc123"' <<<"$out" && grep -q '"ContentLength": 2097152' <<<"$out" &&
	grep -q application/x-lidia <<<"$out"
expect "aws s3api head-object returns size, type and metadata" $?
out=$(awscli s3api get-object --bucket bkt --key 'dir/big one+x~y.bin' "$tmp/got" 2>&1) &&
	cmp "$tmp/big" "$tmp/got" 2>&1
expect "aws s3api get-object returns the same bytes" $?
out=$(curl -sS "$base/_control/object/bkt/dir/big%20one%2Bx~y.bin" | cmp - "$tmp/big" 2>&1)
expect "control API returns the same bytes" $?
out=$(curl -sS "$base/_control/log" | "$PY" -c '
import json, sys
put = [r for r in json.load(sys.stdin) if r["method"] == "PUT"][0]
assert put["expect"] == "100-continue", put
assert put["bytes_in"] == 2097152 and put["path_canonical"], put' 2>&1)
expect "awscli PUT went through Expect: 100-continue, canonical path" $?
out=$(awscli s3 ls s3://bkt/dir/ 2>&1) && grep -q ' 2097152 big one+x~y.bin$' <<<"$out"
expect "aws s3 ls lists the key" $?
out=$(awscli s3 ls s3://bkt/ 2>&1) && grep -q 'PRE dir/' <<<"$out"
expect "aws s3 ls shows the common prefix" $?
out=$(awscli s3api head-object --bucket bkt --key missing 2>&1)
[ $? -ne 0 ] && grep -q '404' <<<"$out"
expect "aws s3api head-object of a missing key: 404" $?
out=$(curl -sS -o /dev/null -w '%{http_code}\n' -X PUT --data-binary @"$tmp/small" \
	-H 'x-amz-meta-origin: other-tool' "$base/_control/object/newbkt/pre/made" &&
	awscli s3api head-object --bucket newbkt --key pre/made 2>&1)
grep -q '"origin": "other-tool"' <<<"$out"
expect "control PUT stores an object that S3 then serves with its metadata" $?
out=$(curl -sS "$base/_control/meta/newbkt/pre/made" | "$PY" -c '
import json, sys
m = json.load(sys.stdin)
assert m == {"x-amz-meta-origin": "other-tool"}, m' 2>&1)
expect "control meta gives the metadata headers" $?
out=$(curl -sS -X DELETE "$base/_control/object/newbkt/pre/made" >/dev/null &&
	curl -sS -o /dev/null -w '%{http_code}' "$base/_control/object/newbkt/pre/made")
[ "$out" = 404 ]
expect "control DELETE removes it" $?

out=$(AWS_ENV="AWS_SECRET_ACCESS_KEY=wrong" awscli s3api put-object \
	--bucket bkt --key k --body "$tmp/small" 2>&1)
[ $? -ne 0 ] && grep -q SignatureDoesNotMatch <<<"$out" && grep -qi 'canonical request' <<<"$out"
expect "a wrong secret key: awscli fails with SignatureDoesNotMatch (canonical request shown)" $?
out=$(AWS_ENV="AWS_ACCESS_KEY_ID=AKIDNOBODY" awscli s3api head-object \
	--bucket bkt --key pre 2>&1)
[ $? -ne 0 ] && grep -q 403 <<<"$out"
expect "an unknown access key: 403" $?
out=$(awscli s3api put-object --bucket nobucket --key k --body "$tmp/small" 2>&1)
[ $? -ne 0 ] && grep -q NoSuchBucket <<<"$out"
expect "a missing bucket: NoSuchBucket" $?

# Faults: awscli (standard retry mode, 3 attempts) must retry 503s.
clear_log
faults '{"slowdown": 2, "retry_after": 1}'
out=$(awscli s3api put-object --bucket bkt --key retried --body "$tmp/small" 2>&1)
expect "awscli retries two 503 SlowDown and succeeds" $?
out=$(log_statuses PUT)
[ "$out" = "503 503 200" ]
expect "the log shows 503 503 200 for that PUT" $?
out=$(curl -sS -D - -o /dev/null -X POST --data '{"slowdown": 1, "retry_after": 7}' \
	"$base/_control/faults" && curl_s3 "$AK:$SK" "$EMPTY_SHA" -D - "$base/bkt/retried" 2>&1)
grep -q '^HTTP/1.1 503' <<<"$out" && grep -qi '^Retry-After: 7' <<<"$out" &&
	grep -q '<Code>SlowDown</Code>' <<<"$out"
expect "slowdown: 503 SlowDown with Retry-After" $?
faults '{"status_429": 1, "internal_error": 1}'
out=$(curl_s3 "$AK:$SK" "$EMPTY_SHA" "$base/bkt/retried"; curl_s3 "$AK:$SK" "$EMPTY_SHA" "$base/bkt/retried")
grep -q TooManyRequests <<<"$out" && grep -q InternalError <<<"$out"
expect "status_429 then internal_error faults" $?
faults '{"deny": true}'
out=$(curl_s3 "$AK:$SK" "$EMPTY_SHA" "$base/bkt/retried")
grep -q AccessDenied <<<"$out"
expect "deny fault: AccessDenied" $?
faults '{"deny_put": 1}'
out=$(curl_s3 "$AK:$SK" "$(sha_of "$tmp/small")" -T "$tmp/small" -w '%{http_code}' "$base/bkt/denied" 2>&1)
grep -q 'AccessDenied.*403$' <<<"$out" && ! curl -sf -o /dev/null "$base/_control/object/bkt/denied" &&
	curl -sS "$base/_control/log" | "$PY" -c '
import json, sys
r = json.load(sys.stdin)[-1]
assert r["code"] == "AccessDenied" and r["bytes_in"] == 3000, r'
expect "deny_put: a PUT's body read whole, then 403 AccessDenied, nothing stored" $?
faults '{"reset_put": 1}'
out=$(curl_s3 "$AK:$SK" "$(sha_of "$tmp/small")" -T "$tmp/small" "$base/bkt/reset" 2>&1)
rc=$?
grep -qi 'reset' <<<"$out"
expect "reset_put: curl sees the connection reset (exit $rc)" $?
faults '{"stall": 1, "stall_seconds": 5}'
out=$(curl_s3 "$AK:$SK" "$EMPTY_SHA" --max-time 1 "$base/bkt/retried" 2>&1)
[ $? -eq 28 ]
expect "stall: curl --max-time 1 times out" $?
faults '{}'
out=$(curl_s3 "$AK:$SK" "$EMPTY_SHA" "$base/bkt/retried" | cmp - "$tmp/small" 2>&1)
expect "after the faults the server answers normally (GET via curl)" $?

# curl --aws-sigv4 (7.88 signs no payload hash of its own for -T: we give it).
sha=$(sha_of "$tmp/small")
out=$(curl_s3 "$AK:$SK" "$sha" -H 'x-amz-meta-build-id: c0ffee' -H 'Content-Type: application/x-lidia' \
	-T "$tmp/small" -w '%{http_code}' "$base/bkt/curl/a%20b%2Bc~d" 2>&1)
[ "$out" = 200 ] && curl -sS "$base/_control/object/bkt/curl/a%20b%2Bc~d" | cmp - "$tmp/small"
expect "curl --aws-sigv4 -T with x-amz-content-sha256 (key 'a b+c~d') is accepted" $?
out=$(curl -sS "$base/_control/log" | "$PY" -c '
import json, sys
r = json.load(sys.stdin)[-1]
assert r["expect"] == "100-continue" and r["bytes_in"] == 3000, r' 2>&1)
expect "curl's 3000-byte PUT went through Expect: 100-continue" $?
out=$(curl_s3 "$AK:$SK" "$EMPTY_SHA" -o /dev/null -o /dev/null -w '%{http_code} %{num_connects}\n' \
	"$base/bkt/nothing" "$base/bkt/curl/a%20b%2Bc~d" 2>&1)
[ "$out" = $'404 1\n200 0' ]
expect "keep-alive: a 404 then a 200 on one connection" $?
out=$(awscli s3api head-object --bucket bkt --key 'curl/a b+c~d' 2>&1)
grep -q '"build-id": "c0ffee"' <<<"$out"
expect "curl's x-amz-meta-* header was signed and stored" $?
out=$(curl_s3 "$AK:$SK" "$EMPTY_SHA" -T "$tmp/small" "$base/bkt/curl/bad" 2>&1)
grep -q XAmzContentSHA256Mismatch <<<"$out"
expect "curl with a wrong x-amz-content-sha256: XAmzContentSHA256Mismatch" $?
out=$(curl -sS --aws-sigv4 "aws:amz:us-east-1:s3" --user "$AK:$SK" -T "$tmp/small" "$base/bkt/curl/nosha" 2>&1)
grep -q 'x-amz-content-sha256' <<<"$out"
expect "curl without x-amz-content-sha256: refused" $?
out=$(curl_s3 "$AK:$SK" "$sha" -H "Content-MD5: 1B2M2Y8AsgTpgAmY7PhCfg==" -T "$tmp/small" "$base/bkt/curl/md5" 2>&1)
grep -q BadDigest <<<"$out"
expect "a wrong Content-MD5: BadDigest" $?
out=$(curl -sS --aws-sigv4 "aws:amz:eu-west-1:s3" --user "$AK:$SK" -H "x-amz-content-sha256: $EMPTY_SHA" "$base/bkt/x" 2>&1)
grep -q AuthorizationHeaderMalformed <<<"$out"
expect "another region in the scope: AuthorizationHeaderMalformed" $?
out=$(curl_s3 "$AK:$SK" "$EMPTY_SHA" -H 'x-amz-date: 20200101T000000Z' "$base/bkt/x" 2>&1)
grep -q RequestTimeTooSkewed <<<"$out"
expect "an old x-amz-date: RequestTimeTooSkewed" $?
out=$(curl_s3 "$AK:$SK" "$EMPTY_SHA" -I "$base/bkt/nothing" 2>&1)
grep -q '^HTTP/1.1 404' <<<"$out" && grep -qi '^x-amz-error-code: NoSuchKey' <<<"$out" &&
	grep -qi '^Content-Length: 0' <<<"$out"
expect "HEAD of a missing key: 404, x-amz-error-code, no body" $?
out=$(curl_s3 "$AK:$SK" "$EMPTY_SHA" "$base/bkt?list-type=2&prefix=curl/" 2>&1)
grep -q '<Key>curl/a b+c~d</Key>' <<<"$out"
expect "curl ListObjectsV2 lists the key" $?

kill -TERM "$server_pid"
wait "$server_pid"
rc=$?
[ $rc -eq 0 ] && ok "SIGTERM: the server exits with status 0" ||
	not_ok "SIGTERM: the server exits with status 0 (got $rc)"
out=$(wc -l <"$tmp/a/log.jsonl")
[ "$out" -gt 20 ] && ok "--log has a JSON line per request ($out)" || not_ok "--log lines: $out"

# ------------------------------------------------ server B: session token + IMDS
start b --access-key "$AK" --secret-key "$SK" --session-token "$TOK" --bucket bkt \
	--imds-role lidia-role --imds-access-key "$IAK" --imds-secret-key "$ISK" --imds-token "$ITOK"
out=$(awscli s3api put-object --bucket bkt --key t --body "$tmp/small" 2>&1)
[ $? -ne 0 ] && grep -q InvalidToken <<<"$out"
expect "token required: awscli without AWS_SESSION_TOKEN fails with InvalidToken" $?
out=$(AWS_ENV="AWS_SESSION_TOKEN=$TOK" awscli s3api put-object --bucket bkt --key t --body "$tmp/small" 2>&1)
expect "token accepted: awscli with AWS_SESSION_TOKEN succeeds" $?
out=$(AWS_ENV="AWS_SESSION_TOKEN=other" awscli s3api head-object --bucket bkt --key t 2>&1)
[ $? -ne 0 ] && grep -q 403 <<<"$out"
expect "a wrong token: 403" $?
faults '{"expire_token": true}'
out=$(AWS_ENV="AWS_SESSION_TOKEN=$TOK" awscli s3api put-object --bucket bkt --key t --body "$tmp/small" 2>&1)
[ $? -ne 0 ] && grep -q ExpiredToken <<<"$out"
expect "expire_token fault: awscli fails with ExpiredToken" $?
faults '{}'
out=$(curl_s3 "$AK:$SK" "$sha" -H "x-amz-security-token: $TOK" -T "$tmp/small" -w '%{http_code}' "$base/bkt/tok" 2>&1)
[ "$out" = 200 ]
expect "curl --aws-sigv4 with x-amz-security-token is accepted" $?
out=$(curl_s3 "$AK:$SK" "$sha" -T "$tmp/small" "$base/bkt/tok" 2>&1)
grep -q InvalidToken <<<"$out"
expect "curl without the token: InvalidToken" $?
out=$(curl -sS "$base/_control/log" | "$PY" -c '
import json, sys
r = [r for r in json.load(sys.stdin) if r.get("path") == "/bkt/tok"][0]
assert "x-amz-security-token" in r["signed_headers"], r
assert "x-amz-content-sha256" in r["signed_headers"], r' 2>&1)
expect "curl signed x-amz-security-token and x-amz-content-sha256" $?

# IMDSv2 with curl, then its credentials on S3.
out=$(curl -sS -o /dev/null -w '%{http_code}' "$base/latest/api/token")
[ "$out" = 405 ]
expect "IMDS: GET /latest/api/token is 405" $?
out=$(curl -sS -o /dev/null -w '%{http_code}' -X PUT "$base/latest/api/token")
[ "$out" = 400 ]
expect "IMDS: a token PUT without a TTL is refused" $?
itok=$(curl -sS -X PUT -H 'X-aws-ec2-metadata-token-ttl-seconds: 60' "$base/latest/api/token")
[ -n "$itok" ]
out=$itok expect "IMDS: PUT /latest/api/token gives a token" $?
out=$(curl -sS -o /dev/null -w '%{http_code}' "$base/latest/meta-data/iam/security-credentials/")
[ "$out" = 401 ]
expect "IMDS: no token header: 401" $?
role=$(curl -sS -H "X-aws-ec2-metadata-token: $itok" "$base/latest/meta-data/iam/security-credentials/")
[ "$role" = lidia-role ]
out=$role expect "IMDS: the role name" $?
out=$(curl -sS -H "X-aws-ec2-metadata-token: $itok" "$base/latest/meta-data/iam/security-credentials/$role")
"$PY" -c '
import json, sys
c = json.loads(sys.argv[1])
assert c["Code"] == "Success" and c["AccessKeyId"] == "ASIAIMDSROLE", c
assert c["Token"] == "imds-session-token" and c["Expiration"].endswith("Z"), c' "$out"
expect "IMDS: the role's credentials" $?
out=$(curl_s3 "$IAK:$ISK" "$sha" -H "x-amz-security-token: $ITOK" -T "$tmp/small" -w '%{http_code}' "$base/bkt/imds" 2>&1)
[ "$out" = 200 ]
expect "the IMDS credentials are accepted on S3 (curl)" $?
out=$(env -i PATH=/usr/bin:/bin HOME="$tmp" AWS_CONFIG_FILE=/dev/null \
	AWS_SHARED_CREDENTIALS_FILE=/dev/null AWS_DEFAULT_REGION=us-east-1 \
	AWS_EC2_METADATA_SERVICE_ENDPOINT="$base/" \
	"$AWS" --endpoint-url "$base" s3api head-object --bucket bkt --key imds 2>&1)
grep -q '"ContentLength": 3000' <<<"$out"
expect "awscli finds the IMDS credentials itself and S3 accepts them" $?
out=$(curl -sS "$base/_control/log" | "$PY" -c '
import json, sys
log = json.load(sys.stdin)
assert any(r["imds"] and r["status"] == 200 for r in log), log
assert any(not r["imds"] and r["access_key"] == "ASIAIMDSROLE"
           and r["status"] == 200 for r in log), log' 2>&1)
expect "the log has the IMDS requests and the IMDS-signed S3 ones" $?

kill -TERM "$server_pid"
wait "$server_pid"
[ $? -eq 0 ] && ok "SIGTERM: server B exits with status 0" || not_ok "SIGTERM: server B exits"
exit $failed
