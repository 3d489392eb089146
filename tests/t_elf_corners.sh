#!/usr/bin/env bash
# ELF shapes other symbolizers handle, each built here from
# tests/fixtures/corners/ (every command printed) and checked against
#   llvm-symbolizer (llvm-16) --inlines --output-style=JSON   and
#   eu-addr2line -a -i -f -C (elfutils),
# at every instruction start objdump lists, with `lidiagen lookup --json` on
# lidiagen's output (tests/lib/dwarf_oracle.py compare; with the eu oracle,
# only where the two oracles agree, the others counted apart). Agreement must
# be 100%.
#
#  1. Identical code folding (ld.lld --icf=all): two functions' line
#     sequences at one address; and the same file with one of them moved 8
#     bytes earlier (dwarf_oracle.py shift-seq), sequences that overlap in
#     part, as old GCC wrote for C++ templates: their rows are merged row by
#     row, none dropped whole.
#  2. ppc64 ELFv1 (powerpc64-linux-gnu-gcc): function symbols are .opd
#     descriptors, followed to their code (.init, .text, .fini sampled), also
#     in a stripped program with its debug file (whose .opd has no bytes);
#     then every architecture lidiagen claims (doc/architectures.md), with
#     clang --target and ld.lld (s390x: s390x-linux-gnu-ld), and one it does
#     not (hexagon): refused with one warning, nothing written.
#  3. A library and its debug file that prelink would leave: linked twice with
#     one build ID at two load addresses: read at the library's addresses
#     (eu-addr2line finding the debug file by build ID; llvm-symbolizer on
#     the moved link unstripped); a debug file of another layout (segments
#     that no one difference makes the library's): one warning naming both,
#     nothing written.
#  4. A shared object without section headers (llvm-objcopy
#     --strip-sections), GNU and SysV hash: its dynamic symbols, found through
#     PT_DYNAMIC, with --allow-dynsym-only (the oracles: eu-addr2line on it,
#     llvm-symbolizer on the library stripped with its section headers); by
#     default it is skipped with the .dynsym warning.
#  5. A line program no unit names (hand-written assembly whose .debug_info
#     is removed; and a program with .debug_line alone): compared with the
#     oracles on the same link with the unit kept.
#  6. Line rows of code no unit claims (hand-written units of our own): a
#     thunk after a function, under the row in effect at its end, outside
#     its unit's DIE range and then outside its .debug_aranges set (read
#     before the DIE); a COMDAT function whose discarded copy's rows the
#     linker moved onto the kept one, two programs describing one code, the
#     lines those of the unit that claims it, in either link order, and
#     where both claim it (LLVM 16's choice between them). Here the oracle
#     is llvm-symbolizer alone: eu-addr2line finds no unit without a DIE
#     that covers the code.
# A tool that is missing is a skip, but for those CI installs.
set -u
. "$(dirname "$0")/lib/common.sh"

ORACLE=$TESTS_LIB/dwarf_oracle.py
SRC=$FIXTURES_SRC/corners
work=$(scratch work)
LLVM_BIN=$(dirname "$(readlink -f "$LLVM_SYMBOLIZER")")

need_tool llvm-symbolizer "$LLVM_SYMBOLIZER" || exit 0
for t in gcc clang ld.lld objdump objcopy strip eu-addr2line "$LLVM_BIN/llvm-objcopy" \
	"$LLVM_BIN/llvm-objdump"; do
	need_tool "$t" "$t" || exit 0
done
OBJCOPY16=$LLVM_BIN/llvm-objcopy
OBJDUMP16=$LLVM_BIN/llvm-objdump

# build LABEL CMD...: run a build command, printed; "not ok" when it fails.
build() {
	local label=$1
	shift
	note "build $label: $*"
	"$@" >"$work/$label.build" 2>&1 && return 0
	not_ok "$label: builds" "$*" "$(first_lines 10 "$work/$label.build")"
	return 1
}

# convert LABEL INPUT...: lidiagen -q --allow-dynsym-only INPUT... (common.sh); sets LIDIA_OUT.
convert() {
	local label=$1
	shift
	convert_one "$label" "$work/$label.out" "$@"
}

# against LABEL CODE LLVM_OBJ EU_OBJ [OPTIONS...]: $LIDIA_OUT at CODE's
# instructions vs llvm-symbolizer on LLVM_OBJ, and vs eu-addr2line on EU_OBJ
# where it agrees with llvm-symbolizer.
against() {
	local label=$1 code=$2 lobj=$3 eobj=$4
	shift 4
	"$PYTHON" "$ORACLE" compare --label "$label vs llvm-symbolizer" --lidiagen "$LIDIAGEN" \
		--lidia "$LIDIA_OUT" --code "$code" --llvm "$LLVM_SYMBOLIZER" --llvm-obj "$lobj" \
		--min-names 100 --min-lines 100 --pyroscope "$PYROSCOPE_READER" --python "$PYTHON" "$@"
	against_eu "$label" "$code" "$lobj" "$eobj" "$@"
}

# against_eu LABEL CODE LLVM_OBJ EU_OBJ [OPTIONS...]: the eu-addr2line half of against.
against_eu() {
	local label=$1 code=$2 lobj=$3 eobj=$4
	shift 4
	"$PYTHON" "$ORACLE" compare --label "$label vs eu-addr2line" --lidiagen "$LIDIAGEN" \
		--lidia "$LIDIA_OUT" --code "$code" --oracle eu --eu-obj "$eobj" --consensus 1 \
		--llvm "$LLVM_SYMBOLIZER" --llvm-obj "$lobj" --min-names 100 --min-lines 100 "$@"
}

# quiet_run LABEL OUT_DIR INPUT... [OPTIONS]: lidiagen INPUT... -o OUT_DIR; RC, $OUT_DIR.err.
quiet_run() {
	local label=$1 dir=$2
	shift 2
	rm -rf "$dir"
	run "$dir" "$LIDIAGEN" -j 1 "$@" -o "$dir" --layout flat
}

# files_in DIR: how many .lidia files lidiagen wrote there.
files_in() { find "$1" -type f -name '*.lidia' 2>/dev/null | wc -l; }

# warnings_in FILE: the warning lines of a run.
warnings_in() { grep -c '^lidiagen: warning: ' "$1"; }

# skipped WHAT DIR PATTERN...: the quiet_run into DIR exited 0, wrote nothing
# and said one warning, and its messages match every PATTERN (grep).
skipped() {
	local what=$1 dir=$2 p bad=
	shift 2
	[ "$RC" -eq 0 ] && [ "$(files_in "$dir")" -eq 0 ] && [ "$(warnings_in "$dir.err")" -eq 1 ] ||
		bad=1
	for p in "$@"; do
		grep -q -- "$p" "$dir.err" || bad=1
	done
	if [ -z "$bad" ]; then
		ok "$what"
	else
		not_ok "$what" "exit $RC, $(files_in "$dir") files" "$(first_lines 5 "$dir.err")"
	fi
}

# ---- 1. Identical code folding, and sequences overlapping in part ----------
icf() {
	local d=$work/icf
	build icf gcc -O2 -g -ffunction-sections -fuse-ld=lld -Wl,--icf=all -Wl,--build-id \
		"$SRC/icf.c" -o "$d" || return
	if [ "$(nm "$d" | awk '$3 == "alpha" || $3 == "beta" { print $1 }' | sort -u | wc -l)" != 1 ]; then
		not_ok "icf: alpha and beta folded into one copy" "$(nm "$d" | grep -E 'alpha|beta')"
		return
	fi
	ok "icf: alpha and beta folded into one copy (their line sequences start at one address)"
	convert icf "$d" && against icf "$d" "$d" "$d"
	# beta's sequence 8 bytes before alpha's: they overlap in part.
	"$PYTHON" "$ORACLE" shift-seq "$d" "$d.overlap" -8 >"$d.shift" 2>&1 || {
		not_ok "icf: a sequence moved" "$(first_lines 5 "$d.shift")"
		return
	}
	note "icf-overlap: the second sequence at $(cat "$d.shift") moved to 8 bytes before it"
	convert icf-overlap "$d.overlap" && against_eu icf-overlap "$d.overlap" "$d.overlap" "$d.overlap"
}

# ---- 2. ppc64 ELFv1, every architecture claimed, one not ------------------
ppc64_elfv1() {
	local d=$work/desc-ppc64
	if ! command -v powerpc64-linux-gnu-gcc >/dev/null; then
		skip "ppc64 ELFv1: powerpc64-linux-gnu-gcc (gcc-powerpc64-linux-gnu) is not installed"
		return
	fi
	build ppc64-elfv1 powerpc64-linux-gnu-gcc -O2 -g -Wl,--build-id "$SRC/desc.c" -o "$d" || return
	if ! readelf -SW "$d" | grep -q ' \.opd '; then
		not_ok "ppc64 ELFv1: the program has .opd" "$(readelf -hW "$d" | grep Flags)"
		return
	fi
	convert ppc64-elfv1 "$d" &&
		against ppc64-elfv1 "$d" "$d" "$d" --objdump "$OBJDUMP16" --sections .init,.text,.fini
	# Stripped, with its debug file: the debug file's .opd has no bytes
	# (NOBITS), the stripped program's has them.
	build ppc64-elfv1-debug powerpc64-linux-gnu-objcopy --only-keep-debug "$d" "$d.debug" &&
		build ppc64-elfv1-strip powerpc64-linux-gnu-strip -s "$d" -o "$d-stripped" &&
		convert ppc64-elfv1-pair "$d-stripped" "$d.debug" &&
		against ppc64-elfv1-pair "$d" "$d" "$d" --objdump "$OBJDUMP16" --sections .init,.text,.fini
}

# arch TARGET: the freestanding program built for TARGET, compared.
arch() {
	local t=$1 d=$work/bare-$1 cflags="-O2 -g -gdwarf-aranges -ffreestanding -nostdlib"
	if [ "$t" = s390x-linux-gnu ]; then
		if ! command -v s390x-linux-gnu-ld >/dev/null; then
			skip "$t: s390x-linux-gnu-ld (binutils-s390x-linux-gnu) is not installed"
			return
		fi
		build "$t" clang --target="$t" $cflags -c "$SRC/bare.c" -o "$d.o" &&
			build "$t-link" s390x-linux-gnu-ld --build-id -e _start "$d.o" -o "$d" || return
	else
		build "$t" clang --target="$t" $cflags -fuse-ld=lld -static -Wl,--build-id \
			"$SRC/bare.c" -o "$d" || return
	fi
	case $t in
	riscv*)
		# Linker relaxation keeps .L labels in .symtab, which llvm-symbolizer
		# names as functions and lidiagen does not: the compiler's, dropped.
		"$OBJCOPY16" --discard-locals "$d" && note "$t: llvm-objcopy --discard-locals" ;;
	esac
	convert "$t" "$d" && against "$t" "$d" "$d" "$d" --objdump "$OBJDUMP16"
}

unsupported() {
	local t=hexagon-unknown-linux-musl d=$work/bare-hexagon o=$work/hexagon.out
	build hexagon clang --target=$t -O2 -g -ffreestanding -nostdlib -fuse-ld=lld -static \
		-Wl,--build-id "$SRC/bare.c" -o "$d" || return
	quiet_run hexagon "$o" "$d"
	skipped "hexagon (an architecture not claimed): one warning, nothing written, exit 0" "$o" \
		"ELF machine 164 is not an architecture lidiagen reads" '1 skipped (1 architecture not read)'
	# And through an index (which keeps the reason, not the machine).
	run "$work/hexagon-index" "$LIDIAGEN" index "$d" -o "$work/hexagon.jsonl"
	quiet_run hexagon-indexed "$o" --index "$work/hexagon.jsonl"
	skipped "hexagon through lidiagen index and --index: one warning, nothing written, exit 0" \
		"$o" "ELF machine is not an architecture lidiagen reads" \
		'1 skipped (1 architecture not read)'
}

# ---- 3. A prelinked pair: one build ID at two load addresses --------------
prelinked() {
	local d=$work/moved id=0123456789abcdef0123456789abcdef01234567 o=$work/moved-apart.out
	build moved gcc -O2 -g -shared -fPIC -Wl,--build-id=0x$id "$SRC/moved.c" -o "$d.so" &&
		build moved-high gcc -O2 -g -shared -fPIC -Wl,--build-id=0x$id \
			-Wl,-Ttext-segment=0x40000000 "$SRC/moved.c" -o "$d-high.so" &&
		build moved-2seg gcc -O2 -g -shared -fPIC -Wl,--build-id=0x$id -Wl,-z,noseparate-code \
			"$SRC/moved.c" -o "$d-2seg.so" &&
		build moved-debug objcopy --only-keep-debug "$d.so" "$d.debug" &&
		build moved-2seg-debug objcopy --only-keep-debug "$d-2seg.so" "$d-2seg.debug" &&
		build moved-high-strip strip -s "$d-high.so" -o "$d-high-stripped.so" || return
	mkdir -p "$work/debugroot/.build-id/${id:0:2}" &&
		cp "$d.debug" "$work/debugroot/.build-id/${id:0:2}/${id:2}.debug"
	# The debug file of the link at the default address, with the library
	# moved to 0x40000000 (prelink's doing): read at the library's
	# addresses, as libdwfl reads it (eu-addr2line finding the debug file by
	# build ID), and as llvm-symbolizer reads the moved link unstripped.
	convert moved "$d-high-stripped.so" "$d.debug" &&
		against moved "$d-high.so" "$d-high.so" "$d-high-stripped.so" \
			--eu-debuginfo-path "$work/debugroot"
	# A debug file of another layout (2 PT_LOAD segments, not 4): no bias
	# makes it the library's.
	quiet_run moved-apart "$o" "$d.so" "$d-2seg.debug"
	skipped "a debug file laid out apart from its binary: one warning naming both, nothing written" \
		"$o" "moved.so and .*moved-2seg.debug: a binary and its debug file laid out apart" \
		'1 skipped (1 debug file laid out apart)'
}

# ---- 4. No section headers ------------------------------------------------
no_section_headers() {
	local style=$1 d=$work/exported-$1 o=$work/exported-$1-default.out
	build "noshdr-$style" gcc -O2 -shared -fPIC -Wl,--build-id -Wl,--hash-style="$style" \
		"$SRC/exported.c" -o "$d.so" &&
		build "noshdr-$style-strip" strip --strip-all "$d.so" -o "$d-dynsym.so" &&
		build "noshdr-$style-sections" "$OBJCOPY16" --strip-sections "$d.so" "$d-noshdr.so" ||
		return
	if [ "$(readelf -hW "$d-noshdr.so" | awk '/Number of section headers/ { print $NF }')" != 0 ]; then
		not_ok "no section headers ($style hash): llvm-objcopy --strip-sections removed them"
		return
	fi
	quiet_run "noshdr-$style" "$o" "$d-noshdr.so"
	skipped "no section headers ($style hash): by default skipped with the .dynsym warning" "$o" \
		'only exported symbols (.dynsym), not written' '1 skipped (1 only .dynsym)'
	convert "noshdr-$style" "$d-noshdr.so" || return
	if [ "$(basename "$LIDIA_OUT" .lidia)" = "$(build_id "$d.so")" ]; then
		ok "no section headers ($style hash): keyed by its PT_NOTE build ID"
	else
		not_ok "no section headers ($style hash): keyed by its PT_NOTE build ID" \
			"$(basename "$LIDIA_OUT") for $(build_id "$d.so")"
	fi
	against "noshdr-$style" "$d-dynsym.so" "$d-dynsym.so" "$d-noshdr.so"
}

# ---- 5. Line programs no unit names --------------------------------------
unnamed_lines() {
	local d=$work/hand
	build hand-as as "$SRC/hand.s" -o "$d.o" &&
		build hand-main gcc -O2 -g -c "$SRC/handmain.c" -o "$d-main.o" &&
		build hand-nounit objcopy -R .debug_info -R .rela.debug_info -R .debug_aranges \
			-R .rela.debug_aranges -R .debug_abbrev -R .debug_str "$d.o" "$d-nounit.o" &&
		build hand-with gcc -Wl,--build-id "$d-main.o" "$d.o" -o "$d-with" &&
		build hand-without gcc -Wl,--build-id "$d-main.o" "$d-nounit.o" -o "$d-without" &&
		build hand-alone-with gcc -nostdlib -Wl,-e,hand_sum -Wl,--build-id "$d.o" -o "$d-alone-with" &&
		build hand-alone gcc -nostdlib -Wl,-e,hand_sum -Wl,--build-id "$d-nounit.o" -o "$d-alone" ||
		return
	if cmp -s <(objdump -d "$d-with" | tail -n +3) <(objdump -d "$d-without" | tail -n +3) &&
		! readelf -SW "$d-alone" | grep -q debug_info; then
		ok "unnamed line programs: the same code with and without the unit; one with .debug_line alone"
	else
		not_ok "unnamed line programs: the same code with and without the unit; one with .debug_line alone"
		return
	fi
	convert hand-without "$d-without" && against hand-without "$d-without" "$d-with" "$d-with"
	convert hand-alone "$d-alone" && against hand-alone "$d-alone" "$d-alone-with" "$d-alone-with"
	# Lines from line programs no subprogram covers (a unit of assembly) or
	# no unit names count as lines: before reading (the prediction) and after
	# (the level the output holds), so that a symbols-only object already at
	# the key is replaced, never kept as holding as much.
	local f t key fresh
	for f in "$d-alone" "$d-alone-with"; do
		t=$work/upgrade-$(basename "$f")
		rm -rf "$t" "$t.fresh"
		"$LIDIAGEN" -q --symbols-only "$f" -o "$t" >"$t.first" 2>&1
		"$LIDIAGEN" -q "$f" -o "$t" >"$t.out" 2>&1
		"$LIDIAGEN" -q "$f" -o "$t.fresh" >"$t.fresh.out" 2>&1
		key=$(find "$t" -type f -name "$(build_id "$f")*" | head -n 1)
		fresh=$(find "$t.fresh" -type f -name "$(build_id "$f")*" | head -n 1)
		if [ -n "$key" ] && [ -n "$fresh" ] && cmp -s "$key" "$fresh"; then
			ok "$(basename "$f"): a symbols-only object at its key is replaced by the one with lines"
		else
			not_ok "$(basename "$f"): a symbols-only object at its key is replaced by the one with lines" \
				"key '$key', fresh '$fresh'" "$(cat "$t.out")"
		fi
	done
}

# ---- 6. Line rows of code no unit claims ------------------------------------
unclaimed_rows() {
	local d=$work/unclaimed v
	build unclaimed-as as "$SRC/unclaimed.s" -o "$d.o" &&
		build unclaimed-aranges-as as --defsym ARANGES=1 "$SRC/unclaimed.s" -o "$d-ar.o" &&
		build unclaimed-link gcc -nostdlib -Wl,-e,uc_main -Wl,--build-id "$d.o" -o "$d" &&
		build unclaimed-aranges-link gcc -nostdlib -Wl,-e,uc_main -Wl,--build-id "$d-ar.o" \
			-o "$d-ar" ||
		return
	for v in "$d" "$d-ar"; do
		convert "$(basename "$v")" "$v" &&
			"$PYTHON" "$ORACLE" compare --label "$(basename "$v") vs llvm-symbolizer" \
				--lidiagen "$LIDIAGEN" --lidia "$LIDIA_OUT" --code "$v" \
				--llvm "$LLVM_SYMBOLIZER" --llvm-obj "$v" --min-names 100 --min-lines 100
	done
	d=$work/comdat
	for v in 1 2; do
		build "comdat-as-$v" as --defsym SIDE=$v "$SRC/comdat.s" -o "$d-$v.o" &&
			build "comdat-overlap-as-$v" as --defsym SIDE=$v --defsym OVERLAP=1 \
				"$SRC/comdat.s" -o "$d-overlap-$v.o" || return
	done
	build comdat-12 gcc -nostdlib -Wl,-e,cd_one -Wl,--build-id "$d-1.o" "$d-2.o" -o "$d-12" &&
		build comdat-21 gcc -nostdlib -Wl,-e,cd_one -Wl,--build-id "$d-2.o" "$d-1.o" -o "$d-21" &&
		build comdat-overlap gcc -nostdlib -Wl,-e,cd_one -Wl,--build-id "$d-overlap-1.o" \
			"$d-overlap-2.o" -o "$d-overlap" ||
		return
	for v in "$d-12" "$d-21" "$d-overlap"; do
		convert "$(basename "$v")" "$v" &&
			"$PYTHON" "$ORACLE" compare --label "$(basename "$v") vs llvm-symbolizer" \
				--lidiagen "$LIDIAGEN" --lidia "$LIDIA_OUT" --code "$v" \
				--llvm "$LLVM_SYMBOLIZER" --llvm-obj "$v" --min-names 100 --min-lines 100
	done
}

# ---- 7. Names of inlined code along origins and specifications -------------
# origins.s: declarations in a partial unit named by DW_FORM_strp, strx1 and
# string, reached across units (DW_FORM_ref_addr) and through one to three
# DIEs; read by lidiagen's own reader (name_chain.c), as libdw would.
origin_names() {
	local d=$work/origins
	build origins-as as "$SRC/origins.s" -o "$d.o" &&
		build origins-link gcc -nostdlib -Wl,-e,oc_main -Wl,--build-id "$d.o" -o "$d" ||
		return
	convert origins "$d" &&
		"$PYTHON" "$ORACLE" compare --label "origins vs llvm-symbolizer" \
			--lidiagen "$LIDIAGEN" --lidia "$LIDIA_OUT" --code "$d" \
			--llvm "$LLVM_SYMBOLIZER" --llvm-obj "$d" --min-names 100 --min-lines 100
}

icf
ppc64_elfv1
for t in x86_64-linux-gnu i386-linux-gnu aarch64-linux-gnu armv7a-linux-gnueabihf \
	thumbv7-linux-gnueabihf powerpc64le-linux-gnu powerpc64-linux-gnu powerpc-linux-gnu \
	riscv64-linux-gnu riscv32-linux-gnu mips64el-linux-gnuabi64 mips64-linux-gnuabi64 \
	mipsel-linux-gnu mips-linux-gnu s390x-linux-gnu; do
	arch "$t"
done
unsupported
prelinked
no_section_headers gnu
no_section_headers sysv
unnamed_lines
unclaimed_rows
origin_names
