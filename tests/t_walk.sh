#!/usr/bin/env bash
# The directory walk, and the threads a run starts by default: every error it meets is one line naming the path and
# fails the run (exit 1), the rest of the tree is still converted; loops
# through symbolic links and a tree named twice give each file once. The
# errors a test cannot make as root (readdir and lstat failing with EIO)
# come from an LD_PRELOAD shim (tests/lib/walk_errors.c). The walk's time
# linear in the directories is bench/walk_bench.sh's, not a timed test.
set -u
. "$(dirname "$0")/lib/common.sh"

L=$LIDIAGEN
w=$(scratch work)

printf 'int work(int x) { return x * 3; }\nint main(int c, char **v) { (void)v; return work(c); }\n' \
	>"$w/tiny.c"
if ! gcc -O2 -g -Wl,--build-id=sha1 -o "$w/tiny" "$w/tiny.c" 2>"$w/cc.err" ||
	! gcc -O1 -g -Wl,--build-id=md5 -o "$w/other" "$w/tiny.c" 2>>"$w/cc.err" ||
	! gcc -shared -fPIC -O2 -o "$w/shim.so" "$TESTS_LIB/walk_errors.c" -ldl 2>>"$w/cc.err"; then
	not_ok "walk: the test programs and the shim build" "$(cat "$w/cc.err")"
	exit 0
fi
export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0
tiny_id=$(readelf -n "$w/tiny" | awk '/Build ID/ { print $3 }')
other_id=$(readelf -n "$w/other" | awk '/Build ID/ { print $3 }')

# walked WHAT WANT_RC PATTERN ARGS...: run ARGS under the shim; exit WANT_RC,
# stderr matching PATTERN (an extended regex) on exactly one line, and both
# programs' outputs written (each in a directory the walk reads).
walked() {
	local what=$1 want=$2 pat=$3 rc
	shift 3
	rm -rf "$w/out"
	LD_PRELOAD="$w/shim.so" "$L" -q "$@" -o "$w/out" >"$w/run.out" 2>"$w/run.err"
	rc=$?
	if [ "$rc" -ne "$want" ]; then
		not_ok "walk: $what: exit $want" "exit $rc" "$(first_lines 5 "$w/run.err")"
	elif [ "$(grep -cE "$pat" "$w/run.err")" -ne 1 ]; then
		not_ok "walk: $what: one line matching '$pat'" "$(first_lines 5 "$w/run.err")"
	elif [ ! -s "$w/out/symbolizer/anonymous/$tiny_id" ] ||
		[ ! -s "$w/out/symbolizer/anonymous/$other_id" ]; then
		not_ok "walk: $what: the rest of the tree converted" "$(ls -R "$w/out" 2>&1 | head)"
	else
		ok "walk: $what"
	fi
}

t=$w/tree
mkdir -p "$t/a/eio-dir" "$t/b"
cp "$w/tiny" "$t/a/tiny"
cp "$w/other" "$t/b/other"
touch "$t/a/eio-dir/one" "$t/a/eio-dir/two"
walked "a directory whose reading fails midway is named (exit 1)" 1 \
	"^lidiagen: $t/a/eio-dir: Input/output error" -r "$t"
rm -rf "$t/a/eio-dir"
touch "$t/a/eio-entry"
walked "an entry that cannot be looked at is named (exit 1)" 1 \
	"^lidiagen: $t/a/eio-entry: Input/output error" -r "$t"
rm -f "$t/a/eio-entry"

# Loops: a link back up, followed, and the same tree named twice.
ln -s .. "$t/b/up"
ln -s "$t/nowhere" "$t/b/dangling"
rm -rf "$w/out"
timeout 60 "$L" -r --follow-symlinks "$t" "$t/b/.." -o "$w/out" -v >"$w/run.out" 2>"$w/run.err"
rc=$?
n=$(cat "$w/run.out" "$w/run.err" | grep -c ' <- ')
if [ "$rc" -eq 0 ] && [ "$n" -eq 2 ] && grep -q '2 files' "$w/run.err"; then
	ok "walk: a loop through a followed link and a tree named twice give each file once (a dangling link passed)"
else
	not_ok "walk: each file once through loops" "exit $rc, $n outputs" "$(first_lines 8 "$w/run.err")"
fi

# The default -j: the CPUs the affinity mask allows (cgroup quotas: unit/test_cpus).
if command -v taskset >/dev/null && taskset -c 0 true 2>/dev/null; then
	taskset -c 0 "$L" -v -v "$w/tiny" -o "$w/out-j" >/dev/null 2>"$w/j.err"
	if grep -q '^lidiagen: 1 thread (-j: ' "$w/j.err"; then
		ok "-j by default: one thread when the affinity mask allows one CPU (taskset -c 0)"
	else
		not_ok "-j by default: one thread under taskset -c 0" "$(grep thread "$w/j.err")"
	fi
else
	skip "-j by default under taskset: no taskset here"
fi
