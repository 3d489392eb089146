#!/usr/bin/env bash
# Writer vs Pyroscope: every file lidiagen writes must open in Pyroscope's
# reader with its CRC check on (pyroscope_reader, tests/lib/env.sh), and that
# reader must find lidiagen's frames: at addresses taken from each input's own
# symbol tables, both of them (start, quarter points, end-1 and end of every
# function symbol, the byte before it, and a sweep through its bytes at a
# stride that keeps the total near 20000: every byte of small programs; never
# addresses from our output), the (function, file) frames of
# `pyroscope_reader --json FILE ADDR...` equal `lidiagen lookup --json`'s.
# That only proves that two readers agree on the file; what they find there is
# checked against an independent oracle: at the same addresses, Pyroscope's
# chain of (function, file) frames, inline frames included, must be the one
#   llvm-symbolizer (llvm-16) --obj=ELF --inlines --output-style=JSON
# gives, where ELF is the input (the debug file of a pair), wherever it names
# a function. Counted apart: addresses where it names none, and those whose
# nearest symbol is no sized function (a zero-size label such as _init, which
# it stretches; lidia files leave those out). Go binaries: its DWARF names and
# files are mapped to the pclntab's by the linker's rules (lidiacheck.py,
# go_dwarf_frames). One example per differing frame chain is shown.
# Inputs: every golden input that has a GNU build ID, the golden split pair
# converted together, and the test programs of tests/lib/fixtures.sh. A
# stripped executable alone has no function to give: no file is written for
# it (it would hide the profiler's other sources), and a warning says so.
set -u
. "$(dirname "$0")/lib/common.sh"
. "$TESTS_LIB/fixtures.sh"

work=$(scratch out)
need_tool llvm-symbolizer "$LLVM_SYMBOLIZER" || exit 0

# check_file LABEL INPUT...: convert, then compare; the oracle reads the last
# INPUT (the debug file of a pair).
check_file() {
	local label=$1
	shift
	convert_one "writer $label" "$work/$label" "$@" || return
	"$PYTHON" "$TESTS_LIB/lidiacheck.py" pyroscope --oracle "$LLVM_SYMBOLIZER" "${@: -1}" \
		"$LIDIAGEN" "$PYROSCOPE_READER" "$label" "$LIDIA_OUT" "$@"
}

# check_nothing LABEL INPUT: no file, exit 0, and the warning with its fix.
check_nothing() {
	local label=$1 dir=$work/$1 files
	rm -rf "$dir"
	"$LIDIAGEN" "$2" -o "$dir" >"$dir.out" 2>"$dir.err" </dev/null
	local rc=$?
	files=$(find "$dir" -type f 2>/dev/null)
	if [ "$rc" -eq 0 ] && [ -z "$files" ] &&
		grep -q '^lidiagen: warning: .*: nothing to symbolize .*: give its debug file or --debug-dir$' "$dir.err"; then
		ok "writer $label: a stripped executable alone: no file, a warning with its fix"
	else
		not_ok "writer $label: a stripped executable alone: no file, a warning with its fix" "exit $rc" \
			"files: $files" "$(first_lines 5 "$dir.err")"
	fi
}

inputs=$GOLDEN/inputs
no_id=()
for f in "$inputs"/*; do
	[ -f "$f" ] || continue
	if [ -z "$(build_id "$f")" ]; then
		no_id+=("$(basename "$f")")
		continue
	fi
	case $(basename "$f") in
	c-o2-stripped) check_nothing "golden-$(basename "$f")" "$f" ;;
	*) check_file "golden-$(basename "$f")" "$f" ;;
	esac
done
[ ${#no_id[@]} -gt 0 ] && note "golden inputs without a GNU build ID (nothing to write): ${no_id[*]}"
if [ -f "$inputs/c-o2-stripped" ] && [ -f "$inputs/c-o2-g.debug" ]; then
	check_file golden-split-pair "$inputs/c-o2-stripped" "$inputs/c-o2-g.debug"
fi

# product NAME: the file a fixture variant is converted from.
for v in $FX_VARIANTS_C $FX_VARIANTS_CXX lib-gcc-O2 lib-stripped c-gcc-O2-stripped \
	c-rdynamic-stripped c-split go-exe go-pie; do
	case $v in
	go-*) need_tool go "$GO" || continue ;;
	esac
	if ! fx_build "$v"; then
		not_ok "writer $v: fixture builds" "$FX_LOG"
		continue
	fi
	note "build $v: $(cat "$FX/.cmd")"
	case $v in
	lib-gcc-O2) check_file "$v" "$FX/liboracle.so" ;;
	lib-stripped) check_file "$v" "$FX/liboracle-stripped.so" ;;
	c-split) check_file "$v" "$FX/c-split" "$FX/c-split.debug" ;;
	c-gcc-O2-stripped) check_nothing "$v" "$FX/$v" ;;
	*) check_file "$v" "$FX/$v" ;;
	esac
done
note "go: $GO; go builds ran with: $(fx_go_env)"
