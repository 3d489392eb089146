#!/usr/bin/env bash
# dwz's partial units, many of them over a few line tables (issue 14).
#
# A generated C library: shared.h defines K small static inline functions,
# each called from its own subset of 10 translation units (the i-th subset
# with at least two members), and t0.c also holds 1500 lines of straight code
# in 30 functions, so that its line table is large. dwz then moves each
# inline function's abstract DIE into a partial unit of its own (one per
# subset of units that share it), and every partial unit names the line table
# of the first unit that shares it: about half of them t0's. Two variants,
# K=150 and K=600: the partial units grow about fourfold, the DWARF grows less
# (each function adds a few DIEs and rows; t0's line table does not grow).
# Every build command is printed.
#
# Checks, on each variant after dwz:
#  - dwz made the shape: many partial units, few line tables among them, all
#    of them compile units' tables (counted with llvm-dwarfdump);
#  - lidiagen -j 1 converts it, and the function-name chains, files and lines
#    of every frame agree with llvm-symbolizer (llvm-16, --inlines) on the
#    instructions of .text (every 3rd; tests/lib/dwarf_oracle.py compare);
#  - at -j 3, the units are walked on 3 threads, with the same output;
#  - memory does not grow with the partial units: lidiagen's peak RSS
#    (/usr/bin/time -f %M) grows by at most 16 KiB (32 under a sanitizer) for
#    each partial unit the large variant adds. A line table decoded again for every partial unit
#    that names it, and its rows kept as orphans once per unit (lidiagen up
#    to issue 14), grows as partial units x rows: some 300 KiB a unit here.
#    (A ratio of the two peaks would depend on what the process holds before
#    it reads anything: libraries loaded or not.) What remains, some 6 KiB a
#    unit, is libdw's: the abbreviations of the units reached for names.
set -u
. "$(dirname "$0")/lib/common.sh"

ORACLE=$TESTS_LIB/dwarf_oracle.py
LLVM_DWARFDUMP=${LLVM_DWARFDUMP:-$(dirname "$LLVM_SYMBOLIZER")/llvm-dwarfdump}
work=$(scratch work)

need_tool llvm-symbolizer "$LLVM_SYMBOLIZER" || exit 0
need_tool llvm-dwarfdump "$LLVM_DWARFDUMP" || exit 0
for t in gcc dwz objdump /usr/bin/time; do
	need_tool "$t" "$t" || exit 0
done

# generate DIR K: the sources of the variant with K shared inline functions.
generate() {
	"$PYTHON" "$TESTS_LIB/dwz_shared_gen.py" "$1" "$2"
}

# build DIR K: generate, compile (two at a time) and link libsyn.so, then dwz it.
build() {
	local dir=$1 k=$2 cmd
	cmd="ls t*.c | xargs -P 2 -I{} gcc -O2 -g -fPIC -c {} && gcc -shared -o libsyn.so t*.o && dwz libsyn.so"
	rm -rf "$dir"
	generate "$dir" "$k" || { not_ok "K=$k: sources generated"; return 1; }
	note "build (K=$k, in $dir): $cmd"
	if ! (cd "$dir" && bash -c "$cmd") >"$dir/build.log" 2>&1; then
		not_ok "K=$k: the library builds and dwz rewrites it" "$cmd" "$(first_lines 15 "$dir/build.log")"
		return 1
	fi
}

# shape K ELF: count the partial units and the line tables they name; sets NPU.
shape() {
	local k=$1 elf=$2 units
	units=$("$LLVM_DWARFDUMP" --debug-info --recurse-depth=0 "$elf" 2>/dev/null |
		awk '/DW_TAG_(partial|compile)_unit/ { tag = $2 }
		     /DW_AT_stmt_list/ { gsub(/[()]/, "", $2); print tag, $2 }')
	NPU=$(printf '%s\n' "$units" | grep -c '^DW_TAG_partial_unit')
	local pu_tables cu_tables foreign
	pu_tables=$(printf '%s\n' "$units" | awk '$1 == "DW_TAG_partial_unit" { print $2 }' | sort -u)
	cu_tables=$(printf '%s\n' "$units" | awk '$1 == "DW_TAG_compile_unit" { print $2 }' | sort -u)
	foreign=$(comm -23 <(printf '%s\n' "$pu_tables") <(printf '%s\n' "$cu_tables") | grep -c .)
	local what="K=$k: dwz made $NPU partial units naming $(printf '%s\n' "$pu_tables" | grep -c .) line tables, every one a compile unit's"
	if [ "$NPU" -ge $((k * 3 / 4)) ] && [ "$foreign" -eq 0 ]; then
		ok "$what"
	else
		not_ok "$what" "want at least $((k * 3 / 4)) partial units, all naming compile units' tables ($foreign do not)"
	fi
}

# dwarf_size ELF: the size of its .debug_* sections (none is compressed here).
dwarf_size() {
	local size sum=0
	for size in $(objdump -h "$1" | awk '$2 ~ /^\.debug_/ { print $3 }'); do
		sum=$((sum + 0x$size))
	done
	echo "$sum"
}

declare -A RSS DWARF PU
for k in 150 600; do
	dir=$work/k$k
	build "$dir" "$k" || continue
	elf=$dir/libsyn.so
	shape "$k" "$elf"
	PU[$k]=$NPU
	DWARF[$k]=$(dwarf_size "$elf")
	out=$dir/out
	mkdir -p "$out"
	/usr/bin/time -f %M -o "$dir/rss" "$LIDIAGEN" -q -j 1 --no-debug-search "$elf" -o "$out" \
		--layout flat >"$dir/convert.out" 2>"$dir/convert.err" </dev/null
	rc=$?
	lidia=$(find "$out" -type f -name '*.lidia')
	if [ "$rc" -ne 0 ] || [ -z "$lidia" ]; then
		not_ok "K=$k: lidiagen converts it" "exit $rc" "$(first_lines 10 "$dir/convert.err")"
		continue
	fi
	RSS[$k]=$(tail -n 1 "$dir/rss")
	ok "K=$k: lidiagen converts it (peak RSS ${RSS[$k]} KiB, DWARF ${DWARF[$k]} bytes)"
	"$PYTHON" "$ORACLE" compare --label "K=$k" --lidiagen "$LIDIAGEN" --lidia "$lidia" \
		--code "$elf" --llvm "$LLVM_SYMBOLIZER" --llvm-obj "$elf" --every 3 --want-inlines 1
	# The units on 3 threads: the groups sharing a line table stay whole.
	"$LIDIAGEN" -v -v -j 3 --no-debug-search "$elf" -o "$dir/out3" --layout flat \
		>"$dir/j3.out" 2>"$dir/j3.err" </dev/null
	lidia3=$(find "$dir/out3" -type f -name '*.lidia')
	what="K=$k: -j 3 walks the units on 3 threads and writes the bytes -j 1 does"
	if grep -q 'walked on 3 threads' "$dir/j3.err" && [ -n "$lidia3" ] && cmp -s "$lidia" "$lidia3"; then
		ok "$what"
	else
		not_ok "$what" "$(first_lines 10 "$dir/j3.err")"
	fi
done

if [ -n "${RSS[150]:-}" ] && [ -n "${RSS[600]:-}" ]; then
	what="peak RSS does not grow with the partial units: ${RSS[600]} KiB for ${PU[600]} of them, ${RSS[150]} KiB for ${PU[150]} (DWARF ${DWARF[600]} vs ${DWARF[150]} bytes)"
	per_unit=$(((RSS[600] - RSS[150]) / (PU[600] - PU[150])))
	# AddressSanitizer's redzones double small allocations.
	limit=16
	[ -n "${SANITIZE:-}" ] && limit=32
	if [ "$per_unit" -le "$limit" ]; then
		ok "$what: $per_unit KiB a partial unit added (at most $limit)"
	else
		not_ok "$what" "$per_unit KiB for each partial unit added; at most $limit KiB allowed"
	fi
else
	not_ok "peak RSS of both variants measured"
fi
