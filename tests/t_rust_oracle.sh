#!/usr/bin/env bash
# Rust: DWARF and names of a program rustc builds, against llvm-symbolizer-16.
#
# tests/fixtures/rust/prog.rs (generics, trait objects, closures, std's
# collections: -O inlines std into main in deep chains) is built with
# debuginfo=2 at opt-level 2, in both of rustc's symbol manglings (legacy,
# Itanium-like with a hash; v0, "_R"), and once split as a distribution ships
# it (objcopy --only-keep-debug, then strip). Each is converted, and the
# function-name chains, files and lines of every 4th instruction of .text
# agree with llvm-symbolizer-16 (whose demangler lidiagen uses) on the
# unstripped program (tests/lib/dwarf_oracle.py compare), and the file
# passes Pyroscope's reader. Every build command is printed.
set -u
. "$(dirname "$0")/lib/common.sh"

ORACLE=$TESTS_LIB/dwarf_oracle.py
w=$(scratch work)
rates=$w/rates.tsv

need_tool llvm-symbolizer "$LLVM_SYMBOLIZER" || exit 0
for t in rustc objcopy strip objdump; do
	need_tool "$t" "$t" || exit 0
done
note "$(rustc --version)"

# build NAME FLAGS...: prog.rs built into $w/NAME with rustc FLAGS.
build() {
	local name=$1
	shift
	local cmd="rustc -C opt-level=2 -C debuginfo=2 $* -C link-arg=-Wl,--build-id -o $name prog.rs"
	note "build: $cmd"
	if ! (cd "$w" && $cmd) >"$w/$name.log" 2>&1; then
		not_ok "$name: rustc builds the fixture" "$(first_lines 10 "$w/$name.log")"
		return 1
	fi
}

# check NAME PROG OBJ INPUT...: convert INPUT..., compare with llvm-symbolizer on OBJ.
check() {
	local name=$1 prog=$2 obj=$3
	shift 3
	convert_one "$name" "$w/out-$name" "$@" || return
	"$PYTHON" "$ORACLE" compare --label "rust $name" --lidiagen "$LIDIAGEN" --lidia "$LIDIA_OUT" \
		--code "$prog" --pyroscope "$PYROSCOPE_READER" --python "$PYTHON" --want-inlines 1 \
		--rates-file "$rates" --llvm "$LLVM_SYMBOLIZER" --llvm-obj "$obj" --eu-obj "$obj" --every 4
}

cp "$FIXTURES_SRC/rust/prog.rs" "$w/"
# rustc's default (legacy on stable; naming it needs -Z unstable-options).
if build legacy; then
	if [ "$(nm "$w/legacy" | grep -cE ' _ZN.*17h[0-9a-f]{16}E')" -gt 20 ]; then
		ok "legacy: rustc mangled its symbols in the legacy scheme (_ZN...17h<hash>E)"
	else
		not_ok "legacy: rustc mangled its symbols in the legacy scheme" "$(nm "$w/legacy" | head -5)"
	fi
	check legacy "$w/legacy" "$w/legacy" "$w/legacy"
fi
if build v0 -C symbol-mangling-version=v0; then
	# The program's own (std comes built, in rustc's default scheme).
	if [ "$(nm "$w/v0" | grep -c ' _R')" -gt 20 ]; then
		ok "v0: rustc mangled its symbols in the v0 scheme (_R...)"
	else
		not_ok "v0: rustc mangled its symbols in the v0 scheme" "$(nm "$w/v0" | head -5)"
	fi
	check v0 "$w/v0" "$w/v0" "$w/v0"
	note "split: objcopy --only-keep-debug v0 v0.debug; strip -o v0.stripped v0"
	if objcopy --only-keep-debug "$w/v0" "$w/v0.debug" && strip -o "$w/v0.stripped" "$w/v0"; then
		check split "$w/v0.stripped" "$w/v0" "$w/v0.stripped" "$w/v0.debug"
	else
		not_ok "split: the debug file splits off"
	fi
fi
