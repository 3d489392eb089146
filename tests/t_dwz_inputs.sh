#!/usr/bin/env bash
# dwz files among the inputs: a debug package read as it is shipped.
#
# Debian's -dbg packages (dh_dwz, then dh_strip) hold each debug file under
# usr/lib/debug/.build-id/ and the dwz supplementary file its DWARF names
# under usr/lib/debug/.dwz/, by an absolute path that only the installed
# package has. Read from the package, the debug files must still be read
# with it: the names of inlined functions dwz moved there are in it alone.
#
# Fixture, built as Debian builds (every command printed): two programs of
# the DWARF fixture sources (variants 1 and 2), dwz -m over both with -M
# /usr/lib/debug/.dwz/lidiagen-test/common.debug, then each debug file split
# off (objcopy --only-keep-debug) and the binary stripped. dbg.tar holds
# the debug tree with the .dwz/ directory last (as a .deb's data.tar lists
# it, after .build-id/): a stream reaches each debug file before the dwz
# file. bin.tar holds the stripped binaries.
#
# Checks:
#  (a) lidiagen --recursive over both archives: one output per program, no
#      "not found" warning, and every frame's function-name chain, file and
#      line agree with llvm-symbolizer-16 on the program as built before dwz
#      (tests/lib/dwarf_oracle.py compare, every 3rd instruction);
#  (b) the same bytes with -j 1 and -j 3, and with the archives named in the
#      other order;
#  (c) --no-debug-search: the dwz file is an input, still read;
#  (d) the dwz file as a plain file anywhere in the tree (not where its
#      name says): read, the same bytes as (a);
#  (e) --state, the output removed, the inputs unchanged (so not read again
#      to be identified): converted again with the dwz file, the same bytes,
#      the dwz file an archive member or a file of its own;
#  (f) two dwz files of one build ID and other bytes: one warning naming the
#      clash, neither used (the names dwz moved are missing, as with none),
#      the same bytes whichever order the inputs come in;
#  (g) the run's root of dwz files (in TMPDIR) is gone when it ends;
#  (h) lidiagen index, then 2 shards of convert --index: the plain run's
#      bytes (the dwz file an archive member, and a file of its own);
#  (i) without its dwz file: a warning, no inline frame (each would be
#      nameless), every .symtab function named; rated below the file made
#      with it, which replaces it, and is never replaced by it.
set -u
. "$(dirname "$0")/lib/common.sh"

ORACLE=$TESTS_LIB/dwarf_oracle.py
SRC=$FIXTURES_SRC/dwarf
w=$(scratch work)
rates=$w/rates.tsv
ALT=/usr/lib/debug/.dwz/lidiagen-test/common.debug

need_tool llvm-symbolizer "$LLVM_SYMBOLIZER" || exit 0
for t in gcc dwz objcopy strip tar objdump; do
	need_tool "$t" "$t" || exit 0
done

cp "$SRC"/* "$w"/
cmd="gcc -O2 -gdwarf-4 -DDW_VARIANT=1 -Wl,--build-id -o a dw_main.c &&
gcc -O2 -gdwarf-4 -DDW_VARIANT=2 -Wl,--build-id -o b dw_main.c &&
cp a a.orig && cp b b.orig && dwz -m common.debug -M $ALT a b &&
objcopy --only-keep-debug a a.debug && objcopy --only-keep-debug b b.debug &&
strip -o a.stripped a && strip -o b.stripped b"
note "build (in $w): $cmd"
if ! (cd "$w" && bash -c "$cmd") >"$w/build.log" 2>&1; then
	not_ok "fixture: two programs, dwz'd with a common file, split" "$(first_lines 15 "$w/build.log")"
	exit 0
fi
ID_A=$(build_id "$w/a.stripped")
ID_B=$(build_id "$w/b.stripped")
ID_ALT=$(build_id "$w/common.debug")
if [ -z "$ID_A" ] || [ -z "$ID_B" ] || [ -z "$ID_ALT" ] ||
	! readelf -p .gnu_debugaltlink "$w/a.debug" 2>/dev/null | grep -qF "$ALT"; then
	not_ok "fixture: a.debug names $ALT, every file has a build ID" \
		"a $ID_A, b $ID_B, common $ID_ALT" "$(readelf -p .gnu_debugaltlink "$w/a.debug" 2>&1 | head -3)"
	exit 0
fi

# The package trees and their archives (the .dwz/ directory last in dbg.tar).
mkdir -p "$w/dbg/usr/lib/debug/.build-id/${ID_A:0:2}" "$w/dbg/usr/lib/debug/.build-id/${ID_B:0:2}" \
	"$w/dbg/usr/lib/debug/.dwz/lidiagen-test" "$w/bin/usr/bin" "$w/in" "$w/tmp"
cp "$w/a.debug" "$w/dbg/usr/lib/debug/.build-id/${ID_A:0:2}/${ID_A:2}.debug"
cp "$w/b.debug" "$w/dbg/usr/lib/debug/.build-id/${ID_B:0:2}/${ID_B:2}.debug"
cp "$w/common.debug" "$w/dbg/usr/lib/debug/.dwz/lidiagen-test/common.debug"
cp "$w/a.stripped" "$w/bin/usr/bin/a"
cp "$w/b.stripped" "$w/bin/usr/bin/b"
tar -C "$w/dbg" -cf "$w/in/dbg.tar" usr/lib/debug/.build-id usr/lib/debug/.dwz
tar -C "$w/bin" -cf "$w/in/bin.tar" usr/bin
if [ "$(tar -tf "$w/in/dbg.tar" | grep -n -e '\.debug$' | tail -n 1 | grep -c '/\.dwz/')" != 1 ]; then
	not_ok "fixture: dbg.tar lists the dwz file after the debug files" "$(tar -tf "$w/in/dbg.tar")"
fi

# batch NAME ARGS...: lidiagen ARGS -o $w/NAME --layout flat; RC, $w/NAME.err
# (its warnings too).
batch() {
	local name=$1
	shift
	rm -rf "${w:?}/$name"
	TMPDIR=$w/tmp run "$w/$name" "$LIDIAGEN" "$@" -o "$w/$name" --layout flat
}

# same NAME1 NAME2: both outputs hold the same files with the same bytes.
same() {
	diff -r "$w/$1" "$w/$2" >/dev/null 2>&1 && [ -n "$(ls "$w/$1" 2>/dev/null)" ]
}

compare() { # LABEL PROG OUT
	"$PYTHON" "$ORACLE" compare --label "$1" --lidiagen "$LIDIAGEN" --lidia "$w/$3/$4.lidia" \
		--code "$w/$2.stripped" --pyroscope "$PYROSCOPE_READER" --python "$PYTHON" \
		--want-inlines 1 --rates-file "$rates" --llvm "$LLVM_SYMBOLIZER" --llvm-obj "$w/$2.orig" \
		--eu-obj "$w/$2.orig"
}

# (a)
batch pkg -j 2 --recursive "$w/in"
if [ "$RC" -eq 0 ] && [ -s "$w/pkg/$ID_A.lidia" ] && [ -s "$w/pkg/$ID_B.lidia" ] &&
	! grep -q 'not found' "$w/pkg.err"; then
	ok "(a) both programs converted from the archives, the dwz file found among them"
else
	not_ok "(a) both programs converted from the archives, the dwz file found among them" \
		"exit $RC" "$(ls "$w/pkg" 2>&1)" "$(first_lines 10 "$w/pkg.err")"
fi
compare "(a) a from the packages (vs llvm-symbolizer on a before dwz)" a pkg "$ID_A"
compare "(a) b from the packages (vs llvm-symbolizer on b before dwz)" b pkg "$ID_B"

# (b)
batch pkg1 -j 1 "$w/in/dbg.tar" "$w/in/bin.tar"
batch pkg3 -j 3 "$w/in/bin.tar" "$w/in/dbg.tar"
if same pkg pkg1 && same pkg pkg3; then
	ok "(b) the same bytes at -j 1 and -j 3, the archives in either order"
else
	not_ok "(b) the same bytes at -j 1 and -j 3, the archives in either order" \
		"$(diff -r "$w/pkg" "$w/pkg1" 2>&1 | head -3)" "$(diff -r "$w/pkg" "$w/pkg3" 2>&1 | head -3)"
fi

# (c)
batch nosearch --no-debug-search --recursive "$w/in"
if same pkg nosearch && ! grep -q 'not found' "$w/nosearch.err"; then
	ok "(c) --no-debug-search: the dwz file among the inputs is read all the same"
else
	not_ok "(c) --no-debug-search: the dwz file among the inputs is read all the same" \
		"$(diff -r "$w/pkg" "$w/nosearch" 2>&1 | head -3)" "$(first_lines 5 "$w/nosearch.err")"
fi

# (d)
mkdir -p "$w/loose/elsewhere"
cp "$w/a.debug" "$w/loose/a.debug"
cp "$w/common.debug" "$w/loose/elsewhere/x.dwz"
cp "$w/a.stripped" "$w/loose/a"
batch loose-out --recursive "$w/loose"
if [ "$RC" -eq 0 ] && cmp -s "$w/loose-out/$ID_A.lidia" "$w/pkg/$ID_A.lidia" 2>/dev/null &&
	! grep -q 'not found' "$w/loose-out.err"; then
	ok "(d) a dwz file anywhere among the inputs: the same bytes as from the packages"
else
	not_ok "(d) a dwz file anywhere among the inputs: the same bytes as from the packages" \
		"exit $RC" "$(first_lines 5 "$w/loose-out.err")"
fi

# (e) rerun NAME INPUT LABEL: with --state, INPUT converted, a's output
# removed, then converted again (INPUT unchanged, so not read again to be
# identified): a's output must come back with the dwz file.
rerun() {
	local k=$w/$1 label="(e) $3"
	rm -rf "$k"
	TMPDIR=$w/tmp run "$k-1" "$LIDIAGEN" --recursive "$2" -o "$k" --layout flat --state "$k.state"
	rm -f "$k/$ID_A.lidia"
	TMPDIR=$w/tmp run "$k-2" "$LIDIAGEN" --recursive "$2" -o "$k" --layout flat --state "$k.state"
	if [ "$RC" -eq 0 ] && cmp -s "$k/$ID_A.lidia" "$w/pkg/$ID_A.lidia" 2>/dev/null &&
		! grep -q 'not found' "$k-2.err"; then
		ok "$label"
	else
		not_ok "$label" "exit $RC" "$(first_lines 8 "$k-2.err")"
	fi
}
rerun kept "$w/in" "--state, an output removed, the inputs unchanged: converted again with the dwz file"
# The dwz file a file of its own (loose/ of (d)): the state says which
# image passed over is a dwz file, so it is gathered unread.
rerun kept2 "$w/loose" "the same with the dwz file a file of its own: gathered though not read again"

# (f) A second common.debug of the same build ID, one DWARF string changed.
mkdir -p "$w/clash"
cp "$w/in/dbg.tar" "$w/in/bin.tar" "$w/clash/"
"$PYTHON" - "$w/common.debug" "$w/clash/other.dwz" <<'EOF'
import sys
data = bytearray(open(sys.argv[1], "rb").read())
i = data.find(b"dw_main.c")
if i < 0:
    sys.exit("no string to change")
data[i] ^= 0x20  # same length, same build ID note
open(sys.argv[2], "wb").write(data)
EOF
# Warnings are printed without -q.
rm -rf "$w/clash1" "$w/clash2"
TMPDIR=$w/tmp run "$w/clash1" "$LIDIAGEN" -j 1 "$w/clash/dbg.tar" "$w/clash/bin.tar" \
	"$w/clash/other.dwz" -o "$w/clash1" --layout flat
TMPDIR=$w/tmp run "$w/clash2" "$LIDIAGEN" -j 3 "$w/clash/other.dwz" "$w/clash/bin.tar" \
	"$w/clash/dbg.tar" -o "$w/clash2" --layout flat
batch none -q --no-debug-search "$w/a.debug" "$w/a.stripped"
if [ "$(grep -c 'another of other bytes: neither is used' "$w/clash1.err")" = 1 ] &&
	grep -q "$ID_ALT" "$w/clash1.err" && same clash1 clash2 &&
	cmp -s "$w/clash1/$ID_A.lidia" "$w/none/$ID_A.lidia"; then
	ok "(f) two dwz files of one build ID: one warning, neither used, whatever the order"
else
	not_ok "(f) two dwz files of one build ID: one warning, neither used, whatever the order" \
		"$(first_lines 5 "$w/clash1.err")" "$(diff -r "$w/clash1" "$w/clash2" 2>&1 | head -3)" \
		"$(cmp "$w/clash1/$ID_A.lidia" "$w/none/$ID_A.lidia" 2>&1)"
fi
# (h) lidiagen index, then convert --index in 2 shards: each shard gathers
# the dwz files of what it reads (an archive member, a file of its own).
mkdir -p "$w/ix"
cp "$w/in/dbg.tar" "$w/in/bin.tar" "$w/ix/"
cp -r "$w/loose" "$w/ix/loose"
TMPDIR=$w/tmp run "$w/index" "$LIDIAGEN" index -r "$w/ix" -o "$w/ix.idx"
rc_index=$RC
batch plain -r "$w/ix"
for k in 1 2; do
	batch "shard$k" convert --index "$w/ix.idx" --shard "$k/2"
	mkdir -p "$w/shards"
	cp "$w/shard$k"/*.lidia "$w/shards/" 2>/dev/null
done
if [ "$rc_index" -eq 0 ] && same plain shards && cmp -s "$w/plain/$ID_A.lidia" "$w/pkg/$ID_A.lidia" &&
	! grep -q 'not found' "$w/shard1.err" "$w/shard2.err"; then
	ok "(h) index and 2 shards: the plain run's bytes, the dwz files found"
else
	not_ok "(h) index and 2 shards: the plain run's bytes, the dwz files found" \
		"index exit $rc_index" "$(diff -r "$w/plain" "$w/shards" 2>&1 | head -3)" \
		"$(first_lines 4 "$w/shard1.err")" "$(first_lines 4 "$w/shard2.err")"
fi

# (i) Without its dwz file: no inline frame (each would be nameless), the
# functions named as .symtab names them, and the file rated below one made
# with it: replaced by the run that has it, never the other way round.
batch weak "$w/a.debug" "$w/a.stripped" --no-debug-search
"$PYTHON" "$ORACLE" funcs "$w/a.orig" >"$w/a.funcs"
bad=$(cut -d' ' -f1 "$w/a.funcs" | "$LIDIAGEN" lookup --json "$w/weak/$ID_A.lidia" 2>&1 |
	"$PYTHON" -c '
import json, sys
want = {}
for l in open(sys.argv[1]):
    a, n = l.split(" ", 1)
    want.setdefault(int(a, 16), set()).add(n.strip())
for l in sys.stdin:
    d = json.loads(l)
    fr = d.get("frames") or [{}]
    if len(fr) != 1 or fr[0].get("function") not in want.get(int(d["address"], 16), ()):
        print(l.strip())
' "$w/a.funcs" 2>&1)
if [ "$RC" -eq 0 ] && grep -q 'without its dwz file, inline frames are left out' "$w/weak.err" &&
	"$LIDIAGEN" info "$w/weak/$ID_A.lidia" | grep -q ' 0 inline ranges' && [ -z "$bad" ] &&
	[ -s "$w/a.funcs" ]; then
	ok "(i) without its dwz file: a warning, no inline frame, every .symtab function named"
else
	not_ok "(i) without its dwz file: a warning, no inline frame, every .symtab function named" \
		"exit $RC" "$(first_lines 4 "$w/weak.err")" "$(head -5 <<<"$bad")"
fi
TMPDIR=$w/tmp run "$w/over" "$LIDIAGEN" -v "$w/in/dbg.tar" "$w/in/bin.tar" -o "$w/weak" --layout flat
TMPDIR=$w/tmp run "$w/back" "$LIDIAGEN" -v "$w/a.debug" "$w/a.stripped" --no-debug-search \
	-o "$w/weak" --layout flat
if cmp -s "$w/weak/$ID_A.lidia" "$w/pkg/$ID_A.lidia" && grep -q "^replaced .*$ID_A.*(it had less)" "$w/over.out" &&
	grep -q "^kept .*$ID_A" "$w/back.out"; then
	ok "(i) the file made without the dwz file is replaced by one made with it, and not back"
else
	not_ok "(i) the file made without the dwz file is replaced by one made with it, and not back" \
		"$(grep "$ID_A" "$w/over.out")" "$(grep "$ID_A" "$w/back.out")"
fi

if [ -z "$(ls -A "$w/tmp")" ]; then
	ok "the runs' roots of dwz files are gone from TMPDIR when they end"
else
	not_ok "the runs' roots of dwz files are gone from TMPDIR when they end" "$(ls -A "$w/tmp")"
fi
