#!/usr/bin/env bash
# Inline frames, files and lines vs an independent oracle.
#
# The C and C++ programs of tests/fixtures/dwarf/ (static inline and
# always_inline helpers nested across headers, templates, a .c file #included
# from another, a function with a .cold part, recursion, function pointers,
# virtual calls, libstdc++ containers) are built with gcc and clang at -O0,
# -O2 and -O3 with DWARF 4 and 5, and in the shapes lidiagen must read:
# -gz=zlib, zstd-compressed sections (objcopy), a dwz pair with a common
# supplementary file (found by its .gnu_debugaltlink name, or by build ID
# under --debug-dir), split DWARF (DWARF 4 and 5; and with the .dwo files
# gone), a stripped binary with its debug file apart (given on the command
# line, found by build ID under --debug-dir, or by .gnu_debuglink in .debug/),
# and other shapes (clang -gline-tables-only, gcc -g1, a relative comp_dir,
# sources in subdirectories, --gc-sections, a shared library, non-PIE,
# .debug_types, LTO). Every build command is printed.
#
# For every instruction start of .text (objdump -d) the frames of
# `lidiagen lookup --json` are compared with
#   llvm-symbolizer (llvm-16) --obj=ELF --inlines --output-style=JSON
# (all addresses on stdin): the chain of function names (innermost first)
# must agree at >= 99.5% of the addresses, the file and line of every frame
# at >= 99%. Addresses where the oracle names no function at all (padding)
# are ignored and counted. Nothing is normalised. Up to 10 disagreements are
# listed as "#" lines, each with eu-addr2line's answer as a second opinion,
# and a table of all rates ends the output.
#
# llvm-symbolizer 16 cannot follow .gnu_debugaltlink, so each program of the
# dwz pair is compared (1) with llvm-symbolizer on the same program before dwz
# (same code; the same debug information before dwz moved part of it out), and
# (2) with eu-addr2line -a -i -f -C on the dwz'd file itself, counting only
# the addresses where eu-addr2line and llvm-symbolizer (1) agree with each
# other: eu-addr2line names a function after its DWARF subprogram where
# llvm-symbolizer and lidia use the symbol (f.cold, f.constprop.0), gives no
# file where llvm-symbolizer gives the unit's (crtstuff.c:0), and demangles
# templates as "> >". The excluded addresses are counted and shown.
#
# Every file must also pass Pyroscope's reader (pyroscope_reader, common.sh)
# and give, at every sampled address, lidiagen lookup's chain of names.
#
# Robustness: .debug_info / .debug_line damaged in several ways, plain and
# compressed (zlib, zstd) (`tests/lib/dwarf_oracle.py modes [compressed]`):
# lidiagen, and its sanitizer build $BUILD/san-address-undefined/lidiagen when there is one,
# must not crash, must exit 0 or 1 with a message, and must write a file that
# names every sized .text function symbol as .symtab does.
set -u
. "$(dirname "$0")/lib/common.sh"

ORACLE=$TESTS_LIB/dwarf_oracle.py
SRC=$FIXTURES_SRC/dwarf
work=$(scratch work)
rates=$work/rates.tsv
: >"$rates"
# Variants run in parallel, DWARF_ORACLE_JOBS at a time (default: the CPUs, at most 4).
JOBS=${DWARF_ORACLE_JOBS:-$(nproc 2>/dev/null || echo 2)}
[ "$JOBS" -gt 4 ] && JOBS=4

need_tool llvm-symbolizer "$LLVM_SYMBOLIZER" || exit 0
for t in gcc g++ clang clang++ objdump objcopy strip eu-addr2line; do
	need_tool "$t" "$t" || exit 0
done
"$LLVM_SYMBOLIZER" --version 2>/dev/null | grep -q 'LLVM version 1[6-9]' ||
	note "warning: $LLVM_SYMBOLIZER is not llvm 16 or later: $("$LLVM_SYMBOLIZER" --version | head -2 | tr '\n' ' ')"

# build DIR CMD...: copy the fixture sources to DIR and run CMD (its words
# joined by spaces) there.
build() {
	local dir=$1 cmd
	shift
	cmd="$*"
	rm -rf "$dir"
	mkdir -p "$dir"
	cp "$SRC"/* "$dir"/
	note "build: $cmd"
	if ! (cd "$dir" && bash -c "$cmd") >"$dir/build.log" 2>&1; then
		not_ok "$(basename "$dir"): fixture builds" "$cmd" "$(first_lines 15 "$dir/build.log")"
		return 1
	fi
}

# convert LABEL OUTDIR ARGS...: lidiagen ARGS -o OUTDIR --layout flat; sets LIDIA.
convert() {
	local label=$1 out=$2
	shift 2
	rm -rf "$out"
	mkdir -p "$out"
	"$LIDIAGEN" -q "$@" -o "$out" --layout flat >"$out.out" 2>"$out.err" </dev/null
	local rc=$? files
	files=$(find "$out" -type f -name '*.lidia' | sort)
	LIDIA=
	if [ "$rc" -ne 0 ] || [ "$(printf '%s' "$files" | grep -c .)" -ne 1 ]; then
		not_ok "$label: lidiagen converts it to one file" \
			"lidiagen -q $* -o $out --layout flat: exit $rc" \
			"files: ${files:-none}" "$(first_lines 10 "$out.err")"
		return 1
	fi
	LIDIA=$files
}

# compare LABEL CODE_ELF [ORACLE OPTIONS...]: compare $LIDIA with the oracle.
compare() {
	local label=$1 code=$2
	shift 2
	"$PYTHON" "$ORACLE" compare --label "$label" --lidiagen "$LIDIAGEN" --lidia "$LIDIA" \
		--code "$code" --pyroscope "$PYROSCOPE_READER" --python "$PYTHON" \
		--want-inlines 1 --rates-file "$rates" "$@"
}

llvm_vs() { # LABEL CODE OBJ: llvm-symbolizer on OBJ, eu-addr2line on OBJ as second opinion
	compare "$1" "$2" --llvm "$LLVM_SYMBOLIZER" --llvm-obj "$3" --eu-obj "$3"
}

# expect_chtype LABEL ELF SECTION WANT: the section is compressed as WANT.
expect_chtype() {
	local got
	got=$("$PYTHON" "$ORACLE" chtype "$2" "$3" 2>&1)
	if [ "$got" = "$4" ]; then
		ok "$1: $3 is $4-compressed"
	else
		not_ok "$1: $3 is $4-compressed" "got: $got"
	fi
}

compiler() { # LANG CC: the driver
	case $1-$2 in
	c-gcc) echo gcc ;; c-clang) echo clang ;;
	cxx-gcc) echo g++ ;; cxx-clang) echo clang++ ;;
	esac
}
source_of() { [ "$1" = c ] && echo dw_main.c || echo dw_prog.cpp; }

# --- one function per kind of variant; each prints its own results ---------

v_plain() { # LANG CC OPT DWARF
	local name=$1-$2-O$3-dw$4 d=$work/$1-$2-O$3-dw$4
	build "$d" "$(compiler "$1" "$2") -O$3 -gdwarf-$4 -Wl,--build-id -o prog $(source_of "$1")" || return
	convert "$name" "$d/out" "$d/prog" || return
	llvm_vs "$name" "$d/prog" "$d/prog"
}

v_flags() { # NAME LANG CC FLAGS [SETUP]: one program built with FLAGS, after SETUP
	local name=$1 d=$work/$1 src
	src=$(source_of "$2")
	[ -n "${5:-}" ] && src=src/$src
	build "$d" ${5:+"$5 &&"} "$(compiler "$2" "$3") $4 -Wl,--build-id -o prog $src" || return
	convert "$name" "$d/out" "$d/prog" || return
	llvm_vs "$name" "$d/prog" "$d/prog"
}

v_zlib() { # LANG CC
	local name=$1-$2-O2-zlib d=$work/$1-$2-O2-zlib
	build "$d" "$(compiler "$1" "$2") -O2 -g -gz=zlib -Wl,--build-id -o prog $(source_of "$1")" || return
	expect_chtype "$name" "$d/prog" .debug_info zlib
	convert "$name" "$d/out" "$d/prog" || return
	llvm_vs "$name" "$d/prog" "$d/prog"
}

v_zstd() { # LANG CC
	local name=$1-$2-O2-zstd d=$work/$1-$2-O2-zstd
	build "$d" "$(compiler "$1" "$2") -O2 -g -Wl,--build-id -o prog.plain $(source_of "$1")" \
		"&& objcopy --compress-debug-sections=zstd prog.plain prog" || return
	expect_chtype "$name" "$d/prog" .debug_info zstd
	convert "$name" "$d/out" "$d/prog" || return
	llvm_vs "$name" "$d/prog" "$d/prog"
}

v_split() { # LANG CC DWARF [nodwo]: split DWARF; nodwo: the .dwo files deleted
	local name=$1-$2-O2-split-dw$3${4:+-$4} d=$work/$1-$2-O2-split-dw$3${4:+-$4} n
	build "$d" "$(compiler "$1" "$2") -O2 -gdwarf-$3 -gsplit-dwarf -Wl,--build-id -o prog $(source_of "$1")" \
		${4:+"&& rm *.dwo"} || return
	n=$(find "$d" -name '*.dwo' | wc -l)
	if [ -n "${4:-}" ]; then
		note "$name: no .dwo file: the skeleton units and the line table only"
	elif [ "$n" -gt 0 ]; then
		ok "$name: the build wrote $n .dwo file(s) apart"
	else
		not_ok "$name: the build wrote .dwo files apart" "$(ls "$d")"
	fi
	convert "$name" "$d/out" "$d/prog" || return
	if [ -n "${4:-}" ]; then
		# No inline frame anywhere, as the oracle says; do not ask for any.
		"$PYTHON" "$ORACLE" compare --label "$name" --lidiagen "$LIDIAGEN" --lidia "$LIDIA" \
			--code "$d/prog" --pyroscope "$PYROSCOPE_READER" --python "$PYTHON" \
			--rates-file "$rates" --llvm "$LLVM_SYMBOLIZER" --llvm-obj "$d/prog" --eu-obj "$d/prog"
	else
		llvm_vs "$name" "$d/prog" "$d/prog"
	fi
}

v_debuglink() { # LANG CC OPT
	local name=$1-$2-O$3-debuglink d=$work/$1-$2-O$3-debuglink id a b
	build "$d" "$(compiler "$1" "$2") -O$3 -g -Wl,--build-id -o prog.full $(source_of "$1")" \
		"&& objcopy --only-keep-debug prog.full prog.debug && strip -o prog prog.full" \
		"&& objcopy --add-gnu-debuglink=prog.debug prog" || return
	id=$(build_id "$d/prog")
	# Only the stripped file, alone in its directory; its debug file in a
	# .build-id tree under another root.
	mkdir -p "$d/alone" "$d/root/.build-id/${id:0:2}"
	cp "$d/prog" "$d/alone/prog"
	cp "$d/prog.debug" "$d/root/.build-id/${id:0:2}/${id:2}.debug"
	note "$name: stripped file alone in alone/, debug file at root/.build-id/${id:0:2}/${id:2}.debug"
	# And found by its .gnu_debuglink name only: DIR/.debug/prog.debug.
	mkdir -p "$d/linked/.debug" "$d/empty"
	cp "$d/prog" "$d/linked/prog"
	cp "$d/prog.debug" "$d/linked/.debug/prog.debug"
	if convert "$name (binary + debug file)" "$d/out-pair" "$d/prog" "$d/prog.debug"; then
		a=$LIDIA
		llvm_vs "$name (binary + debug file)" "$d/prog" "$d/prog.full"
	fi
	if convert "$name (--debug-dir build-id tree)" "$d/out-dir" "$d/alone/prog" --debug-dir "$d/root"; then
		b=$LIDIA
		llvm_vs "$name (--debug-dir build-id tree)" "$d/alone/prog" "$d/prog.full"
		if [ -n "${a:-}" ]; then
			if cmp -s "$a" "$b"; then
				ok "$name: the debug file found by build ID gives the same bytes as naming it"
			else
				not_ok "$name: the debug file found by build ID gives the same bytes as naming it" \
					"$(cmp "$a" "$b" 2>&1)"
			fi
		fi
	fi
	if convert "$name (.gnu_debuglink, .debug/)" "$d/out-link" "$d/linked/prog" --debug-dir "$d/empty"; then
		llvm_vs "$name (.gnu_debuglink, .debug/)" "$d/linked/prog" "$d/prog.full"
	fi
}

v_dwz() { # LANG CC: two programs, one common supplementary file
	local name=$1-$2-O2-dwz d=$work/$1-$2-O2-dwz src flags p id
	src=$(source_of "$1")
	flags="-O2 -gdwarf-4"
	build "$d" "$(compiler "$1" "$2") $flags -DDW_VARIANT=1 -Wl,--build-id -o a $src" \
		"&& $(compiler "$1" "$2") $flags -DDW_VARIANT=2 -Wl,--build-id -o b $src" \
		"&& cp a a.orig && cp b b.orig && dwz -m common.debug a b" || return
	if [ -s "$d/common.debug" ] && readelf -S "$d/a" | grep -q gnu_debugaltlink &&
		readelf -S "$d/b" | grep -q gnu_debugaltlink; then
		ok "$name: dwz moved common DIEs of a and b to common.debug (.gnu_debugaltlink)"
	else
		not_ok "$name: dwz moved common DIEs of a and b to common.debug" "$(ls -l "$d")"
		return
	fi
	for p in a b; do
		# Converted from another directory: the relative .gnu_debugaltlink
		# path is relative to the binary's directory, not to the cwd.
		(cd / && convert "$name $p" "$d/out-$p" "$d/$p") || continue
		LIDIA=$(find "$d/out-$p" -type f -name '*.lidia')
		compare "$name $p (vs llvm-symbolizer on $p before dwz)" "$d/$p" \
			--llvm "$LLVM_SYMBOLIZER" --llvm-obj "$d/$p.orig" --eu-obj "$d/$p"
		compare "$name $p (vs eu-addr2line on $p where llvm-symbolizer before dwz agrees)" \
			"$d/$p" --oracle eu --eu-obj "$d/$p" \
			--llvm "$LLVM_SYMBOLIZER" --llvm-obj "$d/$p.orig" --consensus 1
	done
	# The supplementary file found by its build ID under --debug-dir, not
	# by the name .gnu_debugaltlink gives.
	id=$(build_id "$d/common.debug")
	if [ -z "$id" ]; then
		not_ok "$name: common.debug has a build ID" "$(readelf -n "$d/common.debug" 2>&1 | head -5)"
		return
	fi
	mkdir -p "$d/moved" "$d/root/.build-id/${id:0:2}"
	cp "$d/a" "$d/moved/a"
	cp "$d/common.debug" "$d/root/.build-id/${id:0:2}/${id:2}.debug"
	note "$name: a alone in moved/, common.debug at root/.build-id/${id:0:2}/${id:2}.debug"
	convert "$name a (common.debug by build ID)" "$d/out-moved" "$d/moved/a" --debug-dir "$d/root" || return
	compare "$name a (common.debug by build ID, vs llvm-symbolizer on a before dwz)" "$d/moved/a" \
		--llvm "$LLVM_SYMBOLIZER" --llvm-obj "$d/a.orig" --eu-obj "$d/a"
}

v_corrupt() { # KIND (dw4, dw5, zlib, zstd): damage copies in every mode; lidiagen must survive
	local d=$work/corrupt-$1 mode desc bins bin out rc label modes=
	case $1 in
	dw4 | dw5) build "$d" "gcc -O2 -gdwarf-${1#dw} -Wl,--build-id -o prog dw_main.c" || return ;;
	zlib) build "$d" "gcc -O2 -g -gz=zlib -Wl,--build-id -o prog dw_main.c" || return ;;
	zstd) build "$d" "gcc -O2 -g -Wl,--build-id -o prog.plain dw_main.c" \
		"&& objcopy --compress-debug-sections=zstd prog.plain prog" || return ;;
	esac
	case $1 in zlib | zstd) modes=compressed ;; esac
	"$PYTHON" "$ORACLE" funcs "$d/prog" >"$d/funcs"
	bins=$LIDIAGEN
	if [ -x "$BUILD/san-address-undefined/lidiagen" ]; then
		bins="$bins $BUILD/san-address-undefined/lidiagen"
	else
		note "corrupt-$1: no sanitizer build at $BUILD/san-address-undefined/lidiagen; $LIDIAGEN only"
	fi
	while IFS=$'\t' read -r mode desc; do
		"$PYTHON" "$ORACLE" corrupt "$d/prog" "$d/prog.$mode" "$mode" >"$d/corrupt.err" 2>&1 || {
			not_ok "corrupt-$1 $mode: fixture damaged" "$desc" "$(first_lines 3 "$d/corrupt.err")"
			continue
		}
		for bin in $bins; do
			label="corrupt-$1 $mode ($desc)"
			[ "$bin" = "$LIDIAGEN" ] || label="$label [sanitizer build]"
			out=$d/out-$mode-$(basename "$(dirname "$bin")")
			rm -rf "$out"
			mkdir -p "$out"
			ASAN_OPTIONS=detect_leaks=0:exitcode=86 UBSAN_OPTIONS=halt_on_error=1:exitcode=87 \
				timeout 60 "$bin" -q "$d/prog.$mode" -o "$out" --layout flat \
				>"$out.out" 2>"$out.err" </dev/null
			rc=$?
			if [ "$rc" -le 1 ] && ! grep -q -E 'Sanitizer|runtime error' "$out.err" &&
				{ [ "$rc" -eq 0 ] || grep -q . "$out.err"; }; then
				ok "$label: exit $rc, no crash$([ "$rc" -ne 0 ] && echo ", says: $(head -1 "$out.err")")"
			else
				not_ok "$label: exits 0, or 1 with a message, without crashing" \
					"exit $rc" "$(first_lines 12 "$out.err")"
			fi
			[ "$rc" -eq 0 ] && [ -s "$out.err" ] && note "stderr: $(head -3 "$out.err")"
			LIDIA=$(find "$out" -type f -name '*.lidia' | head -1)
			if [ -z "$LIDIA" ]; then
				not_ok "$label: still writes a file with the symbol table's names" "no file written"
				continue
			fi
			check_symnames "$label" "$d/funcs" "$LIDIA"
		done
	done < <("$PYTHON" "$ORACLE" modes $modes)
}

# check_symnames LABEL FUNCS LIDIA: the outermost frame at each symbol's
# address names that symbol; Pyroscope's reader accepts the file.
check_symnames() {
	local label=$1 funcs=$2 lidia=$3 bad
	bad=$(cut -d' ' -f1 "$funcs" | "$LIDIAGEN" lookup --json "$lidia" 2>&1 |
		"$PYTHON" -c '
import json, sys
want = {}
for l in open(sys.argv[1]):
    a, n = l.split(" ", 1)
    want.setdefault(int(a, 16), set()).add(n.strip())
seen = 0
for l in sys.stdin:
    try:
        d = json.loads(l)
    except ValueError:
        print("not JSON: " + l.strip()); continue
    a = int(d["address"], 16); seen += 1
    fr = d.get("frames") or [{}]
    if fr[-1].get("function") not in want.get(a, ()):
        print("0x%x: symbol %s, lidiagen %s" % (a, "/".join(sorted(want.get(a, ()))),
              " <- ".join(f.get("function", "?") for f in d.get("frames", []))))
if seen != len(want):
    print("%d of %d addresses answered" % (seen, len(want)))
' "$funcs")
	if [ -z "$bad" ]; then
		ok "$label: the file names all $(wc -l <"$funcs") .text function symbols as .symtab does"
	else
		not_ok "$label: the file names all .text function symbols as .symtab does" "$(head -10 <<<"$bad")"
	fi
	if pyroscope_reader "$lidia" >/dev/null 2>"$lidia.pyerr"; then
		ok "$label: Pyroscope's reader accepts the file"
	else
		not_ok "$label: Pyroscope's reader accepts the file" "$(first_lines 3 "$lidia.pyerr")"
	fi
}

# --- run the variants, $JOBS at a time; print their results in order -------

variants=()
for lang in c cxx; do
	for cc in gcc clang; do
		for o in 0 2 3; do
			for dw in 4 5; do
				variants+=("v_plain $lang $cc $o $dw")
			done
		done
	done
done
variants+=("v_zlib c gcc" "v_zlib cxx clang" "v_zstd c gcc" "v_zstd cxx gcc"
	"v_split c gcc 4" "v_split c gcc 5" "v_split cxx gcc 5" "v_split c clang 4"
	"v_split cxx clang 5" "v_split c gcc 5 nodwo"
	"v_debuglink c gcc 2" "v_debuglink cxx clang 3")
# Other shapes of the same programs. gmlt: clang -gline-tables-only writes no
# DW_TAG_subprogram for a function that inlines nothing; its rows are still in
# the line table. relmap: a relative DW_AT_comp_dir ("."), as reproducible
# distribution builds make. subdir: sources in src/, headers in inc/.
variants+=(
	"v_flags c-clang-O0-gmlt c clang -O0~-gline-tables-only"
	"v_flags c-clang-O2-gmlt c clang -O2~-gline-tables-only"
	"v_flags cxx-clang-O2-gmlt cxx clang -O2~-gline-tables-only"
	"v_flags c-gcc-O2-g1 c gcc -O2~-g1"
	"v_flags c-gcc-O2-relmap c gcc -O2~-g~-ffile-prefix-map=\$PWD=."
	"v_flags c-clang-O2-relmap c clang -O2~-g~-ffile-prefix-map=\$PWD=."
	"v_flags cxx-gcc-O2-relmap-dw4 cxx gcc -O2~-gdwarf-4~-ffile-prefix-map=\$PWD=."
	"v_flags c-gcc-O2-subdir c gcc -O2~-g~-Iinc subdir"
	"v_flags cxx-clang-O2-subdir-dw4 cxx clang -O2~-gdwarf-4~-Iinc subdir"
	"v_flags c-gcc-O2-gc-sections c gcc -O2~-g~-ffunction-sections~-Wl,--gc-sections"
	"v_flags c-gcc-O2-shared c gcc -O2~-g~-fPIC~-shared"
	"v_flags cxx-gcc-O2-nopie cxx gcc -O2~-g~-no-pie"
	"v_flags cxx-gcc-O2-types cxx gcc -O2~-gdwarf-4~-fdebug-types-section"
	"v_flags c-gcc-O2-lto c gcc -O2~-g~-flto"
)
if command -v dwz >/dev/null 2>&1; then
	variants+=("v_dwz c gcc" "v_dwz cxx gcc")
else
	skip "dwz pair: dwz is not installed"
fi
variants+=("v_corrupt dw4" "v_corrupt dw5" "v_corrupt zlib" "v_corrupt zstd")
# run_variant I WORDS...: one variant, its output to log.I, its rates to
# rates.I. In WORDS, '~' stands for a space inside FLAGS, and "subdir" for
# moving the sources to src/ and the headers to inc/ before the build.
run_variant() {
	local i=$1 a
	shift
	local args=()
	for a in "$@"; do
		case $a in
		subdir) a="mkdir -p src inc && mv dw_*.h dw_*.hpp inc/ && mv dw_*.c dw_*.cpp src/" ;;
		*) a=${a//\~/ } ;;
		esac
		args+=("$a")
	done
	rates=$work/rates.$i
	"${args[@]}" >"$work/log.$i" 2>&1
}

i=0
for v in "${variants[@]}"; do
	while [ "$(jobs -rp | wc -l)" -ge "$JOBS" ]; do
		wait -n
	done
	# shellcheck disable=SC2086 # a variant is words
	run_variant "$i" $v &
	i=$((i + 1))
done
wait
for ((k = 0; k < i; k++)); do
	cat "$work/log.$k"
	[ -f "$work/rates.$k" ] && cat "$work/rates.$k" >>"$rates"
done

# A table of the rates, one line per comparison.
note "" "agreement: names%, file+line%, addresses counted for each, ignored (no function)," \
	"excluded (dwz: the two oracles disagree), addresses with inline frames:"
while IFS=$'\t' read -r label who pn pl nn nl ign split inl; do
	note "$(printf '%-70s %-19s %6s %6s %5s %5s %4s %4s %5s' "$label" "$who" "$pn" "$pl" "$nn" "$nl" "$ign" "$split" "$inl")"
done <"$rates"
note "oracle: $LLVM_SYMBOLIZER --obj=ELF --inlines --output-style=JSON (addresses on stdin);" \
	"second opinion and dwz oracle: eu-addr2line -a -i -f -C -e ELF ($(eu-addr2line --version | head -1))"
