# The tests' environment, with defaults for a run from the source tree; source
# it, do not run it. tests/run.sh, tests/lib/common.sh and tests/lib/go_common.sh
# source it, so that after `make` each test runs alone with nothing set by
# hand: `bash tests/t_cli.sh`.
#
#   LIDIAGEN          the binary under test (default: build/lidiagen)
#   BUILD             the build directory holding tests/test_* and tests/fuzz_*
#                     (default: the directory of $LIDIAGEN)
#   TEST_TMP          scratch space (default: a new /tmp/lidiagen-tests.XXXXXX,
#                     removed at exit unless KEEP_TMP is set)
#   PYTHON            python3
#   PYROSCOPE_READER  what the tests run as Pyroscope's reader:
#                     tests/lib/pyroscope_both.py, which answers with our oracle
#                     tests/tools/pyroscope_reader.py (see pyroscope_reader below)
#   SHARED_PYROSCOPE  a second re-statement of Pyroscope's reader, outside the
#                     tree (default: ../shared/tools/pyroscope_lookup.py beside
#                     the source tree, where CI has it). When the file exists it
#                     runs beside ours and the two must agree; when it does not,
#                     ours runs alone and no check changes. Set it empty to
#                     compare with nothing.

TESTS_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)

: "${LIDIAGEN:=$TESTS_ROOT/build/lidiagen}"
: "${BUILD:=$(dirname "$LIDIAGEN")}"
if [ -z "${TEST_TMP:-}" ]; then
	TEST_TMP=$(mktemp -d /tmp/lidiagen-tests.XXXXXX)
	[ "${KEEP_TMP:-}" ] || trap 'rm -rf "$TEST_TMP"' EXIT
fi
: "${PYTHON:=python3}"
: "${PYROSCOPE_READER:=$TESTS_ROOT/tests/lib/pyroscope_both.py}"
SHARED_PYROSCOPE=${SHARED_PYROSCOPE-$TESTS_ROOT/../shared/tools/pyroscope_lookup.py}
export LIDIAGEN BUILD TEST_TMP PYTHON PYROSCOPE_READER SHARED_PYROSCOPE

if [ ! -x "$LIDIAGEN" ]; then
	echo "not ok - $LIDIAGEN is built (run make, or set LIDIAGEN)"
fi

# pyroscope_reader ARGS...: Pyroscope's reader, re-stated, on a lidia file:
# FILE (open it: "ok ranges=N lines=N strings=N"), FILE ADDR... (one line per
# address: "0xADDR | FUNCTION @ FILE" per frame), --json FILE ADDR...,
# --each FILE... (tests/tools/pyroscope_reader.py says more). Exit 1 when the
# file is refused, 3 when $SHARED_PYROSCOPE exists and answers differently.
pyroscope_reader() { "$PYTHON" "$PYROSCOPE_READER" "$@"; }
