#!/usr/bin/env bash
# Damaged archives and compressed files that are no archives (issue 9: never
# crash, hang or lose an input). A corrupt member at any depth, the
# compressed stream of a member included, is one failure line naming its
# path (FILE!MEMBER: why), exit 1, and the other inputs of the run are still
# converted; a gzip/xz/zstd/bzip2 file of text is passed over quietly, one of
# an ELF file is converted; archive limits are checked against the sizes
# headers declare before inflating, and against the bytes while inflating.
#
# Inputs: tests/fixtures/repro/hello_1flip.deb and nested_xz.tar (see its
# README); the rest is made here from three tiny C programs with
#   cc -O1 -g -Wl,--build-id -DVARIANT=N batch_prog.c -o appN
# and python3 (tarfile, zipfile, gzip, lzma; a .deb as an ar file by hand).
set -u
. "$(dirname "$0")/lib/common.sh"

L=$LIDIAGEN
w=$(scratch work)
T=${HOSTILE_TIMEOUT:-60}
cd "$w" || exit 0

# hrun PREFIX ARGS...: lidiagen ARGS under a timeout; sets RC (124: timed out).
hrun() {
	local p=$1
	shift
	timeout -k 5 "$T" "$L" "$@" -j 1 --no-debug-search --allow-dynsym-only >"$p.out" 2>"$p.err" </dev/null
	RC=$?
}
keys() { (ls "$1/symbolizer/anonymous" 2>/dev/null) | sort | tr '\n' ' '; }
has_key() { [ -f "$1/symbolizer/anonymous/$2" ]; }
# Error lines: every stderr line but warnings and the summary.
errors() { grep -v -E '^lidiagen: (warning: |[0-9]+ files?, )' "$1.err"; }

for v in 1 2 3; do
	if ! cc -O1 -g -Wl,--build-id -DVARIANT=$v "$FIXTURES_SRC/batch/batch_prog.c" -o app$v 2>cc.err; then
		not_ok "hostile archives: the test programs build" "$(first_lines 5 cc.err)"
		exit 0
	fi
done
ID1=$(build_id app1) ID2=$(build_id app2) ID3=$(build_id app3)
if [ -z "$ID1" ] || [ -z "$ID2" ] || [ -z "$ID3" ] || [ "$ID1" = "$ID2" ] || [ "$ID2" = "$ID3" ]; then
	not_ok "hostile archives: the test programs have three build IDs" "'$ID1' '$ID2' '$ID3'"
	exit 0
fi

# ---- The reproducers: a corrupt archive inside an archive ------------------------

# repro NAME MEMBER WHAT: NAME with app1 in the same run: exit 1, one line
# "NAME!MEMBER: truncated or corrupt archive: <libarchive's reason>", app1
# still converted.
repro() {
	local name=$1 member=$2 p=$w/$1 f=$FIXTURES_SRC/repro/$1 what
	what="hostile: $name ($3): exit 1, a line '$name!$member: <reason>', the other input converted"
	hrun "$p" "$f" app1 -o "$p.d"
	if [ "$RC" -eq 1 ] && has_key "$p.d" "$ID1" && [ "$(grep -c -F "/$name!$member: " "$p.err")" -eq 1 ] &&
		grep -F "/$name!$member: " "$p.err" | grep -q -E ': truncated or corrupt archive: [A-Za-z]{4}'; then
		ok "$what"
	else
		not_ok "$what" "lidiagen $name app1: exit $RC (want 1); keys: $(keys "$p.d")(app1: $ID1)" \
			"$(first_lines 8 "$p.err")"
	fi
}
repro hello_1flip.deb data.tar.xz "one byte flipped inside data.tar.xz"
repro nested_xz.tar corrupt_early.tar.xz "a tar holding a .tar.xz corrupted early"

# ---- Compressed files that hold no archive -------------------------------------------

"$PYTHON" - <<'EOF' >mk.log 2>&1
import gzip, lzma, bz2, io, os, struct, tarfile, time

text = b"".join(b"line %d of the news, nothing to see here\n" % i for i in range(400))
man = b'.TH HELLO 1\n.SH NAME\nhello \\- say hello\n' * 50
os.makedirs("tree/doc", exist_ok=True)
open("tree/doc/NEWS.gz", "wb").write(gzip.compress(text, mtime=0))
open("tree/doc/hello.1.xz", "wb").write(lzma.compress(man))
open("tree/doc/README.bz2", "wb").write(bz2.compress(text))
open("tree/doc/empty.gz", "wb").write(gzip.compress(b"", mtime=0))
open("tree/app2.debug.xz", "wb").write(lzma.compress(open("app2", "rb").read()))

def tar_bytes(members, fmt=tarfile.GNU_FORMAT):
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=fmt) as t:
        for name, data in members:
            ti = tarfile.TarInfo(name)
            ti.size, ti.mode, ti.mtime = len(data), 0o755, 0
            t.addfile(ti, io.BytesIO(data))
    return buf.getvalue()

def ar_bytes(members):
    out = b"!<arch>\n"
    for name, data in members:
        out += b"%-16s%-12d%-6d%-6d%-8o%-10d`\n" % (name.encode(), 0, 0, 0, 0o100644, len(data))
        out += data + (b"\n" if len(data) % 2 else b"")
    return out

# A .deb whose data.tar.xz holds gzip'd and xz'd text, an ELF file and an xz'd ELF file.
data = tar_bytes([("./usr/bin/app1", open("app1", "rb").read()),
                  ("./usr/share/doc/hello/changelog.Debian.gz", gzip.compress(text, mtime=0)),
                  ("./usr/share/man/man1/hello.1.xz", lzma.compress(man)),
                  ("./usr/lib/debug/app3.debug.xz", lzma.compress(open("app3", "rb").read()))])
control = tar_bytes([("./control", b"Package: hello\nVersion: 1\n")])
open("nested.deb", "wb").write(ar_bytes([("debian-binary", b"2.0\n"),
                                         ("control.tar.gz", gzip.compress(control, mtime=0)),
                                         ("data.tar.xz", lzma.compress(data))]))
EOF
if [ ! -f nested.deb ]; then
	not_ok "hostile: the compressed-file fixtures are made" "$(cat mk.log)"
	exit 0
fi

p=$w/rtree
cp app1 tree/
hrun "$p" -v -r tree -o "$p.d"
if [ "$RC" -eq 0 ] && [ -z "$(errors "$p")" ] && has_key "$p.d" "$ID1"; then
	ok "hostile: -r over gzip'd, xz'd, bzip2'd and empty gzip'd text (NEWS.gz, hello.1.xz): exit 0, no error line"
else
	not_ok "hostile: -r over gzip'd, xz'd, bzip2'd and empty gzip'd text (NEWS.gz, hello.1.xz): exit 0, no error line" \
		"lidiagen -r tree: exit $RC (want 0)" "$(first_lines 8 "$p.err")"
fi
if has_key "$p.d" "$ID2" && grep -q "<- tree/app2.debug.xz " "$p.out"; then
	ok "hostile: an xz'd ELF file found by -r (app2.debug.xz) is converted, named as the .xz file"
else
	not_ok "hostile: an xz'd ELF file found by -r (app2.debug.xz) is converted, named as the .xz file" \
		"keys: $(keys "$p.d")(app2: $ID2)" "$(first_lines 4 "$p.out")" "$(first_lines 4 "$p.err")"
fi
if command -v zstd >/dev/null 2>&1; then
	zstd -q -c tree/doc/hello.1.xz >tree/doc/blob.zst 2>/dev/null
	xz -dc tree/doc/hello.1.xz | zstd -q -c >tree/doc/hello.1.zst
	p=$w/rtree-zst
	hrun "$p" -r tree/doc -o "$p.d"
	if [ "$RC" -eq 0 ] && [ -z "$(errors "$p")" ]; then
		ok "hostile: -r over zstd'd text: exit 0, no error line"
	else
		not_ok "hostile: -r over zstd'd text: exit 0, no error line" "exit $RC" "$(first_lines 8 "$p.err")"
	fi
else
	skip "hostile: -r over zstd'd text (no zstd command)"
fi
p=$w/explicit
hrun "$p" tree/doc/NEWS.gz app1 -o "$p.d"
if [ "$RC" -eq 1 ] && grep -q '^lidiagen: tree/doc/NEWS.gz: not an ELF file or an archive' "$p.err" &&
	has_key "$p.d" "$ID1"; then
	ok "hostile: gzip'd text named on the command line: 'not an ELF file or an archive', as plain text is"
else
	not_ok "hostile: gzip'd text named on the command line: 'not an ELF file or an archive', as plain text is" \
		"exit $RC" "$(first_lines 5 "$p.err")"
fi
p=$w/deb
hrun "$p" -v nested.deb -o "$p.d"
if [ "$RC" -eq 0 ] && [ -z "$(errors "$p")" ] && has_key "$p.d" "$ID1" && has_key "$p.d" "$ID3" &&
	grep -q '<- nested.deb!data.tar.xz!./usr/lib/debug/app3.debug.xz ' "$p.out"; then
	ok "hostile: a .deb holding gzip'd and xz'd text and an xz'd ELF file: exit 0, no error line, both ELF files converted"
else
	not_ok "hostile: a .deb holding gzip'd and xz'd text and an xz'd ELF file: exit 0, no error line, both ELF files converted" \
		"exit $RC (want 0); keys: $(keys "$p.d")(app1: $ID1, app3: $ID3)" "$(first_lines 5 "$p.out")" \
		"$(first_lines 8 "$p.err")"
fi

# ---- Damage inside a compressed stream ---------------------------------------------

# A tar.gz of app1 then app2, one byte of the deflate data of app1 flipped
# where zlib inflates on without an error (gzip's CRC is not checked by
# libarchive) and app2's header comes out damaged: app1's bytes are garbage.
"$PYTHON" - <<'EOF' >mk2.log 2>&1
import gzip, io, tarfile, zlib

def tar_bytes(members):
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.GNU_FORMAT) as t:
        for name, data in members:
            ti = tarfile.TarInfo(name)
            ti.size, ti.mode, ti.mtime = len(data), 0o755, 0
            t.addfile(ti, io.BytesIO(data))
    return buf.getvalue()

a1, a2 = open("app1", "rb").read(), open("app2", "rb").read()
tar = tar_bytes([("bin/app1", a1), ("bin/app2", a2)])
hdr2 = 512 + (len(a1) + 511) // 512 * 512
gz = gzip.compress(tar, compresslevel=6, mtime=0)

def bad_checksum(h):
    if len(h) < 512 or h == b"\0" * 512:
        return False
    s = sum(h[:148]) + 8 * 32 + sum(h[156:512])
    try:
        return int(h[148:156].split(b"\0")[0].strip() or b"0", 8) != s
    except ValueError:
        return True

for off in range(40, len(gz) - 8):
    g = bytearray(gz)
    g[off] ^= 0x10
    d = zlib.decompressobj(31)
    try:
        out = d.decompress(bytes(g), hdr2 + 512)
    except zlib.error:
        continue
    if out[:512] == tar[:512] and out[:hdr2] != tar[:hdr2] and bad_checksum(out[hdr2:hdr2 + 512]):
        open("gzflip.tar.gz", "wb").write(g)
        print("flipped byte", off, "of", len(gz))
        break
EOF
p=$w/gzflip
if [ -f gzflip.tar.gz ]; then
	note "gzflip.tar.gz: $(cat mk2.log)"
	hrun "$p" gzflip.tar.gz app3 -o "$p.d"
	if [ "$RC" -eq 1 ] && has_key "$p.d" "$ID3" && ! errors "$p" | grep -q -i 'ELF' &&
		errors "$p" | grep -q -E '^lidiagen: gzflip\.tar\.gz(![^:]*)?: truncated or corrupt archive: '; then
		ok "hostile: gzip damage inside a tar member is an archive error naming gzflip.tar.gz, not an ELF one; exit 1, the other input converted"
	else
		not_ok "hostile: gzip damage inside a tar member is an archive error naming gzflip.tar.gz, not an ELF one; exit 1, the other input converted" \
			"exit $RC (want 1); keys: $(keys "$p.d")(app3: $ID3)" "$(first_lines 6 "$p.err")"
	fi
else
	not_ok "hostile: a flipped byte of a tar.gz that inflates without an error is found" "$(cat mk2.log)"
fi

# ---- Size limits before and while inflating ---------------------------------------

"$PYTHON" - <<'EOF' >mk3.log 2>&1
import io, struct, tarfile, zipfile

class Pipe(io.RawIOBase):
    """A file zipfile cannot seek: it writes sizes after the data (bit 3)."""
    def __init__(self, f): self.f = f
    def writable(self): return True
    def write(self, b): return self.f.write(b)

def tar_of(name, data):
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.GNU_FORMAT) as t:
        ti = tarfile.TarInfo(name)
        ti.size, ti.mtime = len(data), 0
        t.addfile(ti, io.BytesIO(data))
    return buf.getvalue()

app1, head = open("app1", "rb").read(), open("app1", "rb").read()[:64]

# A streamed zip (no sizes before the data) in a tar: app1, and a 64 MiB
# "ELF" (an ELF header, then zeros).
buf = io.BytesIO()
with zipfile.ZipFile(Pipe(buf), "w", zipfile.ZIP_DEFLATED) as z:
    with z.open("app1", "w") as m:
        m.write(app1)
open("streamed.tar", "wb").write(tar_of("streamed.zip", buf.getvalue()))
buf = io.BytesIO()
with zipfile.ZipFile(Pipe(buf), "w", zipfile.ZIP_DEFLATED) as z:
    with z.open("big.elf", "w", force_zip64=True) as m:
        m.write(head)
        for i in range(64):
            m.write(bytes(1 << 20))
open("streamed-big.tar", "wb").write(tar_of("big.zip", buf.getvalue()))

# A zip whose member declares 64 MiB (zeros: 64 KB deflated).
with zipfile.ZipFile("declares.zip", "w", zipfile.ZIP_DEFLATED) as z:
    with z.open("zeros.bin", "w", force_zip64=True) as m:
        for i in range(64):
            m.write(bytes(1 << 20))

# A zip whose ELF member declares 100 bytes and inflates to 1 MiB: the
# uncompressed size patched in its local header and the central directory.
with zipfile.ZipFile("lies.zip", "w", zipfile.ZIP_DEFLATED) as z:
    z.writestr("liar.elf", head + bytes((1 << 20) - len(head)))
b = bytearray(open("lies.zip", "rb").read())
b[22:26] = struct.pack("<I", 100)
cd = b.index(b"PK\x01\x02")
b[cd + 24:cd + 28] = struct.pack("<I", 100)
open("lies.zip", "wb").write(b)
EOF
if [ ! -f lies.zip ]; then
	not_ok "hostile: the zip fixtures are made" "$(cat mk3.log)"
	exit 0
fi

p=$w/streamed
hrun "$p" streamed.tar app3 -o "$p.d" --max-member-size 16K
if [ "$RC" -eq 1 ] && ! has_key "$p.d" "$ID1" && has_key "$p.d" "$ID3" &&
	grep -q '^lidiagen: streamed.tar!streamed.zip!app1: .*larger than 16384' "$p.err"; then
	ok "limits: a zip member that declares no size (streamed) is refused when its bytes pass --max-member-size"
else
	not_ok "limits: a zip member that declares no size (streamed) is refused when its bytes pass --max-member-size" \
		"exit $RC (want 1); keys: $(keys "$p.d")(app1 $ID1 must be missing, app3 $ID3 there)" "$(first_lines 5 "$p.err")"
fi
p=$w/streamed-big
hrun "$p" streamed-big.tar app3 -o "$p.d" --max-member-size 16K --max-expansion 8M
if [ "$RC" -eq 1 ] && has_key "$p.d" "$ID3" && grep -q '^lidiagen: streamed-big.tar!big.zip!big.elf: .*larger than 16384' "$p.err" &&
	grep -q '^lidiagen: streamed-big.tar[^ ]*: .*expands past 8388608' "$p.err"; then
	ok "limits: reading past a refused member of no declared size counts against --max-expansion (64 MiB of zeros stop at 8M)"
else
	not_ok "limits: reading past a refused member of no declared size counts against --max-expansion (64 MiB of zeros stop at 8M)" \
		"exit $RC (want 1)" "$(first_lines 5 "$p.err")"
fi
p=$w/declares
hrun "$p" declares.zip app3 -o "$p.d" --max-expansion 8M
if [ "$RC" -eq 1 ] && has_key "$p.d" "$ID3" &&
	grep -q '^lidiagen: declares.zip!zeros.bin: declares 67108864 bytes, past 8388608' "$p.err"; then
	ok "limits: a zip member declaring 64 MiB is refused by --max-expansion 8M from its header, before inflating"
else
	not_ok "limits: a zip member declaring 64 MiB is refused by --max-expansion 8M from its header, before inflating" \
		"exit $RC (want 1)" "$(first_lines 5 "$p.err")"
fi
p=$w/lies
hrun "$p" lies.zip app3 -o "$p.d"
if [ "$RC" -eq 1 ] && has_key "$p.d" "$ID3" &&
	grep -q '^lidiagen: lies.zip!liar.elf: holds more than the 100 bytes its header declares' "$p.err"; then
	ok "limits: a zip member that inflates past the 100 bytes its header declares is stopped there"
else
	not_ok "limits: a zip member that inflates past the 100 bytes its header declares is stopped there" \
		"exit $RC (want 1)" "$(first_lines 5 "$p.err")"
fi
exit 0
