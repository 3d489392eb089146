#!/usr/bin/env bash
# One input on several threads (issue 14, part 2): lidiagen -j N gives the
# threads it has free to the one file it converts (lidia_extract_opts.threads).
#
# A generated C program of 40 translation units, each with its own static
# inline functions (inline frames) and a few hundred lines, built four ways:
# DWARF as it is, compressed with zlib (gcc -gz=zlib: inflated on threads),
# GNU's .zdebug (-gz=zlib-gnu: left to libdw) and zstd (objcopy
# --compress-debug-sections=zstd: on threads), so that the sections inflated
# on threads are many and of every kind; each with -fdebug-prefix-map (its
# directory named /par), so that the variants name the same files. Every
# build command is printed.
#
# Checks, on each variant:
#  - lidiagen -j 1, -j 2 and -j 4 write the same bytes;
#  - the -j 2 output agrees with llvm-symbolizer (llvm-16, --inlines) on the
#    instructions of .text (every 5th; tests/lib/dwarf_oracle.py compare);
# on the plain one, -vv says the DWARF units were walked on 3 threads at -j 3,
# and --prefix-map gives the same bytes at -j 1 and -j 3;
# and on the zlib variant, under ThreadSanitizer (make SANITIZE=thread, the
# build made here as t_race.sh makes it), -j 4 converts it with no report
# and the same bytes again.
set -u
. "$(dirname "$0")/lib/common.sh"

ORACLE=$TESTS_LIB/dwarf_oracle.py
w=$(scratch work)
src=$(cd "$TESTS_DIR/.." && pwd)
root=${BUILD:-$src/build}
root=${root%/san-*}
# make's targets as the project's own make names them (O relative to the
# tree, as its default "build" is): dependency files written by a build
# with an absolute O name no object a later plain `make` asks for, and its
# objects then go stale when a header changes.
make_o=$(realpath --relative-to="$src" "$root")

need_tool llvm-symbolizer "$LLVM_SYMBOLIZER" || exit 0
for t in gcc objdump; do
	need_tool "$t" "$t" || exit 0
done

# generate DIR: 40 units, each 6 static inline functions called from 3 global ones.
generate() {
	local dir=$1 i f
	mkdir -p "$dir"
	for i in $(seq 0 39); do
		{
			echo "extern volatile int sink$i;"
			echo "volatile int sink$i;"
			for f in 0 1 2 3 4 5; do
				echo "static inline __attribute__((always_inline)) int u${i}_in$f(int x)"
				echo "{"
				echo "	sink$i += x * $((f + 3));"
				echo "	if (x > $((i + f)))"
				echo "		sink$i ^= x >> $((f + 1));"
				echo "	return sink$i + $f;"
				echo "}"
			done
			for f in 0 1 2; do
				echo "int u${i}_f$f(int x)"
				echo "{"
				echo "	int r = 0;"
				echo "	for (int k = 0; k < x; k++) {"
				echo "		r += u${i}_in$f(k);"
				echo "		r += u${i}_in$((f + 3))(r);"
				echo "	}"
				echo "	return r;"
				echo "}"
			done
		} >"$dir/t$i.c"
	done
	{
		for i in $(seq 0 39); do echo "int u${i}_f0(int);"; done
		echo "int main(int c, char **v)"
		echo "{"
		echo "	int r = 0;"
		echo "	(void)v;"
		for i in $(seq 0 39); do echo "	r += u${i}_f0(c);"; done
		echo "	return r & 1;"
		echo "}"
	} >"$dir/main.c"
}

# build DIR GZ: compile the units and link prog, with -gz=GZ (zstd: with objcopy).
build() {
	local dir=$1 gz=$2 cmd
	cmd="ls *.c | xargs -P 2 -I{} gcc -O2 -g -gz=$gz -fdebug-prefix-map=\$PWD=/par -c {} && gcc -gz=$gz -Wl,--build-id=sha1 -o prog *.o"
	[ "$gz" = zstd ] && cmd="ls *.c | xargs -P 2 -I{} gcc -O2 -g -fdebug-prefix-map=\$PWD=/par -c {} && gcc -Wl,--build-id=sha1 -o prog.plain *.o && objcopy --compress-debug-sections=zstd prog.plain prog"
	generate "$dir"
	note "build ($gz, in $dir): $cmd"
	if ! (cd "$dir" && bash -c "$cmd") >"$dir/build.log" 2>&1; then
		not_ok "$gz: the program builds" "$cmd" "$(first_lines 15 "$dir/build.log")"
		return 1
	fi
}

# convert BIN DIR JOBS ELF [ENV...]: lidiagen -j JOBS; prints the file written.
convert() {
	local bin=$1 dir=$2 jobs=$3 elf=$4
	shift 4
	rm -rf "$dir"
	mkdir -p "$dir"
	env "$@" "$bin" -q -j "$jobs" --no-debug-search "$elf" -o "$dir" --layout flat \
		>"$dir.out" 2>"$dir.err" </dev/null || return 1
	find "$dir" -type f -name '*.lidia'
}

for gz in none zlib zlib-gnu zstd; do
	dir=$w/$gz
	build "$dir" "$gz" || continue
	elf=$dir/prog
	sums=
	for j in 1 2 4; do
		if f=$(convert "$LIDIAGEN" "$dir/out$j" "$j" "$elf") && [ -n "$f" ]; then
			sums="$sums $(sha256sum <"$f" | cut -c1-16)"
		else
			sums="$sums failed"
			not_ok "$gz: lidiagen -j $j converts it" "$(first_lines 10 "$dir/out$j.err")"
		fi
	done
	read -r s1 s2 s4 <<<"$sums"
	if [ "$s1" != failed ] && [ "$s1" = "$s2" ] && [ "$s1" = "$s4" ]; then
		ok "$gz: -j 1, -j 2 and -j 4 write the same bytes ($s1)"
	else
		not_ok "$gz: -j 1, -j 2 and -j 4 write the same bytes" "sha256: $sums"
	fi
	lidia=$(find "$dir/out2" -type f -name '*.lidia')
	# llvm-symbolizer reads no .zdebug: it reads the zlib build, whose code is the same.
	obj=$elf
	[ "$gz" = zlib-gnu ] && obj=$w/zlib/prog
	[ -n "$lidia" ] && "$PYTHON" "$ORACLE" compare --label "$gz -j 2" --lidiagen "$LIDIAGEN" \
		--lidia "$lidia" --code "$elf" --llvm "$LLVM_SYMBOLIZER" --llvm-obj "$obj" \
		--every 5 --want-inlines 1
done

# The DWARF second pass on threads: -v says it ran on them, and the files
# renamed by --prefix-map (applied as each thread's ranges join, in order)
# come out the same as on one thread.
elf=$w/none/prog
if [ -x "$elf" ]; then
	"$LIDIAGEN" -q -j 1 --no-debug-search --prefix-map /par=/src/renamed "$elf" -o "$w/pm1" \
		--layout flat >/dev/null 2>&1 </dev/null
	f1=$(find "$w/pm1" -type f -name '*.lidia')
	"$LIDIAGEN" -v -v -j 3 --no-debug-search --prefix-map /par=/src/renamed "$elf" -o "$w/pm3" \
		--layout flat >"$w/pm3.out" 2>"$w/pm3.err" </dev/null
	f3=$(find "$w/pm3" -type f -name '*.lidia')
	if grep -q 'DWARF units walked on 3 threads' "$w/pm3.err"; then
		ok "-j 3 -vv: the DWARF units are walked on 3 threads"
	else
		not_ok "-j 3 -vv: the DWARF units are walked on 3 threads" "$(first_lines 10 "$w/pm3.err")"
	fi
	if [ -n "$f1" ] && [ -n "$f3" ] && cmp -s "$f1" "$f3" &&
		"$LIDIAGEN" dump "$f3" | grep -q '/src/renamed/t7.c'; then
		ok "--prefix-map on 3 threads: the same bytes as on one, the files renamed"
	else
		not_ok "--prefix-map on 3 threads: the same bytes as on one, the files renamed" \
			"$(first_lines 10 "$w/pm3.err")"
	fi
fi

# ThreadSanitizer on the zlib variant's conversion at -j 4.
elf=$w/zlib/prog
if [ -x "$elf" ]; then
	b=$root/san-thread
	if ! make -C "$src" -s O="$make_o" SANITIZE=thread "$make_o/san-thread/lidiagen" >"$w/make-tsan.log" 2>&1; then
		not_ok "make SANITIZE=thread builds" "$(tail -n 20 "$w/make-tsan.log")"
	else
		f=$(convert "$b/lidiagen" "$w/tsan" 4 "$elf" TSAN_OPTIONS="halt_on_error=1")
		rc=$?
		if [ "$rc" -eq 0 ] && [ -n "$f" ] && ! grep -q Sanitizer "$w/tsan.err" &&
			cmp -s "$f" "$(find "$w/zlib/out1" -type f -name '*.lidia')"; then
			ok "ThreadSanitizer: -j 4 converts the zlib variant with no report, the same bytes"
		else
			not_ok "ThreadSanitizer: -j 4 converts the zlib variant with no report, the same bytes" \
				"exit $rc" "$(grep -m1 -A12 Sanitizer "$w/tsan.err" || first_lines 10 "$w/tsan.err")"
		fi
	fi
fi
