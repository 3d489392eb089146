# Shared helpers of the tests/t_*.sh scripts; source it, do not run it.
#
# Every script prints one line per check: "ok - WHAT", "not ok - WHAT"
# followed by "# ..." lines saying why, or "skip - WHAT" (tests/run.sh counts
# them). Scripts use `set -u` but never `set -e`: a failing command must not
# end a script before it has printed its results.
#
# Environment: see tests/lib/env.sh (LIDIAGEN, BUILD, TEST_TMP, PYTHON,
# PYROSCOPE_READER, SHARED_PYROSCOPE), all with defaults for a run from the
# source tree after `make`. The test data in the tree: tests/golden/.

TESTS_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
TESTS_LIB=$TESTS_DIR/lib
FIXTURES_SRC=$TESTS_DIR/fixtures
GOLDEN=$TESTS_DIR/golden
. "$TESTS_LIB/env.sh"
export LC_ALL=C

# The tools the oracles use. llvm-16's symbolizer: /usr/bin/llvm-symbolizer
# may be an older one.
LLVM_SYMBOLIZER=${LLVM_SYMBOLIZER:-/usr/lib/llvm-16/bin/llvm-symbolizer}

ok() { echo "ok - $*"; }
skip() { echo "skip - $*"; }
# not_ok WHAT [DETAIL...]: each DETAIL (may hold newlines) becomes "# " lines.
not_ok() {
	echo "not ok - $1"
	shift
	local d
	for d in "$@"; do
		printf '%s\n' "$d" | sed 's/^/# /'
	done
}
# note TEXT...: "# " lines that are not a check.
note() {
	local d
	for d in "$@"; do
		printf '%s\n' "$d" | sed 's/^/# /'
	done
}
# first_lines N FILE: a file's first N lines, for "# " detail.
first_lines() { head -n "$1" "$2" 2>/dev/null; }

# scratch NAME: a new empty directory under $TEST_TMP for this script.
scratch() {
	local d=$TEST_TMP/$(basename "$0" .sh)/$1
	rm -rf "$d"
	mkdir -p "$d"
	printf '%s\n' "$d"
}

# run OUT_PREFIX CMD...: run CMD, stdout to OUT_PREFIX.out, stderr to
# OUT_PREFIX.err; sets RC to its exit status. Standard input is /dev/null.
run() {
	local p=$1
	shift
	"$@" >"$p.out" 2>"$p.err" </dev/null
	RC=$?
}

# build_id FILE: the GNU build ID of an ELF file (empty when none).
build_id() { "$PYTHON" "$TESTS_LIB/elfsyms.py" build-id "$1" 2>/dev/null; }

# need_tool WHAT PATH: fail (not skip) when a tool CI installs is missing.
need_tool() {
	if [ -x "$2" ] || command -v "$2" >/dev/null 2>&1; then
		return 0
	fi
	not_ok "$1 is installed" "$2 not found; CI installs it, so its absence is an error"
	return 1
}

# convert_one LABEL DIR INPUT...: convert INPUTs (one build) with
# `lidiagen -q --allow-dynsym-only INPUT... -o DIR --layout flat` (a stripped
# library's exported symbols are compared with the oracles too). On success
# sets LIDIA_OUT to the one file written and returns 0; else prints "not ok"
# and returns 1.
convert_one() {
	local label=$1 dir=$2 files
	shift 2
	rm -rf "$dir"
	mkdir -p "$dir"
	"$LIDIAGEN" -q --allow-dynsym-only "$@" -o "$dir" --layout flat >"$dir.out" 2>"$dir.err" </dev/null
	local rc=$?
	files=$(find "$dir" -type f -name '*.lidia' | sort)
	LIDIA_OUT=
	if [ "$rc" -ne 0 ] || [ "$(printf '%s' "$files" | grep -c .)" -ne 1 ]; then
		not_ok "$label: lidiagen converts it to one file" \
			"lidiagen -q --allow-dynsym-only $* -o $dir --layout flat: exit $rc" \
			"files written: ${files:-none}" "$(first_lines 10 "$dir.err")"
		return 1
	fi
	LIDIA_OUT=$files
}

# doc_block MARKER FILE: the fenced block after the line "<!-- MARKER -->";
# exit 1 unless the marker is there exactly once.
doc_block() {
	awk -v m="<!-- $1 -->" '
		$0 == m { seen++; state = 1; next }
		state == 1 && /^```/ { state = 2; next }
		state == 2 && /^```/ { state = 0; next }
		state == 2 { print }
		END { exit seen == 1 ? 0 : 1 }' "$2"
}
