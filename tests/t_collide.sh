#!/usr/bin/env bash
# Archive members whose names collide, indexes that lie, and build IDs that
# are no keys (issue 20). Each output must hold the symbols of the binary
# whose build ID it is named by, whatever the members' names say:
#
#  - the same name twice in a tar (what tar -r appends) and in a zip, names
#    that differ only in a control character, names longer than 1,023 bytes
#    that share their first 1,023, a member named 'a.tar!app' beside a nested
#    a.tar holding app: every build ID's output symbolizes as its own program
#    (llvm-symbolizer-16 on that program is the oracle), with both orders of
#    build IDs, plain and through `index` + `--index --shard`;
#  - an index edited to give an image another's build ID (or one of another
#    tree): that group fails, one line naming the member, nothing written
#    under the wrong key, exit 1; an index of version 1 is refused;
#  - programs linked with an all-zero or all-0xff build ID: a warning each,
#    nothing written, exit 0 (1 with --strict); with --fallback-key sha256
#    one output per program, each its own.
#
# Inputs: two tiny C programs made here, alpha and beta (functions
# alpha_work and beta_work), linked with build IDs fixed by
# -Wl,--build-id=0x...; archives made with python3 (tarfile, zipfile).
set -u
. "$(dirname "$0")/lib/common.sh"

L=$LIDIAGEN
w=$(scratch work)
cd "$w" || exit 0
need_tool llvm-symbolizer "$LLVM_SYMBOLIZER" || exit 0

LO=1111111111111111111111111111111111111111
HI=eeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee
ZERO=0000000000000000000000000000000000000000
FF=ffffffffffffffffffffffffffffffffffffffff

cat >prog.c <<'EOF'
#define CAT2(a, b) a##_##b
#define CAT(a, b) CAT2(a, b)
int CAT(NAME, data) = 7;
__attribute__((noinline)) int CAT(NAME, work)(int x) { return x * 3 + CAT(NAME, data); }
int main(int argc, char **argv) { (void)argv; return CAT(NAME, work)(argc); }
EOF
# prog NAME ID OUT: the program NAME linked with build ID ID.
prog() {
	cc -O1 -g -DNAME="$1" -Wl,--build-id=0x"$2" prog.c -o "$3" 2>>cc.err
}
if ! { prog alpha $LO alpha_lo && prog beta $HI beta_hi && prog alpha $HI alpha_hi &&
	prog beta $LO beta_lo && prog alpha $ZERO alpha_0 && prog beta $ZERO beta_0 &&
	prog alpha $FF alpha_ff && prog beta $FF beta_ff; }; then
	not_ok "collide: the test programs build" "$(first_lines 5 cc.err)"
	exit 0
fi
if [ "$(build_id alpha_lo)" != $LO ] || [ "$(build_id beta_0)" != $ZERO ]; then
	not_ok "collide: the linker fixes the build IDs" "$(build_id alpha_lo) $(build_id beta_0)"
	exit 0
fi

# whose OUT PROG FN: empty when the lidia file OUT gives, at PROG's address of
# FN, the function llvm-symbolizer gives on PROG there (and that is FN); else why not.
whose() {
	local out=$1 p=$2 fn=$3 addr got want
	addr=$(nm "$p" | awk -v f="$fn" '$3 == f { print $1 }')
	want=$("$LLVM_SYMBOLIZER" --obj="$p" "0x$addr" | head -n 1)
	if [ ! -f "$out" ]; then
		echo "no file $out"
		return
	fi
	got=$("$L" lookup "$out" "$addr" 2>&1 | head -n 1 | awk '{ print $2 }')
	[ "$want" = "$fn" ] && [ "$got" = "$want" ] ||
		echo "$out at 0x$addr: lidiagen says '$got', llvm-symbolizer on $p '$want'"
}
key() { echo "$1/symbolizer/anonymous/$2"; }
nkeys() { ls "$1/symbolizer/anonymous" 2>/dev/null | wc -l; }

# The archive maker: mk.py KIND OUT FIRST SECOND, FIRST and SECOND files
# that become two members whose names collide the KIND way.
cat >mk.py <<'EOF'
import io, sys, tarfile, warnings, zipfile

kind, out, first, second = sys.argv[1:5]
a, b = (open(p, "rb").read() for p in (first, second))


def tar_of(members):
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.PAX_FORMAT) as t:
        for name, data in members:
            ti = tarfile.TarInfo(name)
            ti.size, ti.mode, ti.mtime = len(data), 0o755, 1577836800
            t.addfile(ti, io.BytesIO(data))
    return raw.getvalue()


long = "d/" + "x" * 1021
shapes = {
    "tardup": [("bin/app", a), ("bin/app", b)],
    "ctrl": [("bin/app\x01", a), ("bin/app\x02", b)],
    "long": [(long + "1", a), (long + "2", b)],
    "bang": [("a.tar!app", a), ("a.tar", tar_of([("app", b)]))],
}
if kind == "zipdup":
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with zipfile.ZipFile(out, "w") as z:
            z.writestr(zipfile.ZipInfo("app", (2020, 1, 1, 0, 0, 0)), a)
            z.writestr(zipfile.ZipInfo("app", (2020, 1, 1, 0, 0, 0)), b)
else:
    open(out, "wb").write(tar_of(shapes[kind]))
EOF

# check_pair WHAT OUT FIRST_ID FIRST_PROG SECOND_ID SECOND_PROG: both outputs,
# each its own program's.
check_pair() {
	local what=$1 out=$2 why
	why=$(whose "$(key "$out" "$3")" "$4" "$(fname "$4")")$(whose "$(key "$out" "$5")" "$6" "$(fname "$6")")
	if [ -z "$why" ] && [ "$(nkeys "$out")" -eq 2 ]; then
		ok "$what"
	else
		not_ok "$what" "$why" "outputs: $(ls "$out/symbolizer/anonymous" 2>/dev/null | tr '\n' ' ')" \
			"$(first_lines 6 "$out.err")"
	fi
}
fname() { case $1 in alpha*) echo alpha_work ;; *) echo beta_work ;; esac; }

# shape KIND: the two members in both orders of build ID, plain and through an index.
shape() {
	local kind=$1 order first second fid sid d
	for order in lo-first hi-first; do
		if [ $order = lo-first ]; then
			first=alpha_lo second=beta_hi fid=$LO sid=$HI
		else
			first=alpha_hi second=beta_lo fid=$HI sid=$LO
		fi
		d=$w/$kind-$order
		rm -rf "$d"
		mkdir -p "$d"
		if ! "$PYTHON" mk.py "$kind" "$d/in.ar" "$first" "$second" 2>"$d/mk.err"; then
			not_ok "collide $kind: the archive is made" "$(first_lines 4 "$d/mk.err")"
			continue
		fi
		run "$d/plain" "$L" "$d/in.ar" -o "$d/plain" -j 1 --no-debug-search
		check_pair "collide $kind ($order): each build ID's output is its own program's, exit $RC" \
			"$d/plain" $fid $first $sid $second
		run "$d/ix" "$L" index "$d/in.ar" -o "$d/ix.idx"
		run "$d/s11" "$L" --index "$d/ix.idx" --shard 1/1 -o "$d/s11" -j 1 --no-debug-search
		check_pair "collide $kind ($order): the same through index and --shard 1/1" \
			"$d/s11" $fid $first $sid $second
		run "$d/s12" "$L" --index "$d/ix.idx" --shard 1/2 -o "$d/s2" -j 1 --no-debug-search
		run "$d/s22" "$L" --index "$d/ix.idx" --shard 2/2 -o "$d/s2" -j 1 --no-debug-search
		check_pair "collide $kind ($order): the same through --shard 1/2 and 2/2" \
			"$d/s2" $fid $first $sid $second
	done
}

shape tardup
shape zipdup
shape ctrl
shape long
shape bang

# tar -r itself: an archive appended a member of a name it holds.
d=$w/tar-r
mkdir -p "$d/a" "$d/b"
cp alpha_hi "$d/a/app" && cp beta_lo "$d/b/app"
if tar -cf "$d/in.tar" -C "$d/a" app && tar -rf "$d/in.tar" -C "$d/b" app; then
	run "$d/plain" "$L" "$d/in.tar" -o "$d/plain" -j 1 --no-debug-search
	check_pair "collide: tar -r appends app over app: each output its own program's" \
		"$d/plain" $HI alpha_hi $LO beta_lo
else
	not_ok "collide: tar -r makes its archive"
fi

# ---- An index that lies ---------------------------------------------------------

d=$w/tardup-hi-first
# edit IN OUT SED: the index with its image records edited.
edit() { sed -E "$3" "$1" >"$2"; }

# Both records' build IDs swapped: each image read has the other's key.
edit "$d/ix.idx" "$d/swap.idx" "/\"position\"/{s/\"build_id\":\"$HI\"/\"build_id\":\"T\"/;s/\"build_id\":\"$LO\"/\"build_id\":\"$HI\"/;s/\"build_id\":\"T\"/\"build_id\":\"$LO\"/}"
run "$d/swap" "$L" --index "$d/swap.idx" --shard 1/1 -o "$d/swap" -j 1 --no-debug-search
lines=$(grep -c -E "in\.ar!bin/app: build ID [0-9a-f]{40} where [0-9a-f]{40} was expected" "$d/swap.err")
if [ "$RC" -eq 1 ] && [ "$(nkeys "$d/swap")" -eq 0 ] && [ "$lines" -eq 2 ]; then
	ok "collide: an index with the two build IDs swapped: exit 1, a line per member, nothing written"
else
	not_ok "collide: an index with the two build IDs swapped: exit 1, a line per member, nothing written" \
		"exit $RC, $lines lines, outputs: $(ls "$d/swap/symbolizer/anonymous" 2>/dev/null | tr '\n' ' ')" \
		"$(first_lines 6 "$d/swap.err")"
fi

# One record naming a build ID of another tree: that group fails, the other is written.
OTHER=cccccccccccccccccccccccccccccccccccccccc
edit "$d/ix.idx" "$d/other.idx" "/\"position\"/s/\"build_id\":\"$HI\"/\"build_id\":\"$OTHER\"/"
run "$d/other" "$L" --index "$d/other.idx" --shard 1/1 -o "$d/other" -j 1 --no-debug-search
why=$(whose "$(key "$d/other" $LO)" beta_lo beta_work)
if [ "$RC" -eq 1 ] && [ ! -e "$(key "$d/other" $OTHER)" ] && [ -z "$why" ] &&
	[ "$(grep -c -F "in.ar!bin/app: build ID $HI where $OTHER was expected" "$d/other.err")" -eq 1 ]; then
	ok "collide: an index naming another tree's build ID: that group fails naming the member, the other written"
else
	not_ok "collide: an index naming another tree's build ID: that group fails naming the member, the other written" \
		"exit $RC; $why" "$(first_lines 6 "$d/other.err")"
fi

# An index of version 1 (no positions) is refused, saying to index again.
edit "$d/ix.idx" "$d/v1.idx" '1s/"lidia_index":[0-9]+/"lidia_index":1/'
run "$d/v1" "$L" --index "$d/v1.idx" --shard 1/1 -o "$d/v1" -j 1
if [ "$RC" -ne 0 ] && [ "$(nkeys "$d/v1")" -eq 0 ] && grep -q "version 1.*index again" "$d/v1.err"; then
	ok "collide: an index of version 1 is refused: index again"
else
	not_ok "collide: an index of version 1 is refused: index again" "exit $RC" "$(first_lines 4 "$d/v1.err")"
fi

# A state file edited the same way (its inputs unchanged, so trusted unread): the same check.
d=$w/tardup-hi-first
run "$d/st1" "$L" "$d/in.ar" -o "$d/st1" -j 1 --no-debug-search --state "$d/state"
sed -E "/^P\t/{s/\t$HI\t/\tT\t/;s/\t$LO\t/\t$HI\t/;s/\tT\t/\t$LO\t/}" "$d/state" >"$d/state.x" &&
	mv "$d/state.x" "$d/state"
run "$d/st2" "$L" "$d/in.ar" -o "$d/st2" -j 1 --no-debug-search --state "$d/state"
lines=$(grep -c -E "in\.ar!bin/app: build ID [0-9a-f]{40} where [0-9a-f]{40} was expected" "$d/st2.err")
if [ "$RC" -eq 1 ] && [ "$(nkeys "$d/st2")" -eq 0 ] && [ "$lines" -eq 2 ]; then
	ok "collide: a state file with the two build IDs swapped: exit 1, a line per member, nothing written"
else
	not_ok "collide: a state file with the two build IDs swapped: exit 1, a line per member, nothing written" \
		"exit $RC, $lines lines, outputs: $(ls "$d/st2/symbolizer/anonymous" 2>/dev/null | tr '\n' ' ')" \
		"$(first_lines 6 "$d/st2.err")"
fi

# ---- Degenerate build IDs -------------------------------------------------------

for deg in 0 ff; do
	d=$w/deg-$deg
	mkdir -p "$d"
	cp alpha_$deg "$d/alpha" && cp beta_$deg "$d/beta"
	run "$d/run" "$L" "$d/alpha" "$d/beta" -o "$d/out" -j 1 --no-debug-search --manifest "$d/m.jsonl"
	warned=$(grep -c -E "warning: .*/(alpha|beta): build ID ${deg}${deg}.* is degenerate" "$d/run.err")
	skipped=$(grep -c '"reason":"degenerate build ID"' "$d/m.jsonl" 2>/dev/null)
	if [ "$RC" -eq 0 ] && [ "$(nkeys "$d/out")" -eq 0 ] && [ "$warned" -eq 2 ] && [ "$skipped" -eq 2 ]; then
		ok "collide: two programs of build ID all $deg: a warning each, skipped in the manifest, nothing written, exit 0"
	else
		not_ok "collide: two programs of build ID all $deg: a warning each, skipped in the manifest, nothing written, exit 0" \
			"exit $RC, $warned warnings, $skipped manifest lines, outputs: $(ls "$d/out/symbolizer/anonymous" 2>/dev/null | tr '\n' ' ')" \
			"$(first_lines 6 "$d/run.err")"
	fi
	run "$d/strict" "$L" "$d/alpha" "$d/beta" -o "$d/strict" -j 1 --no-debug-search --strict
	if [ "$RC" -eq 1 ] && [ "$(nkeys "$d/strict")" -eq 0 ]; then
		ok "collide: build ID all $deg with --strict: exit 1"
	else
		not_ok "collide: build ID all $deg with --strict: exit 1" "exit $RC" "$(first_lines 4 "$d/strict.err")"
	fi
	run "$d/sha" "$L" "$d/alpha" "$d/beta" -o "$d/sha" -j 1 --no-debug-search --fallback-key sha256
	ka=$(sha256sum "$d/alpha" | cut -c1-40) kb=$(sha256sum "$d/beta" | cut -c1-40)
	why=$(whose "$(key "$d/sha" "$ka")" "$d/alpha" alpha_work)$(whose "$(key "$d/sha" "$kb")" "$d/beta" beta_work)
	if [ "$RC" -eq 0 ] && [ "$(nkeys "$d/sha")" -eq 2 ] && [ -z "$why" ]; then
		ok "collide: build ID all $deg with --fallback-key sha256: one output per program, each its own"
	else
		not_ok "collide: build ID all $deg with --fallback-key sha256: one output per program, each its own" \
			"exit $RC; $why" "$(first_lines 4 "$d/sha.err")"
	fi
done

# The same two inside one archive, through the index: skipped there too, the reason kept.
d=$w/deg-ix
mkdir -p "$d"
"$PYTHON" mk.py tardup "$d/in.ar" alpha_0 beta_0
run "$d/ix" "$L" index "$d/in.ar" -o "$d/ix.idx"
run "$d/run" "$L" --index "$d/ix.idx" --shard 1/1 -o "$d/out" -j 1 --no-debug-search
n=$(grep -c '"skipped":"degenerate build ID"' "$d/ix.idx" 2>/dev/null)
if [ "$RC" -eq 0 ] && [ "$n" -eq 2 ] && [ "$(nkeys "$d/out")" -eq 0 ] &&
	[ "$(grep -c "is degenerate" "$d/run.err")" -eq 2 ]; then
	ok "collide: all-zero build IDs in an archive: the index says degenerate, --index warns again, nothing written"
else
	not_ok "collide: all-zero build IDs in an archive: the index says degenerate, --index warns again, nothing written" \
		"exit $RC, $n index records" "$(first_lines 6 "$d/run.err")"
fi
