#!/usr/bin/env bash
# The credentials chain's temporary sources (cmd/lidiagen/publish/s3/
# aws_credentials.c, sts.c), each publishing one small ELF to
# tests/tools/fake_s3.py, which also plays STS and the container agent on
# 127.0.0.1 and accepts the credentials it issued until they expire: a web
# identity (AWS_WEB_IDENTITY_TOKEN_FILE + AWS_ROLE_ARN, or the profile's
# keys) through AssumeRoleWithWebIdentity; STS's refusal said with its
# code; the chain's order when several sources are set. No secret is ever
# printed, and nothing reaches a metadata address.
set -u
. "$(dirname "$0")/lib/common.sh"
. "$TESTS_LIB/fake_s3.sh"

L=$LIDIAGEN
w=$(scratch work)
fake_s3_env "$w"
ARN=arn:aws:iam::123456789012:role/ci-publisher JWT=eyJhbGciOi.eyJzdWIiOiJjaSJ9.c2lnbmF0dXJl

mkdir -p "$w/in"
printf 'int main(void) { return 0; }\n' >"$w/m.c"
bid=0x44444444444444444444444444444444
if ! gcc -O2 -g -Wl,--build-id=$bid -o "$w/in/m" "$w/m.c" 2>"$w/cc.err"; then
	not_ok "creds: the test program builds" "$(cat "$w/cc.err")"
	exit 0
fi
key=symbolizer/anonymous/${bid#0x}

fake_s3_start "$w/srv" --access-key AKIDSTATICKEY0001 --secret-key static-secret --bucket rel \
	--region us-east-1 --web-identity-token "$JWT" --role-arn "$ARN" --container-token 'Bearer c0nt41ner'
E=(--endpoint-url "$FAKE_S3_URL")
printf '%s\n' "$JWT" >"$w/token"
unset AWS_ACCESS_KEY_ID AWS_SECRET_ACCESS_KEY

# srv_log FIELD=VALUE...: how many logged requests have those fields (JSON values).
srv_log() {
	fake_s3_ctl GET log | "$S3_PYTHON" -c '
import json, sys
want = [a.split("=", 1) for a in sys.argv[1:]]
print(sum(1 for r in json.load(sys.stdin) if all(json.dumps(r.get(k)) == v for k, v in want)))
' "$@"
}

# published NAME PREFIX: the run NAME exited 0 and the object is under PREFIX.
published() {
	[ "$RC" -eq 0 ] && fake_s3_object rel "$2/$key" "$w/got" && [ -s "$w/got" ]
}

# ---- web identity from the environment ----
fake_s3_clear_log
run "$w/wi" env AWS_WEB_IDENTITY_TOKEN_FILE="$w/token" AWS_ROLE_ARN="$ARN" \
	AWS_ENDPOINT_URL_STS="$FAKE_S3_URL/_sts" "$L" -v -r "$w/in" -o s3://rel/wi "${E[@]}"
if published wi wi && grep -q "credentials: web identity (role $ARN" "$w/wi.err" &&
	[ "$(srv_log creds='"sts"' action='"AssumeRoleWithWebIdentity"' status=200 signed=false)" = 1 ] &&
	[ "$(srv_log method='"PUT"' access_key='"ASIAFAKEWITH00000001"')" -ge 1 ] &&
	! grep -qF "$JWT" "$w/wi.err" "$w/wi.out"; then
	ok "web identity (AWS_WEB_IDENTITY_TOKEN_FILE, AWS_ROLE_ARN): one unsigned AssumeRoleWithWebIdentity, the object PUT with the issued keys, -v names the source, no token printed"
else
	not_ok "web identity from the environment" "exit $RC" "$(first_lines 8 "$w/wi.err")" \
		"$(fake_s3_ctl GET log | head -c 1500)"
fi

# ---- web identity from the profile, STS's endpoint from its "sts =" block ----
cat >"$w/config" <<EOC
[profile irsa]
region = us-east-1
role_arn = $ARN
web_identity_token_file = $w/token
role_session_name = from-profile
sts =
  endpoint_url = $FAKE_S3_URL/_sts
EOC
fake_s3_clear_log
run "$w/wip" env AWS_CONFIG_FILE="$w/config" AWS_PROFILE=irsa "$L" -v -r "$w/in" -o s3://rel/wip "${E[@]}"
if published wip wip && grep -q "credentials: web identity" "$w/wip.err" &&
	[ "$(srv_log action='"AssumeRoleWithWebIdentity"' status=200 session_name='"from-profile"')" = 1 ]; then
	ok "web identity from the profile (role_arn, web_identity_token_file, role_session_name, sts = endpoint_url)"
else
	not_ok "web identity from the profile" "exit $RC" "$(first_lines 8 "$w/wip.err")"
fi

# ---- STS refuses: its code and message said, nothing else tried ----
printf 'not-the-token\n' >"$w/badtoken"
fake_s3_clear_log
run "$w/wibad" env AWS_WEB_IDENTITY_TOKEN_FILE="$w/badtoken" AWS_ROLE_ARN="$ARN" \
	AWS_ENDPOINT_URL_STS="$FAKE_S3_URL/_sts" "$L" -r "$w/in" -o s3://rel/wibad "${E[@]}"
if [ "$RC" -ne 0 ] && grep -q "web identity: AssumeRoleWithWebIdentity returned AccessDenied: " "$w/wibad.err" &&
	! grep -q "not-the-token" "$w/wibad.err" && [ "$(fake_s3_count PUT)" = 0 ]; then
	ok "web identity refused: 'web identity: AssumeRoleWithWebIdentity returned AccessDenied: ...', no PUT, no token printed"
else
	not_ok "web identity refused" "exit $RC" "$(first_lines 5 "$w/wibad.err")"
fi

# ---- a token file but no role ----
run "$w/wirole" env AWS_WEB_IDENTITY_TOKEN_FILE="$w/token" AWS_ENDPOINT_URL_STS="$FAKE_S3_URL/_sts" \
	"$L" -r "$w/in" -o s3://rel/x "${E[@]}"
if [ "$RC" -ne 0 ] && grep -q "AWS_ROLE_ARN" "$w/wirole.err"; then
	ok "web identity without a role: said so (AWS_ROLE_ARN)"
else
	not_ok "web identity without a role" "exit $RC" "$(first_lines 5 "$w/wirole.err")"
fi

# ---- the order: the environment's keys before a web identity; a web identity before the profile's keys ----
printf '[default]\naws_access_key_id = AKIDSTATICKEY0001\naws_secret_access_key = static-secret\n' >"$w/credentials"
run "$w/ord1" env AWS_ACCESS_KEY_ID=AKIDSTATICKEY0001 AWS_SECRET_ACCESS_KEY=static-secret \
	AWS_WEB_IDENTITY_TOKEN_FILE="$w/token" AWS_ROLE_ARN="$ARN" AWS_ENDPOINT_URL_STS="$FAKE_S3_URL/_sts" \
	"$L" -v -r "$w/in" -o s3://rel/ord1 "${E[@]}"
r1=$RC
run "$w/ord2" env AWS_SHARED_CREDENTIALS_FILE="$w/credentials" \
	AWS_WEB_IDENTITY_TOKEN_FILE="$w/token" AWS_ROLE_ARN="$ARN" AWS_ENDPOINT_URL_STS="$FAKE_S3_URL/_sts" \
	"$L" -v -r "$w/in" -o s3://rel/ord2 "${E[@]}"
if [ "$r1" -eq 0 ] && grep -q "credentials: environment" "$w/ord1.err" &&
	[ "$RC" -eq 0 ] && grep -q "credentials: web identity" "$w/ord2.err"; then
	ok "chain order: the environment's keys before a web identity, a web identity before the credentials file"
else
	not_ok "chain order (environment, web identity, credentials file)" "exits $r1 $RC" \
		"$(first_lines 4 "$w/ord1.err")" "$(first_lines 4 "$w/ord2.err")"
fi

# ---- container credentials (ECS, EKS Pod Identity) ----
CU=$FAKE_S3_URL/_container/creds
fake_s3_clear_log
run "$w/ct" env AWS_CONTAINER_CREDENTIALS_FULL_URI="$CU" AWS_CONTAINER_AUTHORIZATION_TOKEN='Bearer c0nt41ner' \
	"$L" -v -r "$w/in" -o s3://rel/ct "${E[@]}"
if published ct ct && grep -q "credentials: container ($CU)" "$w/ct.err" &&
	[ "$(srv_log creds='"container"' status=200)" = 1 ] && ! grep -q c0nt41ner "$w/ct.err"; then
	ok "container credentials (AWS_CONTAINER_CREDENTIALS_FULL_URI on the loopback, AWS_CONTAINER_AUTHORIZATION_TOKEN): published with the issued keys"
else
	not_ok "container credentials from the full URI and token" "exit $RC" "$(first_lines 8 "$w/ct.err")"
fi
printf 'Bearer c0nt41ner\n' >"$w/ctok"
run "$w/ctf" env AWS_CONTAINER_CREDENTIALS_FULL_URI="$CU" AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE="$w/ctok" \
	AWS_CONTAINER_AUTHORIZATION_TOKEN=wrong "$L" -v -r "$w/in" -o s3://rel/ctf "${E[@]}"
if published ctf ctf && grep -q "credentials: container" "$w/ctf.err"; then
	ok "container credentials: AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE (EKS Pod Identity's) before AWS_CONTAINER_AUTHORIZATION_TOKEN"
else
	not_ok "container credentials from the token file" "exit $RC" "$(first_lines 8 "$w/ctf.err")"
fi
run "$w/ctbad" env AWS_CONTAINER_CREDENTIALS_FULL_URI="$CU" AWS_CONTAINER_AUTHORIZATION_TOKEN=wrong \
	"$L" -r "$w/in" -o s3://rel/ctbad "${E[@]}"
if [ "$RC" -ne 0 ] && grep -q "container credentials: $CU: HTTP 401" "$w/ctbad.err" && ! grep -q wrong "$w/ctbad.err"; then
	ok "container credentials refused: the URL and HTTP 401 said, not the token"
else
	not_ok "container credentials refused" "exit $RC" "$(first_lines 5 "$w/ctbad.err")"
fi
fake_s3_clear_log
run "$w/cthost" env AWS_CONTAINER_CREDENTIALS_FULL_URI=http://192.0.2.1:9/creds AWS_CONTAINER_AUTHORIZATION_TOKEN=x \
	"$L" -r "$w/in" -o s3://rel/cthost "${E[@]}"
if [ "$RC" -ne 0 ] && grep -q "AWS_CONTAINER_CREDENTIALS_FULL_URI: plain http only to the loopback" "$w/cthost.err"; then
	ok "container credentials: a plain http full URI to another host is refused before any request"
else
	not_ok "container credentials: plain http elsewhere refused" "exit $RC" "$(first_lines 5 "$w/cthost.err")"
fi

# ---- the order: a web identity, then the config file's keys, before the container ----
printf '[default]\naws_access_key_id = AKIDSTATICKEY0001\naws_secret_access_key = static-secret\n' >"$w/config-keys"
run "$w/ord3" env AWS_CONTAINER_CREDENTIALS_FULL_URI="$CU" AWS_CONTAINER_AUTHORIZATION_TOKEN='Bearer c0nt41ner' \
	AWS_WEB_IDENTITY_TOKEN_FILE="$w/token" AWS_ROLE_ARN="$ARN" AWS_ENDPOINT_URL_STS="$FAKE_S3_URL/_sts" \
	"$L" -v -r "$w/in" -o s3://rel/ord3 "${E[@]}"
r3=$RC
run "$w/ord4" env AWS_CONTAINER_CREDENTIALS_FULL_URI="$CU" AWS_CONTAINER_AUTHORIZATION_TOKEN='Bearer c0nt41ner' \
	AWS_CONFIG_FILE="$w/config-keys" "$L" -v -r "$w/in" -o s3://rel/ord4 "${E[@]}"
if [ "$r3" -eq 0 ] && grep -q "credentials: web identity" "$w/ord3.err" &&
	[ "$RC" -eq 0 ] && grep -q "credentials: profile default in $w/config-keys" "$w/ord4.err"; then
	ok "chain order: a web identity, then the config file's keys, before the container's agent"
else
	not_ok "chain order (web identity, config file, container)" "exits $r3 $RC" \
		"$(first_lines 4 "$w/ord3.err")" "$(first_lines 4 "$w/ord4.err")"
fi

# ---- credential_process: split as the AWS CLI splits (shlex), no shell, stderr the user's ----
mkdir -p "$w/proc dir"
cat >"$w/proc dir/creds.sh" <<'EOS'
#!/bin/sh
[ "$1" = "arg with 'quotes'" ] && [ "$2" = 'plain\x' ] && [ "$#" = 2 ] || { echo "bad args: $*" >&2; exit 9; }
echo "helper: logged in" >&2
printf '{"Version": 1, "AccessKeyId": "AKIDSTATICKEY0001", "SecretAccessKey": "static-secret", "Expiration": "2099-01-01T00:00:00Z"}\n'
EOS
printf '#!/bin/sh\necho "helper: no login" >&2\nexit 3\n' >"$w/fail.sh"
printf '#!/bin/sh\nexec sleep 30\n' >"$w/slow.sh"
chmod +x "$w/proc dir/creds.sh" "$w/fail.sh" "$w/slow.sh"
cat >"$w/config-proc" <<EOC
[profile proc]
credential_process = "$w/proc dir/creds.sh" "arg with 'quotes'" plain\\\\x
[profile fail]
credential_process = $w/fail.sh --secret-arg s3cr3t
[profile slow]
credential_process = $w/slow.sh
[profile both]
credential_process = $w/fail.sh
aws_access_key_id = AKIDSTATICKEY0001
aws_secret_access_key = static-secret
EOC
run "$w/pr" env AWS_CONFIG_FILE="$w/config-proc" AWS_PROFILE=proc "$L" -v -r "$w/in" -o s3://rel/pr "${E[@]}"
if published pr pr && grep -q "credentials: credential_process (profile proc)" "$w/pr.err" &&
	grep -q "helper: logged in" "$w/pr.err"; then
	ok "credential_process: quoted words split as shlex does, run without a shell, its stderr passed through, published with its keys"
else
	not_ok "credential_process" "exit $RC" "$(first_lines 8 "$w/pr.err")"
fi
run "$w/prf" env AWS_CONFIG_FILE="$w/config-proc" AWS_PROFILE=fail "$L" -r "$w/in" -o s3://rel/prf "${E[@]}"
if [ "$RC" -ne 0 ] && grep -q "credential_process of profile 'fail': '$w/fail.sh ...' exited with status 3" "$w/prf.err" &&
	grep -q "helper: no login" "$w/prf.err" && ! grep -q s3cr3t "$w/prf.err"; then
	ok "credential_process failing: what ran (not its arguments) and its exit status said, its stderr shown"
else
	not_ok "credential_process failing" "exit $RC" "$(first_lines 5 "$w/prf.err")"
fi
t0=$(date +%s)
run "$w/prs" env AWS_CONFIG_FILE="$w/config-proc" AWS_PROFILE=slow LIDIAGEN_CREDENTIAL_PROCESS_TIMEOUT=1 \
	"$L" -r "$w/in" -o s3://rel/prs "${E[@]}"
t1=$(date +%s)
if [ "$RC" -ne 0 ] && grep -q "gave no answer within 1 s: killed" "$w/prs.err" && [ $((t1 - t0)) -lt 10 ]; then
	ok "credential_process hanging: killed after LIDIAGEN_CREDENTIAL_PROCESS_TIMEOUT, said so"
else
	not_ok "credential_process hanging" "exit $RC after $((t1 - t0)) s" "$(first_lines 5 "$w/prs.err")"
fi
run "$w/prb" env AWS_CONFIG_FILE="$w/config-proc" AWS_PROFILE=both "$L" -r "$w/in" -o s3://rel/prb "${E[@]}"
r5=$RC
printf '[proc]\naws_access_key_id = AKIDSTATICKEY0001\naws_secret_access_key = static-secret\n' >"$w/cred-proc"
run "$w/prc" env AWS_CONFIG_FILE="$w/config-proc" AWS_SHARED_CREDENTIALS_FILE="$w/cred-proc" AWS_PROFILE=proc \
	"$L" -v -r "$w/in" -o s3://rel/prc "${E[@]}"
if [ "$r5" -ne 0 ] && grep -q "exited with status 3" "$w/prb.err" &&
	[ "$RC" -eq 0 ] && grep -q "credentials: profile proc in $w/cred-proc" "$w/prc.err" && ! grep -q "helper:" "$w/prc.err"; then
	ok "chain order: the credentials file's keys, then credential_process, then the config file's keys"
else
	not_ok "chain order (credentials file, credential_process, config file)" "exits $r5 $RC" \
		"$(first_lines 4 "$w/prb.err")" "$(first_lines 4 "$w/prc.err")"
fi

# ---- role_arn with source_profile / credential_source: AssumeRole, signed (botocore checks it) ----
cat >"$w/config-role" <<EOC
[profile base]
aws_access_key_id = AKIDSTATICKEY0001
aws_secret_access_key = static-secret
[profile role]
role_arn = $ARN
source_profile = base
role_session_name = role-session
sts =
  endpoint_url = $FAKE_S3_URL/_sts
[profile chain]
role_arn = $ARN
source_profile = role
sts =
  endpoint_url = $FAKE_S3_URL/_sts
[profile ecssrc]
role_arn = $ARN
credential_source = EcsContainer
sts =
  endpoint_url = $FAKE_S3_URL/_sts
[profile loop1]
role_arn = $ARN
source_profile = loop2
[profile loop2]
role_arn = $ARN
source_profile = loop1
EOC
fake_s3_clear_log
run "$w/ar" env AWS_CONFIG_FILE="$w/config-role" AWS_PROFILE=role "$L" -v -r "$w/in" -o s3://rel/ar "${E[@]}"
if published ar ar && grep -q "credentials: assume role (role $ARN with source_profile base" "$w/ar.err" &&
	[ "$(srv_log action='"AssumeRole"' status=200 signed=true session_name='"role-session"')" = 1 ]; then
	ok "role_arn + source_profile: AssumeRole signed with the source's keys (botocore's check), published with the role's"
else
	not_ok "role_arn + source_profile" "exit $RC" "$(first_lines 8 "$w/ar.err")" "$(fake_s3_ctl GET log | head -c 1200)"
fi
fake_s3_clear_log
run "$w/arc" env AWS_CONFIG_FILE="$w/config-role" AWS_PROFILE=chain "$L" -v -r "$w/in" -o s3://rel/arc "${E[@]}"
if published arc arc && [ "$(srv_log action='"AssumeRole"' status=200 signed=true)" = 2 ]; then
	ok "a chain of roles (source_profile with a role of its own): two AssumeRole, the second signed with the first's session credentials"
else
	not_ok "a chain of roles" "exit $RC" "$(first_lines 8 "$w/arc.err")" "$(fake_s3_ctl GET log | head -c 1500)"
fi
fake_s3_clear_log
run "$w/are" env AWS_CONFIG_FILE="$w/config-role" AWS_PROFILE=ecssrc AWS_CONTAINER_CREDENTIALS_FULL_URI="$CU" \
	AWS_CONTAINER_AUTHORIZATION_TOKEN='Bearer c0nt41ner' "$L" -v -r "$w/in" -o s3://rel/are "${E[@]}"
if published are are && grep -q "credentials: assume role (role $ARN with credential_source EcsContainer" "$w/are.err" &&
	[ "$(srv_log creds='"container"' status=200)" = 1 ] &&
	[ "$(srv_log action='"AssumeRole"' status=200 signed=true)" = 1 ]; then
	ok "role_arn + credential_source = EcsContainer: the container's credentials sign AssumeRole (its session token signed too)"
else
	not_ok "role_arn + credential_source" "exit $RC" "$(first_lines 6 "$w/are.err")"
fi
run "$w/arl" env AWS_CONFIG_FILE="$w/config-role" AWS_PROFILE=loop1 "$L" -r "$w/in" -o s3://rel/arl "${E[@]}"
if [ "$RC" -ne 0 ] && grep -q "more than 5 roles in a chain" "$w/arl.err"; then
	ok "a loop of source_profiles: refused, said so"
else
	not_ok "a loop of source_profiles" "exit $RC" "$(first_lines 5 "$w/arl.err")"
fi

# ---- refresh: temporary credentials outlived by the run ----
mkdir -p "$w/many"
for i in 1 2 3 4 5 6; do
	gcc -O2 -Wl,--build-id=0x5555555555555555555555555555555$i -o "$w/many/p$i" "$w/m.c" 2>>"$w/cc.err"
done
# 5-second credentials, each S3 request answered after 1.2 s: the run lasts
# about 9 s, so the first ones end under it.
fake_s3_start "$w/srv5" --access-key AKIDSTATICKEY0001 --secret-key static-secret --bucket rel \
	--web-identity-token "$JWT" --role-arn "$ARN" --issue-seconds 5
fake_s3_faults '{"stall": 100, "stall_seconds": 1.2}'
run "$w/rf" env AWS_WEB_IDENTITY_TOKEN_FILE="$w/token" AWS_ROLE_ARN="$ARN" \
	AWS_ENDPOINT_URL_STS="$FAKE_S3_URL/_sts" "$L" -j 1 -r "$w/many" -o s3://rel/rf --endpoint-url "$FAKE_S3_URL"
n=0
for i in 1 2 3 4 5 6; do
	fake_s3_object rel "rf/symbolizer/anonymous/5555555555555555555555555555555$i" "$w/got" && n=$((n + 1))
done
sts=$(srv_log action='"AssumeRoleWithWebIdentity"' status=200) expired=$(srv_log code='"ExpiredToken"')
if [ "$RC" -eq 0 ] && [ "$n" = 6 ] && [ "$sts" -ge 2 ] && [ "$expired" = 0 ]; then
	ok "refresh: 5-second web identity credentials found again before they end ($sts AssumeRoleWithWebIdentity), all 6 objects sent, no request refused"
else
	not_ok "refresh before expiry" "exit $RC, $n objects, $sts STS calls, $expired ExpiredToken" "$(first_lines 6 "$w/rf.err")"
fi

# Credentials the server ends after 2 s though they say an hour: S3's
# ExpiredToken makes the client find them again and retry, once.
fake_s3_start "$w/srvr" --access-key AKIDSTATICKEY0001 --secret-key static-secret --bucket rel \
	--container-token 'Bearer c0nt41ner' --revoke-after 2
fake_s3_faults '{"stall": 100, "stall_seconds": 1.2}'
run "$w/rv" env AWS_CONTAINER_CREDENTIALS_FULL_URI="$FAKE_S3_URL/_container/creds" \
	AWS_CONTAINER_AUTHORIZATION_TOKEN='Bearer c0nt41ner' "$L" -j 1 -r "$w/many" -o s3://rel/rv \
	--endpoint-url "$FAKE_S3_URL"
n=0
for i in 1 2 3 4 5 6; do
	fake_s3_object rel "rv/symbolizer/anonymous/5555555555555555555555555555555$i" "$w/got" && n=$((n + 1))
done
got=$(srv_log creds='"container"' status=200) expired=$(srv_log code='"ExpiredToken"')
if [ "$RC" -eq 0 ] && [ "$n" = 6 ] && [ "$got" -ge 2 ] && [ "$expired" -ge 1 ]; then
	ok "refresh on ExpiredToken: container credentials found again ($got fetches) after $expired refusal(s), all 6 objects sent"
else
	not_ok "refresh on ExpiredToken" "exit $RC, $n objects, $got fetches, $expired ExpiredToken" "$(first_lines 6 "$w/rv.err")"
fi
# Again, the objects there: a HEAD each, whose refusal is a bare 400 (no body to say ExpiredToken).
fake_s3_clear_log
fake_s3_faults '{"stall": 100, "stall_seconds": 1.2}'
run "$w/rv2" env AWS_CONTAINER_CREDENTIALS_FULL_URI="$FAKE_S3_URL/_container/creds" \
	AWS_CONTAINER_AUTHORIZATION_TOKEN='Bearer c0nt41ner' "$L" -j 1 -r "$w/many" -o s3://rel/rv \
	--endpoint-url "$FAKE_S3_URL"
heads=$(srv_log method='"HEAD"' code='"ExpiredToken"') ok_heads=$(srv_log method='"HEAD"' status=200)
if [ "$RC" -eq 0 ] && [ "$heads" -ge 1 ] && [ "$ok_heads" -ge 6 ] && [ "$(fake_s3_count PUT)" = 0 ]; then
	ok "refresh on a HEAD's bare 400: found again, the HEAD sent once more ($heads refused, $ok_heads answered), nothing rewritten"
else
	not_ok "refresh on a HEAD's 400" "exit $RC, $heads HEAD refused, $ok_heads HEAD answered" "$(first_lines 6 "$w/rv2.err")"
fi

# The instance's role: its credentials say they end in 5 s, and are asked for again.
fake_s3_start "$w/srvi" --access-key AKIDSTATICKEY0001 --secret-key static-secret --bucket rel \
	--imds-role ci-role --imds-access-key AKIDIMDS --imds-secret-key imds-secret --imds-token imds-token \
	--imds-expiry-seconds 5
fake_s3_faults '{"stall": 100, "stall_seconds": 1.2}'
run "$w/im" env AWS_EC2_METADATA_DISABLED=false AWS_EC2_METADATA_SERVICE_ENDPOINT="$FAKE_S3_URL" \
	"$L" -v -j 1 -r "$w/many" -o s3://rel/im --endpoint-url "$FAKE_S3_URL"
fetches=$(srv_log imds=true path='"/latest/meta-data/iam/security-credentials/ci-role"' status=200)
if [ "$RC" -eq 0 ] && grep -q "credentials: instance metadata" "$w/im.err" && [ "$fetches" -ge 2 ]; then
	ok "refresh: the instance role's credentials asked for again before their Expiration ($fetches fetches)"
else
	not_ok "refresh of the instance role's credentials" "exit $RC, $fetches fetches" "$(first_lines 6 "$w/im.err")"
fi
