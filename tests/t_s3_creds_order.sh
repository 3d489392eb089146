#!/usr/bin/env bash
# The credentials chain's order against the AWS CLI's own (issue 24): with
# several sources set at once, `aws configure list` (Debian's awscli) and
# `lidiagen -v` name the same access key (its last four characters). Only
# sources that need no server: the environment, the credentials file, a
# credential_process and the config file's keys. The bucket is a closed
# port: lidiagen says its settings, then fails to reach it.
set -u
. "$(dirname "$0")/lib/common.sh"

need_tool aws aws || exit 0
w=$(scratch work)
cd "$w" || exit 0
printf 'int main(void) { return 0; }\n' >p.c
cc -Wl,--build-id -o p p.c || exit 0
printf '#!/bin/sh\necho "{\\"Version\\": 1, \\"AccessKeyId\\": \\"AKIAPROCESS00003\\", \\"SecretAccessKey\\": \\"s3\\"}"\n' >proc.sh
chmod +x proc.sh
printf '[default]\naws_access_key_id = AKIAFILEFILE0002\naws_secret_access_key = s2\n' >credentials
printf '[default]\nregion = us-east-1\ncredential_process = %s/proc.sh\naws_access_key_id = AKIACONFCONF0004\naws_secret_access_key = s4\n' "$w" >config
printf '[default]\nregion = us-east-1\naws_access_key_id = AKIACONFCONF0004\naws_secret_access_key = s4\n' >config_keys

# pick WHAT ENV...: both tools' access key (last 4) in the environment ENV.
pick() {
	local what=$1 cli ours
	shift
	cli=$(env -i PATH="$PATH" HOME="$w" "$@" aws configure list 2>/dev/null |
		awk '$1 == "access_key" { print substr($2, length($2) - 3) }')
	ours=$(env -i PATH="$PATH" HOME="$w" "$@" "$LIDIAGEN" -v p -o s3://bucket/x \
		--endpoint-url http://127.0.0.1:1 2>&1 |
		sed -n 's/^lidiagen: s3: credentials: .*access key id \**\(....\)$/\1/p')
	if [ -n "$cli" ] && [ "$cli" = "$ours" ]; then
		ok "chain order as the AWS CLI's: $what: both take the key ending $cli"
	else
		not_ok "chain order as the AWS CLI's: $what" "aws configure list: '$cli', lidiagen -v: '$ours'"
	fi
}
pick "environment before the credentials file" AWS_ACCESS_KEY_ID=AKIAENVIRONM0001 \
	AWS_SECRET_ACCESS_KEY=s1 AWS_SHARED_CREDENTIALS_FILE=credentials AWS_CONFIG_FILE=config
pick "credentials file before credential_process" AWS_SHARED_CREDENTIALS_FILE=credentials \
	AWS_CONFIG_FILE=config
pick "credential_process before the config file's keys" AWS_SHARED_CREDENTIALS_FILE=none \
	AWS_CONFIG_FILE=config
pick "the config file's keys alone" AWS_SHARED_CREDENTIALS_FILE=none AWS_CONFIG_FILE=config_keys
