#!/usr/bin/env bash
# Keep or replace (cmd/lidiagen/batch/keep.c): an output that already holds as
# much as the inputs give is kept untouched, whether that shows before the
# images are read (their prediction) or only after (-O0: no inline frames
# although there is DWARF); the log names both levels correctly.
set -u
. "$(dirname "$0")/lib/common.sh"

L=$LIDIAGEN
w=$(scratch work)

printf 'static inline int sq(int x) { return x * x; }\nint work(int x) { return sq(x) + 1; }\nint main(int c, char **v) { (void)v; return work(c); }\n' >"$w/k.c"
bid=0x0123456789abcdef0123456789abcdef
if ! gcc -O2 -g -Wl,--build-id=$bid -o "$w/o2" "$w/k.c" 2>"$w/cc.err" ||
	! gcc -O0 -g -Wl,--build-id=$bid -o "$w/o0" "$w/k.c" 2>>"$w/cc.err"; then
	not_ok "keep: the test programs build" "$(cat "$w/cc.err")"
	exit 0
fi
key=symbolizer/anonymous/${bid#0x}
mt() { stat -c %Y "$1/$key"; }

# case WHAT WANT_LINE DIR ARGS...: lidiagen -v -j 1 ARGS... -o DIR prints
# WANT_LINE (for DIR/KEY), converts nothing and leaves the output's date.
case_kept() {
	local what=$1 want=$2 dir=$3
	shift 3
	touch -d @1000000000 "$dir/$key"
	run "$w/run" "$L" -v -j 1 "$@" -o "$dir"
	if [ "$RC" -eq 0 ] && grep -qxF "kept $dir/$key: $want" "$w/run.out" &&
		[ "$(mt "$dir")" = 1000000000 ]; then
		ok "$what: kept, untouched, says '$want'"
	else
		not_ok "$what: kept, untouched, says '$want'" "exit $RC" "stdout: $(first_lines 3 "$w/run.out")" \
			"date: $(mt "$dir")"
	fi
}

run "$w/a" "$L" -q -j 1 "$w/o2" -o "$w/a"
case_kept "a file with inline frames, then the -O0 build (predicted no more)" \
	"it has symbols+lines+inlines already" "$w/a" "$w/o0"
run "$w/b" "$L" -q -j 1 "$w/o0" -o "$w/b"
case_kept "the -O0 build again, no --state (predicted inlines, gives lines)" \
	"it has symbols+lines already" "$w/b" "$w/o0"
case_kept "the -O0 build with --no-lines (predicted inlines, gives symbols)" \
	"it has symbols+lines, the inputs only symbols" "$w/b" --no-lines "$w/o0"
run "$w/up" "$L" -v -j 1 "$w/o2" -o "$w/b"
if [ "$RC" -eq 0 ] && grep -q "^replaced $w/b/$key <- .*(it had less)$" "$w/up.out"; then
	ok "the -O2 build over the -O0 one: replaced, and the log says so"
else
	not_ok "the -O2 build over the -O0 one: replaced, and the log says so" "exit $RC" \
		"stdout: $(first_lines 3 "$w/up.out")"
fi
