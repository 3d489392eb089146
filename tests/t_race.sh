#!/usr/bin/env bash
# The batch's threads on a tree of several hundred inputs (more than any
# array's first allocation, so that adding inputs moves them while workers
# read): under ThreadSanitizer and AddressSanitizer at -j 2 and -j 4, and the
# same bytes at every -j. The sanitizer builds are made here (make O=...
# SANITIZE=...), next to the build under test.
set -u
. "$(dirname "$0")/lib/common.sh"

L=$LIDIAGEN
w=$(scratch work)
src=$(cd "$TESTS_DIR/.." && pwd)
# The build directory's root: $BUILD may be a sanitizer build under it.
root=${BUILD:-$src/build}
root=${root%/san-*}
# make's targets as the project's own make names them (O relative to the
# tree, as its default "build" is): dependency files written by a build
# with an absolute O name no object a later plain `make` asks for, and its
# objects then go stale when a header changes.
make_o=$(realpath --relative-to="$src" "$root")

printf 'static int v;\nint work(int x) { return v += x * 3; }\nint main(int c, char **a) { (void)a; return work(c); }\n' \
	>"$w/p.c"
if ! gcc -O2 -g -Wl,--build-id=sha1 -o "$w/p" "$w/p.c" 2>"$w/cc.err"; then
	not_ok "race: the test program builds" "$(cat "$w/cc.err")"
	exit 0
fi
# 300 ELF files with distinct build IDs in 12 directories, and 60 other files.
N=300
"$PYTHON" "$TESTS_LIB/clone_build_ids.py" "$w/p" "$w/tree" "$N" 12
for i in $(seq 60); do echo "not an ELF $i" >"$w/tree/d$(printf %02d $((i % 12)))/note$i.txt"; done
note "tree: $N copies of gcc -O2 -g p.c with distinct build IDs, 60 text files, 12 directories"

# sanitizer_build KINDS: the lidiagen binary built with -fsanitize=KINDS, made if needed.
sanitizer_build() {
	local b=$root/san-${1//,/-}
	if ! make -C "$src" -s O="$make_o" SANITIZE="$1" "$make_o/${b#"$root"/}/lidiagen" >"$w/make-$1.log" 2>&1; then
		not_ok "race: make SANITIZE=$1 builds" "$(tail -n 20 "$w/make-$1.log")"
		return 1
	fi
	echo "$b/lidiagen"
}

# race_run LABEL BINARY JOBS [ENV...]: the tree converted; no sanitizer report, every key.
race_run() {
	local label=$1 bin=$2 jobs=$3 out=$w/out-$1-$3
	shift 3
	rm -rf "$out"
	env "$@" "$bin" -q -r "$w/tree" -o "$out" -j "$jobs" >"$out.log" 2>&1 </dev/null
	local rc=$? n
	n=$(find "$out" -type f | wc -l)
	if [ "$rc" -eq 0 ] && [ "$n" -eq "$N" ] && ! grep -q 'Sanitizer' "$out.log"; then
		ok "race: $label -j $jobs: $N inputs converted, no report"
	else
		not_ok "race: $label -j $jobs: $N inputs converted, no report" "exit $rc, $n files" \
			"$(grep -m1 -A12 'Sanitizer' "$out.log" || first_lines 10 "$out.log")"
	fi
}

if tsan=$(sanitizer_build thread); then
	for j in 2 4; do
		race_run thread "$tsan" "$j" TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1"
	done
fi
case ${SANITIZE:-} in
*address*) asan=$L ;;
*) asan=$(sanitizer_build address,undefined) || asan= ;;
esac
if [ -n "$asan" ]; then
	for j in 2 4; do
		race_run address "$asan" "$j" ASAN_OPTIONS="halt_on_error=1"
	done
fi

# Same bytes whatever the thread count.
rm -rf "$w/j1" "$w/j4"
"$L" -q -r "$w/tree" -o "$w/j1" -j 1 >/dev/null 2>&1
"$L" -q -r "$w/tree" -o "$w/j4" -j 4 >/dev/null 2>&1
if [ "$(find "$w/j1" -type f | wc -l)" -eq "$N" ] && diff -r "$w/j1" "$w/j4" >/dev/null; then
	ok "race: -j 1 and -j 4 write the same $N files, byte for byte"
else
	not_ok "race: -j 1 and -j 4 write the same $N files, byte for byte" \
		"$(diff -r "$w/j1" "$w/j4" 2>&1 | head -5)"
fi
