#!/usr/bin/env bash
# Container images as deployed (issue 25 part 3): a docker save tarball or
# an OCI image layout's tar, built here by hand (tests/lib/mkimage.py), is
# read as the file system its images show. What a later layer deletes
# (.wh.NAME), hides (an opaque directory) or replaces is not converted; the
# platforms are chosen with --platform; a debug image pairs with its binary
# image by build ID; names say IMAGE@REF!LAYER!PATH. The independent check:
# each output is the same bytes as converting the same ELF files directly.
set -u
. "$(dirname "$0")/lib/common.sh"

L=$LIDIAGEN
w=$(scratch work)
MK="$PYTHON $TESTS_LIB/mkimage.py"

# Programs of distinct build IDs: a b c r1 r2 s p1 p2, and d (stripped + debug file).
for n in a b c r1 r2 s p1 p2 d; do
	printf 'int f_%s(int x) { return x * %d; }\nint main(int c, char **v) { (void)v; return f_%s(c); }\n' \
		"$n" "${#n}$(printf %s "$n" | od -An -tu1 | tr -d ' \n')" "$n" >"$w/$n.c"
	if ! gcc -O1 -g -Wl,--build-id=sha1 -o "$w/$n" "$w/$n.c" 2>"$w/cc.err"; then
		not_ok "images: the test programs build" "$(cat "$w/cc.err")"
		exit 0
	fi
done
objcopy --only-keep-debug "$w/d" "$w/d.debug"
objcopy --strip-all "$w/d" "$w/d.stripped"
id() { readelf -n "$1" | awk '/Build ID/ { print $3 }'; }
d_id=$(id "$w/d")

# converted OUT ARGS...: lidiagen ARGS -o OUT --layout flat --manifest OUT.json (stdin: $STDIN, else none).
converted() {
	local out=$1
	shift
	rm -rf "$out"
	"$L" -q "$@" -o "$out" --layout flat --manifest "$out.json" >"$out.log" 2>&1 <"${STDIN:-/dev/null}"
}

# same_as WHAT OUT FILES...: OUT holds exactly the build IDs of FILES, each the bytes of
# converting that file alone.
same_as() {
	local what=$1 out=$2 f want got bad=
	shift 2
	want=$(for f in "$@"; do id "$f"; done | sort)
	got=$(ls "$out" 2>/dev/null | sed 's/\.lidia$//' | sort)
	if [ "$want" != "$got" ]; then
		not_ok "images: $what: the build IDs written" "want: $(echo $want)" "got: $(echo $got)" \
			"$(first_lines 5 "$out.log")"
		return 1
	fi
	for f in "$@"; do
		converted "$w/one" "$f"
		cmp -s "$w/one/$(id "$f").lidia" "$out/$(id "$f").lidia" || bad="$bad $(basename "$f")"
	done
	if [ -n "$bad" ]; then
		not_ok "images: $what: the same bytes as the files converted directly" "differ:$bad"
		return 1
	fi
	ok "images: $what"
}

# (a) One docker save image of two layers: b deleted by a whiteout, opt/x made opaque
# (c hidden), r replaced (r1 under r2): a and r2 alone are converted.
cat >"$w/layers.json" <<J
{"images": [{"ref": "app:1", "layers": [
 {"usr/bin/a": "$w/a", "usr/bin/b": "$w/b", "opt/x/c": "$w/c", "usr/bin/r": "$w/r1"},
 {"usr/bin/.wh.b": "", "opt/x/.wh..wh..opq": "", "usr/bin/r": "$w/r2"}]}]}
J
$MK docker "$w/docker.tar" "$w/layers.json"
$MK oci "$w/oci1.tar" "$w/layers.json"
converted "$w/o_docker" "$w/docker.tar"
same_as "docker save: whiteout, opaque directory, replaced file: only the visible files" \
	"$w/o_docker" "$w/a" "$w/r2"
converted "$w/o_oci1" "$w/oci1.tar"
same_as "OCI layout tar: whiteout, opaque directory, replaced file: only the visible files" \
	"$w/o_oci1" "$w/a" "$w/r2"

# (b) Readable names: IMAGE@REF!LAYER!PATH in the manifest.
if grep -q '"inputs":\["[^"]*docker.tar@app:1![0-9a-f]\{12\}!usr/bin/r"\]' "$w/o_docker.json" &&
	grep -q '"inputs":\["[^"]*oci1.tar@app:1!sha256:[0-9a-f]\{12\}!usr/bin/a"\]' "$w/o_oci1.json"; then
	ok "images: the manifest names IMAGE@REF!LAYER!PATH"
else
	not_ok "images: the manifest names IMAGE@REF!LAYER!PATH" "$(grep -h inputs "$w/o_docker.json" "$w/o_oci1.json")"
fi

# (c) Standard input: the same as the file.
STDIN=$w/docker.tar converted "$w/o_stdin" -
same_as "an image on standard input" "$w/o_stdin" "$w/a" "$w/r2"

# (d) Two platforms sharing their bottom layer (s, and p as r1), each replacing p
# (p1, p2): both by default, one with --platform; r1 never.
cat >"$w/multi.json" <<J
{"images": [
 {"ref": "multi:1", "platform": "linux/amd64",
  "layers": [{"usr/bin/s": "$w/s", "usr/bin/p": "$w/r1"}, {"usr/bin/p": "$w/p1"}]},
 {"ref": "multi:1", "platform": "linux/arm64",
  "layers": [{"usr/bin/s": "$w/s", "usr/bin/p": "$w/r1"}, {"usr/bin/p": "$w/p2"}]}]}
J
$MK oci "$w/multi.tar" "$w/multi.json"
converted "$w/o_multi" "$w/multi.tar"
same_as "two platforms: both by default" "$w/o_multi" "$w/s" "$w/p1" "$w/p2"
converted "$w/o_arm" "$w/multi.tar" --platform linux/arm64
same_as "two platforms: --platform linux/arm64 alone" "$w/o_arm" "$w/s" "$w/p2"
rm -rf "$w/o_none"
"$L" "$w/multi.tar" --platform linux/s390x -o "$w/o_none" >"$w/o_none.log" 2>&1 </dev/null
if [ -z "$(ls "$w/o_none" 2>/dev/null)" ] && grep -q "none of platform linux/s390x" "$w/o_none.log"; then
	ok "images: --platform of no image: nothing converted, said"
else
	not_ok "images: --platform of no image: nothing converted, said" "$(first_lines 5 "$w/o_none.log")"
fi

# (e) The shared layer is one blob, read once: s is one ELF image of one input, named once.
n=$(grep -o 'usr/bin/s"' "$w/o_multi.json" | wc -l)
if [ "$n" -eq 1 ] && grep -q ' 3 ELF' "$w/o_multi.log" &&
	grep -q '"inputs":\["[^"]*multi.tar@multi:1\[linux/amd64\]!sha256:[0-9a-f]\{12\}!usr/bin/s"\]' "$w/o_multi.json" &&
	grep -q '"inputs":\["[^"]*multi.tar@multi:1\[linux/arm64\]!sha256:[0-9a-f]\{12\}!usr/bin/p"\]' "$w/o_multi.json"; then
	ok "images: a layer two platforms share is read once (one ELF image); each platform named"
else
	not_ok "images: a layer two platforms share is read once (one ELF image); each platform named" \
		"$(grep -h inputs "$w/o_multi.json")"
fi

# (f) A binary image and its -dbg image given beside: the same bytes as the
# stripped binary and its debug file given as files.
cat >"$w/bin.json" <<J
{"images": [{"ref": "svc:1", "layers": [{"usr/bin/d": "$w/d.stripped"}]}]}
J
cat >"$w/dbg.json" <<J
{"images": [{"ref": "svc-dbg:1", "layers": [{"usr/lib/debug/.build-id/${d_id:0:2}/${d_id:2}.debug": "$w/d.debug"}]}]}
J
$MK docker "$w/bin.tar" "$w/bin.json"
$MK oci "$w/dbg.tar" "$w/dbg.json"
converted "$w/o_pair" "$w/bin.tar" "$w/dbg.tar"
converted "$w/o_files" "$w/d.stripped" "$w/d.debug"
if [ -s "$w/o_pair/$d_id.lidia" ] && cmp -s "$w/o_pair/$d_id.lidia" "$w/o_files/$d_id.lidia" &&
	grep -q 'bin.tar@svc:1!.*dbg.tar@svc-dbg:1!' "$w/o_pair.json"; then
	ok "images: a debug image pairs with its binary image (same bytes as the files)"
else
	not_ok "images: a debug image pairs with its binary image (same bytes as the files)" \
		"$(ls "$w/o_pair" "$w/o_files" 2>&1)" "$(grep -h inputs "$w/o_pair.json")"
fi

# (g) lidiagen index takes --platform too: convert --index converts what it found.
rm -rf "$w/o_ix"
if "$L" index -q "$w/multi.tar" --platform linux/arm64 -o "$w/ix.jsonl" >"$w/ix.log" 2>&1 </dev/null &&
	grep -q "platform='linux/arm64'" "$w/ix.jsonl"; then
	converted "$w/o_ix" --index "$w/ix.jsonl"
	same_as "lidiagen index --platform, then convert --index" "$w/o_ix" "$w/s" "$w/p2"
else
	not_ok "images: lidiagen index --platform, then convert --index" "$(first_lines 5 "$w/ix.log")"
fi

# (h) An OCI image layout directory (oci1.tar unpacked): read as the image, named as itself.
rm -rf "$w/layout" && mkdir "$w/layout" && tar -xf "$w/oci1.tar" -C "$w/layout"
converted "$w/o_dir" "$w/layout"
if same_as "an OCI layout directory: only the visible files" "$w/o_dir" "$w/a" "$w/r2" >"$w/dir.tap"; then
	if grep -q '"inputs":\["[^"]*/layout@app:1!sha256:[0-9a-f]\{12\}!usr/bin/a"\]' "$w/o_dir.json" &&
		grep -q '"read":"[^"]*/layout"' "$w/o_dir.json"; then
		cat "$w/dir.tap"
	else
		not_ok "images: an OCI layout directory: named as itself" "$(grep -h 'inputs\|read' "$w/o_dir.json")"
	fi
else
	cat "$w/dir.tap"
fi

# (i) The same layout tarred with "./" names (tar -C DIR -cf X .) is an image
# too; a plain tar of "./" names is read as before (opened twice, not thrice).
tar -C "$w/layout" -cf "$w/dot.tar" .
mkdir -p "$w/plain/usr/bin" && cp "$w/a" "$w/plain/usr/bin/a" && tar -C "$w/plain" -cf "$w/plain.tar" .
converted "$w/o_dot" "$w/dot.tar"
converted "$w/o_plain" "$w/plain.tar"
if same_as "a tar of ./ names: the image's visible files alone" "$w/o_dot" "$w/a" "$w/r2" >"$w/dot.tap" &&
	grep -q '"read":"[^"]*plain.tar","opened":2' "$w/o_plain.json" && [ -s "$w/o_plain/$(id "$w/a").lidia" ]; then
	cat "$w/dot.tap"
else
	not_ok "images: a tar of ./ names: an image when it is one, else read as before" \
		"$(cat "$w/dot.tap")" "$(grep -h read "$w/o_plain.json")"
fi

# (j) docker save's empty layer, and a layer an image has twice (written as a
# symbolic link to the first): applied, b still deleted, a shown.
cat >"$w/dup.json" <<J
{"images": [{"ref": "dup:1", "layers": [{"usr/bin/a": "$w/a"}, {}, {"usr/bin/a": "$w/a"},
 {"usr/bin/b": "$w/b"}, {"usr/bin/.wh.b": ""}]}]}
J
$MK docker "$w/dup.tar" "$w/dup.json"
converted "$w/o_dup" "$w/dup.tar"
same_as "docker save: an empty layer, a layer twice (a symbolic link)" "$w/o_dup" "$w/a"

# (k) A file replaced by a symbolic link in a later layer is hidden as by a file.
cat >"$w/link.json" <<J
{"images": [{"ref": "link:1", "layers": [{"usr/bin/a": "$w/a", "usr/bin/b": "$w/b"},
 {"usr/bin/b": "->a"}]}]}
J
$MK oci "$w/link.tar" "$w/link.json"
converted "$w/o_link" "$w/link.tar"
same_as "a file replaced by a symbolic link in a later layer: not converted" "$w/o_link" "$w/a"
