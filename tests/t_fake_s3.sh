#!/usr/bin/env bash
# The proof of tests/tools/fake_s3.py, the endpoint t_s3.sh trusts: Debian's
# awscli and curl's own SigV4 are accepted by it, and each fault and each
# wrong signature, payload, clock or token is refused the way S3 refuses it
# (tests/tools/fake_s3_selftest.sh does the checks).
set -u
. "$(dirname "$0")/lib/common.sh"
need_tool "Debian's awscli" /usr/bin/aws || exit 0
/usr/bin/python3 -c 'import botocore' 2>/dev/null ||
	{ not_ok "python3-botocore is installed" "CI installs it"; exit 0; }
bash "$TESTS_DIR/tools/fake_s3_selftest.sh"
