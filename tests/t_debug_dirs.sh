#!/usr/bin/env bash
# Debug files wherever a package puts them (issue 14, part 5).
#
# Path layout: a package unpacked anywhere, ROOT/usr/bin/prog with its debug
# file at ROOT/usr/lib/debug/usr/bin/prog (some Debian -dbg packages, e.g.
# cdcd-dbg in Debian 12) or .../prog.debug, and only --debug-dir
# ROOT/usr/lib/debug given: the debug file is found (by .gnu_debuglink's name,
# or without one by the binary's own name) and the file's frames, files and
# lines agree with llvm-symbolizer on the unstripped program; from a relative
# path, from another unpack directory, from a .deb member; the same bytes as
# the batch pairing by build ID (-r ROOT). A debug file of another build at
# that place is refused with a warning naming it (symbols only), and the batch
# does not pair it. Built here from tests/fixtures/dwarf/dw_main.c:
#
#   gcc -O2 -g -Wl,--build-id -o prog.full dw_main.c
#   objcopy --only-keep-debug prog.full prog.debug; strip -o prog prog.full
#   objcopy --add-gnu-debuglink=prog.debug prog    (or none)
#
# DWARF packages (.dwp): split DWARF (-gsplit-dwarf) with its .dwo files is
# read through the skeleton units (llvm-symbolizer agrees); with its .dwo files
# gone and only prog.dwp beside it (dwp for DWARF 4, llvm-dwp-16 for DWARF 5),
# the package is read (cut into .dwo files in a private directory that libdw
# reads: lib/input/dwp_unpack.h): no warning, the same bytes as from the .dwo
# files, inline chains and every frame's file:line agree with
# llvm-symbolizer (which reads the package), and nothing is left in TMPDIR.
# A package that is damaged, or whose skeleton names its .dwo "../../a.dwo",
# is not read: a warning names it, line rows are kept, nothing is written
# outside the private directory. Split DWARF with one .dwo of four gone:
# one warning naming it, no inline frame (the file rates as lines), and the
# run with all four replaces it.
set -u
. "$(dirname "$0")/lib/common.sh"

need_tool llvm-symbolizer "$LLVM_SYMBOLIZER" || exit 0
for t in gcc objcopy objdump strip dpkg-deb; do
	need_tool "$t" "$t" || exit 0
done
ORACLE=$TESTS_LIB/dwarf_oracle.py
w=$(scratch work)
cp "$FIXTURES_SRC"/dwarf/dw_main.c "$FIXTURES_SRC"/dwarf/dw_part.c "$FIXTURES_SRC"/dwarf/dw_*.h "$w/"
cd "$w" || exit 0

# mk CMD...: run a fixture command in $w, recorded; fail the script if it fails.
mk() {
	echo "$*" >>commands.txt
	if ! bash -c "$*" >>build.log 2>&1; then
		not_ok "fixtures build: $*" "$(tail -n 5 build.log)"
		exit 0
	fi
}
mk "gcc -O2 -g -Wl,--build-id -o prog.full dw_main.c"
mk "objcopy --only-keep-debug prog.full prog.debug && strip -o prog.nolink prog.full"
mk "objcopy --add-gnu-debuglink=prog.debug prog.nolink prog"
# Another build of the same program: the same names, another build ID.
mk "gcc -O2 -g -DDW_VARIANT=2 -Wl,--build-id -o other.full dw_main.c"
mk "objcopy --only-keep-debug other.full other.debug"
note "fixtures built with:" "$(cat commands.txt)"
ID=$(build_id prog)

# layout ROOT BINARY DEBUG-NAME DEBUG-FILE: ROOT/usr/bin/prog and ROOT/usr/lib/debug/usr/bin/DEBUG-NAME.
layout() {
	mkdir -p "$1/usr/bin" "$1/usr/lib/debug/usr/bin"
	cp "$2" "$1/usr/bin/prog"
	cp "$4" "$1/usr/lib/debug/usr/bin/$3"
}
layout pkg prog prog prog.debug
objcopy --remove-section=.gnu_debuglink prog pkg/usr/bin/prog
objcopy --add-gnu-debuglink=pkg/usr/lib/debug/usr/bin/prog pkg/usr/bin/prog # as dh_strip: "prog"
layout dotdebug prog prog.debug prog.debug
layout nolink prog.nolink prog prog.debug # no .gnu_debuglink: found by the binary's own name
layout nolink2 prog.nolink prog.debug prog.debug
layout wrong prog prog.debug other.debug # another build's debug file, named as the link says
mkdir -p apart/usr/bin && cp pkg/usr/bin/prog apart/usr/bin/prog

# lines FILE: line rows of a lidia file.
rows() { "$LIDIAGEN" info "$1" 2>/dev/null | sed -n 's/.* \([0-9][0-9]*\) line rows.*/\1/p'; }
# oracle LABEL LIDIA CODE: frames, files and lines as llvm-symbolizer gives them from prog.full.
oracle() {
	"$PYTHON" "$ORACLE" compare --label "$1" --lidiagen "$LIDIAGEN" --lidia "$2" --code "$3" \
		--pyroscope "$PYROSCOPE_READER" --python "$PYTHON" --want-inlines 1 \
		--llvm "$LLVM_SYMBOLIZER" --llvm-obj "$w/prog.full"
}
# conv OUT INPUT ARGS...: lidiagen INPUT ARGS -o OUT --layout flat (stderr in OUT.err);
# LIDIA_OUT is the one file written, or empty.
conv() {
	local out=$1
	shift
	rm -rf "$out"
	"$LIDIAGEN" "$@" -o "$out" --layout flat >"$out.out" 2>"$out.err" </dev/null
	RC=$?
	LIDIA_OUT=$(find "$out" -type f -name '*.lidia' 2>/dev/null | head -n 1)
}
# found LABEL OUT INPUT ARGS...: lidiagen INPUT ARGS finds the debug file (no warning, inline frames).
found() {
	local label=$1 out=$2
	shift 2
	conv "$out" "$@"
	if [ "$RC" -eq 0 ] && [ -n "$LIDIA_OUT" ] && grep -q ' 0 warnings; 0 failed$' "$out.err" &&
		"$LIDIAGEN" info "$LIDIA_OUT" | grep -q 'holds .*inline frames'; then
		return 0
	fi
	not_ok "$label: its debug file is found (inline frames, no warning)" "exit $RC" \
		"$("$LIDIAGEN" info "$LIDIA_OUT" 2>&1 | grep holds)" "$(first_lines 5 "$out.err")"
	return 1
}

# ---- path layout ------------------------------------------------------------------
if found "path layout (usr/lib/debug/usr/bin/prog, link 'prog')" "$w/o-pkg" pkg/usr/bin/prog \
	--debug-dir "$w/pkg/usr/lib/debug"; then
	PKG=$LIDIA_OUT
	oracle "path layout: pkg/usr/bin/prog, --debug-dir pkg/usr/lib/debug" "$PKG" pkg/usr/bin/prog
fi
for v in "dotdebug:link 'prog.debug', usr/lib/debug/usr/bin/prog.debug" \
	"nolink:no .gnu_debuglink, usr/lib/debug/usr/bin/prog" \
	"nolink2:no .gnu_debuglink, usr/lib/debug/usr/bin/prog.debug"; do
	d=${v%%:*}
	if found "path layout ($d)" "$w/o-$d" "$d/usr/bin/prog" --debug-dir "$w/$d/usr/lib/debug"; then
		oracle "path layout: ${v#*:}" "$LIDIA_OUT" "$d/usr/bin/prog"
	fi
done

# The same file from a relative path and root, from another unpack directory, from a .deb.
check_same() { # LABEL FILE
	if [ -n "${PKG:-}" ] && cmp -s "$PKG" "$2"; then
		ok "$1: the same bytes"
	else
		not_ok "$1: the same bytes" "$(cmp "${PKG:-/dev/null}" "$2" 2>&1)"
	fi
}
mkdir -p sub
if (cd sub && found "relative" ../o-rel ../pkg/usr/bin/prog --debug-dir ../pkg/usr/lib/debug); then
	check_same "path layout from a relative path and --debug-dir" "$(find o-rel -type f -name '*.lidia')"
fi
if found "apart" "$w/o-apart" apart/usr/bin/prog --debug-dir "$w/pkg/usr/lib/debug"; then
	check_same "path layout: the binary unpacked elsewhere (apart/usr/bin/prog)" "$LIDIA_OUT"
fi
mkdir -p debroot/DEBIAN && cp -R apart/usr debroot/
printf 'Package: prog\nVersion: 1\nArchitecture: amd64\nMaintainer: t <t@t>\nDescription: t\n' \
	>debroot/DEBIAN/control
if dpkg-deb --root-owner-group -Zxz --build debroot prog.deb >>build.log 2>&1 &&
	found "deb" "$w/o-deb" prog.deb --debug-dir "$w/pkg/usr/lib/debug"; then
	check_same "path layout: the binary a .deb member (prog.deb!data.tar.xz!./usr/bin/prog)" "$LIDIA_OUT"
fi
run "$w/batch" "$LIDIAGEN" -r pkg -o "$w/o-batch" --layout flat --no-debug-search
check_same "path layout: -r pkg pairs by build ID (--no-debug-search)" "$w/o-batch/$ID.lidia"

# ---- another build's debug file at that place --------------------------------------
# The stripped binary alone has no function (.dynsym of an executable): nothing is written.
conv "$w/o-wrong" wrong/usr/bin/prog --debug-dir "$w/wrong/usr/lib/debug"
want="wrong/usr/bin/prog: '$w/wrong/usr/lib/debug/usr/bin/prog.debug' has another build ID, not used"
if [ "$RC" -eq 0 ] && grep -qF "$want" "$w/o-wrong.err" && [ -z "$LIDIA_OUT" ]; then
	ok "path layout: another build's debug file is refused with a warning naming it (symbols only)"
else
	not_ok "path layout: another build's debug file is refused with a warning naming it" \
		"want: $want" "exit $RC, stderr:" "$(cat "$w/o-wrong.err")" "written: $LIDIA_OUT"
fi
run "$w/wbatch" "$LIDIAGEN" -r wrong -o "$w/o-wbatch" --layout flat --no-debug-search
if [ "$RC" -eq 0 ] && [ ! -e "$w/o-wbatch/$ID.lidia" ] && [ -f "$w/o-wbatch/$(build_id other.debug).lidia" ]; then
	ok "path layout: -r pairs nothing of another build (its own key; none for the binary alone)"
else
	not_ok "path layout: -r pairs nothing of another build" "exit $RC" "$(ls "$w/o-wbatch")" \
		"$(first_lines 5 "$w/wbatch.err")"
fi

# ---- DWARF packages ----------------------------------------------------------------
# innermost LABEL LIDIA BINARY: every instruction's innermost file:line (and the
# outermost function) agree with llvm-symbolizer, which reads BINARY.dwp.
innermost() {
	"$PYTHON" - "$1" "$2" "$3" "$LIDIAGEN" "$LLVM_SYMBOLIZER" <<'EOF'
import json, re, subprocess, sys
label, lidia, binary, lidiagen, llvm = sys.argv[1:]
dis = subprocess.run(["objdump", "-d", "--no-show-raw-insn", "-j", ".text", binary],
                     capture_output=True, text=True).stdout
addrs = [m.group(1) for m in re.finditer(r"^\s+([0-9a-f]+):", dis, re.M)]
ours = subprocess.run([lidiagen, "lookup", "--json", lidia] + ["0x" + a for a in addrs],
                      capture_output=True, text=True).stdout.splitlines()
theirs = json.loads(subprocess.run([llvm, "--output-style=JSON", "--obj=" + binary] +
                                  ["0x" + a for a in addrs], capture_output=True, text=True).stdout)
bad, n = [], 0
for a, o, t in zip(addrs, ours, theirs):
    o = json.loads(o)
    tf = [f for f in t.get("Symbol", []) if f.get("FunctionName") not in ("", "??")]
    of = o.get("frames", [])
    if not tf or not of or not tf[0]["Line"]:
        continue
    n += 1
    if (of[0]["file"], of[0]["line"], of[-1]["function"]) != (tf[0]["FileName"], tf[0]["Line"], tf[-1]["FunctionName"]):
        bad.append("0x%s: %s | %s" % (a, of, tf))
print(("ok - " if n and not bad else "not ok - ") +
      "%s: innermost file:line and function agree with llvm-symbolizer at %d addresses" % (label, n - len(bad)))
for b in bad[:5]:
    print("# " + b)
EOF
}
split_variant() { # DWARF-VERSION DWP-TOOL
	local v=$1 tool=$2 d=$w/split$1 out
	if ! command -v "$tool" >/dev/null 2>&1; then
		skip "split DWARF $v: $tool is not installed"
		return
	fi
	mkdir -p "$d" && cp dw_main.c dw_part.c dw_*.h "$d/" && cd "$d" || return
	mk "cd $d && gcc -O2 -gdwarf-$v -gsplit-dwarf -c dw_main.c -o dw_main.o" \
		"&& gcc -Wl,--build-id -o prog dw_main.o && $tool -e prog -o prog.dwp"
	conv "$d/o-dwo" prog
	if [ "$RC" -ne 0 ] || [ -z "$LIDIA_OUT" ] || ! grep -q ' 0 warnings; 0 failed$' "$d/o-dwo.err"; then
		not_ok "split DWARF $v, .dwo files and prog.dwp: one file, no warning" "exit $RC" "$(cat "$d/o-dwo.err")"
	else
		"$PYTHON" "$ORACLE" compare --label "split DWARF $v (.dwo files)" --lidiagen "$LIDIAGEN" \
			--lidia "$LIDIA_OUT" --code prog --want-inlines 1 --llvm "$LLVM_SYMBOLIZER" --llvm-obj prog
	fi
	dwo_out=$LIDIA_OUT
	mkdir -p "$d/moved" "$d/tmp" && mv "$d"/*.dwo "$d/moved/"
	TMPDIR=$d/tmp conv "$d/o-dwp" prog
	out=$LIDIA_OUT
	if [ "$RC" -eq 0 ] && grep -q ' 0 warnings; 0 failed$' "$d/o-dwp.err" && [ -n "$out" ] &&
		cmp -s "$out" "$dwo_out" && [ -z "$(ls -A "$d/tmp")" ]; then
		ok "split DWARF $v, prog.dwp only: read, no warning, the bytes the .dwo files give, TMPDIR left empty"
		"$PYTHON" "$ORACLE" compare --label "split DWARF $v (prog.dwp only)" --lidiagen "$LIDIAGEN" \
			--lidia "$out" --code prog --want-inlines 1 --llvm "$LLVM_SYMBOLIZER" --llvm-obj prog
	else
		not_ok "split DWARF $v, prog.dwp only: read, no warning, the bytes the .dwo files give, TMPDIR left empty" \
			"exit $RC, stderr:" "$(cat "$d/o-dwp.err")" "left in TMPDIR: $(ls -A "$d/tmp")"
	fi
	# A damaged package, then a skeleton naming its .dwo out of the directory.
	cp prog.dwp prog.dwp.good
	head -c 3000 prog.dwp.good >prog.dwp
	unread "split DWARF $v, a truncated prog.dwp" "$d/o-cut" prog
	cp prog.dwp.good prog.dwp
	"$PYTHON" - prog prog.evil <<'EOF2'
import sys
b = open(sys.argv[1], "rb").read()
assert b.count(b"dw_main.dwo\0") == 1, "one dwo_name"
open(sys.argv[2], "wb").write(b.replace(b"dw_main.dwo\0", b"../../a.dwo\0"))
EOF2
	cp prog.dwp prog.evil.dwp
	unread "split DWARF $v, a skeleton naming '../../a.dwo'" "$d/o-evil" prog.evil
	if [ -e "$d/../a.dwo" ] || [ -e "$w/../a.dwo" ] || [ -e "$d/a.dwo" ]; then
		not_ok "split DWARF $v: nothing written outside the private directory" "$(ls "$d/.." "$w/..")"
	fi
	mv prog.dwp prog.dwp.away
	conv "$d/o-none" prog
	if [ "$RC" -eq 0 ] && grep -q ' 1 warning; 0 failed$' "$d/o-none.err" &&
		grep -q "prog: 1 split unit not found (the first: 'dw_main.dwo'): inline frames are left out" \
			"$d/o-none.err" && [ -n "$LIDIA_OUT" ] &&
		"$LIDIAGEN" info "$LIDIA_OUT" | grep -q ' 0 inline ranges'; then
		ok "split DWARF $v, neither .dwo nor .dwp: one warning naming the .dwo, no inline frames"
		innermost "split DWARF $v, neither .dwo nor .dwp (the line rows)" "$LIDIA_OUT" prog
	else
		not_ok "split DWARF $v, neither .dwo nor .dwp: one warning naming the .dwo, no inline frames" \
			"$(cat "$d/o-none.err")"
	fi
	cd "$w" || exit 0
}
# unread LABEL OUT BINARY: BINARY.dwp is not read: a warning names it, line rows kept, TMPDIR left empty.
unread() {
	local label=$1 out=$2 bin=$3 tmp=$d/tmp
	TMPDIR=$tmp conv "$out" "$bin"
	if [ "$RC" -eq 0 ] && grep -qF "$bin: DWARF package '$bin.dwp' is not read" "$out.err" &&
		[ "$(rows "$LIDIA_OUT")" -gt 0 ] 2>/dev/null && [ -z "$(ls -A "$tmp")" ]; then
		ok "$label: not read, a warning names it; line rows kept, TMPDIR left empty"
	else
		not_ok "$label: not read, a warning names it; line rows kept, TMPDIR left empty" \
			"exit $RC, stderr:" "$(cat "$out.err")" "left in TMPDIR: $(ls -A "$tmp")"
	fi
}
split_variant 4 dwp
split_variant 5 llvm-dwp-16

# One .dwo of four gone: one warning naming it, and no inline frame at all
# (those of the three units found would make the file count as holding
# inline frames, so that the run that has all four would keep it); with the
# four back, the same output is replaced (the file rates as lines).
d=$w/split-partial
mkdir -p "$d" && cd "$d" || exit 0
if "$PYTHON" "$TESTS_LIB/dwz_shared_gen.py" "$d/src" 20 >/dev/null &&
	mk "cd $d/src && gcc -O2 -g -gsplit-dwarf -fPIC -c t0.c t1.c t2.c t3.c" \
		"&& gcc -shared -Wl,--build-id -o libs.so t0.o t1.o t2.o t3.o"; then
	cd "$d/src" || exit 0
	mv t1.dwo t1.dwo.away
	conv "$d/o" libs.so
	if [ "$RC" -eq 0 ] && [ -n "$LIDIA_OUT" ] &&
		grep -q "libs.so: 1 split unit not found (the first: 't1.dwo'): inline frames are left out" "$d/o.err" &&
		"$LIDIAGEN" info "$LIDIA_OUT" | grep -q ' 0 inline ranges'; then
		ok "split DWARF, one .dwo of four gone: one warning naming it, no inline frame"
	else
		not_ok "split DWARF, one .dwo of four gone: one warning naming it, no inline frame" \
			"exit $RC" "$(cat "$d/o.err")" "$("$LIDIAGEN" info "$LIDIA_OUT" 2>&1 | grep content)"
	fi
	mv t1.dwo.away t1.dwo
	"$LIDIAGEN" -v libs.so -o "$d/o" --layout flat >"$d/o2.out" 2>"$d/o2.err" </dev/null
	if grep -q '^replaced .*(it had less)' "$d/o2.out" &&
		! "$LIDIAGEN" info "$LIDIA_OUT" | grep -q ' 0 inline ranges'; then
		ok "split DWARF, the four .dwo back: the output is replaced, with inline frames"
	else
		not_ok "split DWARF, the four .dwo back: the output is replaced, with inline frames" \
			"$(cat "$d/o2.out" "$d/o2.err")"
	fi
fi
