#!/usr/bin/env bash
# Run every test of lidiagen and end with one line "N passed, N failed, N skipped".
#
# Each test program prints TAP-like lines: "ok - WHAT" for a passed check,
# "not ok - WHAT" (with the reason on the following "#" lines) for a failed
# one, "skip - WHAT" for a check that cannot run here. This script runs:
#   $BUILD/tests/test_*          unit tests (tests/unit/*.c)
#   $BUILD/tests/fuzz_* CORPUS   fuzz targets replaying their corpus (tests/fuzz/)
#   tests/t_*.sh                 command-line and oracle tests
# Environment: TESTS (optional: an extended regex; only the tests whose name
# matches run, names being unit/test_NAME, fuzz/fuzz_NAME and t_NAME), and
# those of tests/lib/env.sh: LIDIAGEN (default build/lidiagen), BUILD, ...
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib/env.sh"
filter=${TESTS:-.}

passed=0 failed=0 skipped=0 failed_names=()

run_one() { # name command...
	local name=$1
	shift
	local out rc
	echo "== $name"
	out=$("$@" 2>&1)
	rc=$?
	printf '%s\n' "$out"
	local p f s
	p=$(grep -c '^ok - ' <<<"$out")
	f=$(grep -c '^not ok - ' <<<"$out")
	s=$(grep -c '^skip - ' <<<"$out")
	if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
		echo "not ok - $name exited with status $rc"
		f=1
	fi
	if [ "$p" -eq 0 ] && [ "$f" -eq 0 ] && [ "$s" -eq 0 ]; then
		echo "not ok - $name ran no check"
		f=1
	fi
	passed=$((passed + p))
	failed=$((failed + f))
	skipped=$((skipped + s))
	[ "$f" -gt 0 ] && failed_names+=("$name")
}

for t in "$BUILD"/tests/test_*; do
	[ -x "$t" ] || continue
	name=unit/$(basename "$t")
	[[ $name =~ $filter ]] || continue
	run_one "$name" "$t"
done
for t in "$BUILD"/tests/fuzz_*; do
	[ -x "$t" ] || continue
	target=$(basename "$t")
	name=fuzz/$target
	[[ $name =~ $filter ]] || continue
	run_one "$name" "$t" "$here/fuzz/corpus/${target#fuzz_}"
done
for t in "$here"/t_*.sh; do
	[ -f "$t" ] || continue
	name=$(basename "$t" .sh)
	[[ $name =~ $filter ]] || continue
	run_one "$name" bash "$t"
done

[ "${KEEP_TMP:-}" ] || rm -rf "$TEST_TMP"
echo
if [ ${#failed_names[@]} -gt 0 ]; then
	echo "failed in: ${failed_names[*]}"
fi
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
