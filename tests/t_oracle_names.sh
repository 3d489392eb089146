#!/usr/bin/env bash
# Names vs an independent oracle. Test programs (tests/fixtures/, built by the
# commands of tests/lib/fixtures.sh, printed below) are converted with
# lidiagen; at addresses sampled in every sized STT_FUNC symbol of the ELF
# (.symtab, else .dynsym: start, quarter points, last byte) the outermost
# frame of `lidiagen lookup --json` must name the function that
#   llvm-symbolizer (llvm-16) --obj=COPY --no-inlines --output-style=JSON
# names, where COPY is the binary without DWARF (objcopy --strip-debug; the
# stripped file itself for stripped variants), so that the oracle answers
# from the symbol table alone. llvm-symbolizer demangles, as lidia names must
# (spec section 5: "the demangled linkage name ... the name llvm-symbolizer
# prints"); set ORACLE_DEMANGLE=0 to compare raw symbol names instead.
# Go binaries: llvm-symbolizer gives linker symbol names, which Go's linker
# derives from the function's name by two rules (".abi0" appended for
# assembly functions; pclntab, the runtime and so Pyroscope write "[...]" for
# everything between the first '[' and the last ']'); the oracle's names are
# mapped by those rules (counted in "#" lines), and Go's own symbolizer,
# `go tool addr2line` on the binary, is a second oracle compared strictly.
# A variant passes only at 100% agreement. Addresses where the oracle has no
# name are counted apart; so are addresses whose nearest symbol is one that
# llvm-symbolizer names but that is no sized function (STT_NOTYPE, STT_OBJECT,
# a zero-size STT_FUNC label: oracle.c's asm_sum has both kinds inside it),
# with a "#" line for each such exclusion; there lidiagen must name the
# enclosing function instead, as the oracle names it at that function's start
# (a check of its own).
set -u
. "$(dirname "$0")/lib/common.sh"
. "$TESTS_LIB/fixtures.sh"

work=$(scratch out)
export GOCACHE=$TEST_TMP/go/cache GOPATH=$TEST_TMP/go/path GOENV=off GOTOOLCHAIN=local
demangle_opt=
[ "${ORACLE_DEMANGLE:-1}" = 0 ] && demangle_opt=--no-demangle
need_tool llvm-symbolizer "$LLVM_SYMBOLIZER" || exit 0
"$LLVM_SYMBOLIZER" --version 2>/dev/null | grep -q 'LLVM version 1[6-9]' ||
	note "warning: $LLVM_SYMBOLIZER is not llvm 16 or later: $("$LLVM_SYMBOLIZER" --version | head -2 | tr '\n' ' ')"

# compare LABEL SYMBOLS_ELF ORACLE_COPY INPUT...: convert INPUTs, compare.
compare() {
	local label=$1 syms=$2 copy=$3
	shift 3
	convert_one "names $label" "$work/$label" "$@" || return
	"$PYTHON" "$TESTS_LIB/lidiacheck.py" oracle $demangle_opt --go-tool "$GO" \
		"$LIDIAGEN" "$LLVM_SYMBOLIZER" "$label" "$LIDIA_OUT" "$syms" "$copy"
}

# oracle_copy ELF: ELF without DWARF, next to the other outputs; sets COPY.
oracle_copy() {
	COPY=$work/$(basename "$1").nodebug
	objcopy --strip-debug "$1" "$COPY" 2>"$COPY.err" || {
		not_ok "names: objcopy --strip-debug $1" "$(first_lines 5 "$COPY.err")"
		return 1
	}
}

for v in $FX_VARIANTS_C $FX_VARIANTS_CXX lib-gcc-O2 lib-stripped c-gcc-O2-stripped \
	c-rdynamic-stripped c-split go-exe go-pie; do
	case $v in
	go-*) need_tool go "$GO" || continue ;;
	esac
	if ! fx_build "$v"; then
		not_ok "names $v: fixture builds" "$FX_LOG"
		continue
	fi
	note "build $v: $(cat "$FX/.cmd")"
	case $v in
	lib-gcc-O2)
		oracle_copy "$FX/liboracle.so" && compare "$v" "$FX/liboracle.so" "$COPY" "$FX/liboracle.so"
		;;
	c-gcc-O2-stripped)
		# Nothing names its code (its .dynsym holds imports only): the
		# oracle finds no name for main, and lidiagen writes no file,
		# since an empty one would hide Pyroscope's other sources.
		main=$(nm "$FX/c-gcc-O2" | awk '$3 == "main" { print "0x" $1 }')
		name=$("$LLVM_SYMBOLIZER" --obj="$FX/$v" "$main" 2>/dev/null | head -n 1)
		d=$TEST_TMP/oracle-names-$v
		rm -rf "$d"
		"$LIDIAGEN" -j 1 "$FX/$v" -o "$d" --layout flat >"$d.out" 2>"$d.err" </dev/null
		rc=$?
		if [ "$name" = "??" ] && [ "$rc" -eq 0 ] && [ -z "$(find "$d" -type f 2>/dev/null)" ] &&
			grep -q "nothing to symbolize" "$d.err"; then
			ok "names $v: no name to give (llvm-symbolizer: ?? at main $main): no file, a warning"
		else
			not_ok "names $v: no name to give: no file, a warning" "oracle at $main: $name" \
				"exit $rc; files: $(find "$d" -type f 2>/dev/null)" "$(head -n 3 "$d.err")"
		fi
		;;
	lib-stripped | c-rdynamic-stripped)
		bin=$FX/$v
		[ "$v" = lib-stripped ] && bin=$FX/liboracle-stripped.so
		note "$v: oracle copy is the stripped file itself"
		compare "$v" "$bin" "$bin" "$bin"
		;;
	c-split)
		# The split pair converted together: one output, keyed by the
		# build ID both halves share; names as in the unsplit binary.
		id=$(build_id "$FX/c-split.full")
		if [ -n "$id" ] && [ "$(build_id "$FX/c-split")" = "$id" ] &&
			[ "$(build_id "$FX/c-split.debug")" = "$id" ]; then
			ok "names c-split: binary and debug file share build ID $id"
		else
			not_ok "names c-split: binary and debug file share build ID" \
				"full $id, stripped $(build_id "$FX/c-split"), debug $(build_id "$FX/c-split.debug")"
		fi
		oracle_copy "$FX/c-split.full" || continue
		compare "$v" "$FX/c-split.full" "$COPY" "$FX/c-split" "$FX/c-split.debug"
		if [ -n "$LIDIA_OUT" ]; then
			if [ "$(basename "$LIDIA_OUT")" = "$id.lidia" ]; then
				ok "names c-split: the pair gives one file, $id.lidia"
			else
				not_ok "names c-split: the pair gives one file, $id.lidia" "got $LIDIA_OUT"
			fi
		fi
		;;
	*)
		oracle_copy "$FX/$v" && compare "$v" "$FX/$v" "$COPY" "$FX/$v"
		;;
	esac
done
note "oracle: $LLVM_SYMBOLIZER --obj=COPY --no-inlines --output-style=JSON $demangle_opt (addresses on stdin)"
note "go: $GO; go builds ran with: $(fx_go_env)"

# Names with other Itanium prefixes: one to four underscores before the Z
# (Clang's blocks: ___Z..._block_invoke), which llvm-symbolizer demangles too.
bw=$(scratch blocks)
cat >"$bw/blocks.c" <<'SRC'
int blk(int x) __asm__("___Z4funcv_block_invoke");
int blk(int x) { return x * 3 + 1; }
int blk2(int x) __asm__("___Z3barIiEvT__block_invoke_2");
int blk2(int x) { return x * 5 + 2; }
int dbl(int x) __asm__("__Z4funcv");
int dbl(int x) { return x * 7 + 3; }
int main(int c, char **v) { (void)v; return blk(c) + blk2(c) + dbl(c); }
SRC
if gcc -O1 -fno-inline -Wl,--build-id -o "$bw/blocks" "$bw/blocks.c" 2>"$bw/cc.err" &&
	"$LIDIAGEN" -q "$bw/blocks" -o "$bw/out" --layout flat 2>"$bw/run.err"; then
	f=$(find "$bw/out" -type f | head -n 1)
	bad=
	for sym in ___Z4funcv_block_invoke ___Z3barIiEvT__block_invoke_2 __Z4funcv; do
		a=$(nm "$bw/blocks" | awk -v s="$sym" '$3 == s { print "0x" $1 }')
		want=$("$LLVM_SYMBOLIZER" --obj="$bw/blocks" --no-inlines "$a" | head -n 1)
		got=$("$LIDIAGEN" lookup "$f" "$a" | sed -E 's/^0x[0-9a-f]+: //; s/ at .*//')
		[ "$got" = "$want" ] || bad="$bad${bad:+; }$sym: lidiagen '$got', llvm-symbolizer '$want'"
	done
	if [ -z "$bad" ]; then
		ok "names: ___Z..._block_invoke and __Z names as llvm-symbolizer-16 prints them (3 of 3)"
	else
		not_ok "names: ___Z..._block_invoke and __Z names as llvm-symbolizer-16 prints them" "$bad"
	fi
else
	not_ok "names: the blocks program builds and converts" "$(cat "$bw/cc.err" "$bw/run.err")"
fi
