#!/usr/bin/env python3
"""Make the archives of tests/t_batch.sh, byte for byte the same every run.

    batch_mkarchive.py FORMAT OUT MEMBER...

FORMAT: tar, tar.gz, tar.xz, tar.bz2, zip, cpio (newc), cpio.gz.
MEMBER: NAME=SOURCE, NAME taken as is (so '../x' and '/abs/x' are members
too: the archives a hostile upload would hold), SOURCE a file, or
'zeros:SIZE' for SIZE zero bytes, 'random:SIZE' for SIZE bytes that do
not compress (the same every run), or 'text:WORDS' for those bytes.
Every member has mode 0755, owner 0, mtime 2020-01-01.
"""
import gzip
import io
import sys
import tarfile
import zipfile

MTIME = 1577836800


def member_bytes(source):
    if source.startswith("zeros:"):
        return bytes(int(source[6:]))
    if source.startswith("random:"):
        import random
        return random.Random(5).getrandbits(8 * int(source[7:])).to_bytes(int(source[7:]), "little")
    if source.startswith("text:"):
        return source[5:].encode()
    with open(source, "rb") as f:
        return f.read()


def make_tar(out, members, mode):
    # Plain and compressed tars through tarfile; gzip without a name or time.
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.GNU_FORMAT) as t:
        for name, data in members:
            ti = tarfile.TarInfo(name)
            ti.size = len(data)
            ti.mode = 0o755
            ti.mtime = MTIME
            ti.uname = ti.gname = "root"
            t.addfile(ti, io.BytesIO(data))
    data = raw.getvalue()
    if mode == "gz":
        data = gzip.compress(data, mtime=0)
    elif mode == "xz":
        import lzma
        data = lzma.compress(data)
    elif mode == "bz2":
        import bz2
        data = bz2.compress(data)
    return data


def make_zip(members):
    raw = io.BytesIO()
    with zipfile.ZipFile(raw, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in members:
            zi = zipfile.ZipInfo(name, date_time=(2020, 1, 1, 0, 0, 0))
            zi.external_attr = 0o100755 << 16
            zi.compress_type = zipfile.ZIP_DEFLATED
            # ZipInfo cleans a leading '/' and drive letters away: put the raw name back.
            zi.filename = name
            z.writestr(zi, data)
    return raw.getvalue()


def make_cpio(members):
    # SVR4 "newc": a 110-byte ASCII header, the name, NUL, padding to 4, data, padding to 4.
    out = io.BytesIO()

    def entry(ino, name, mode, data):
        nb = name.encode() + b"\0"
        hdr = "070701" + "".join("%08X" % v for v in (
            ino, mode, 0, 0, 1, MTIME, len(data), 0, 0, 0, 0, len(nb), 0))
        out.write(hdr.encode() + nb)
        out.write(b"\0" * (-(110 + len(nb)) % 4))
        out.write(data)
        out.write(b"\0" * (-len(data) % 4))

    for i, (name, data) in enumerate(members, 1):
        entry(i, name, 0o100755, data)
    entry(0, "TRAILER!!!", 0, b"")
    return out.getvalue()


def main(argv):
    if len(argv) < 2:
        sys.stderr.write(__doc__)
        return 2
    fmt, out = argv[0], argv[1]
    members = []
    for m in argv[2:]:
        name, _, source = m.partition("=")
        members.append((name, member_bytes(source)))
    if fmt == "tar":
        data = make_tar(out, members, None)
    elif fmt in ("tar.gz", "tar.xz", "tar.bz2"):
        data = make_tar(out, members, fmt[4:])
    elif fmt == "zip":
        data = make_zip(members)
    elif fmt == "cpio":
        data = make_cpio(members)
    elif fmt == "cpio.gz":
        data = gzip.compress(make_cpio(members), mtime=0)
    else:
        sys.stderr.write("unknown format %s\n" % fmt)
        return 2
    with open(out, "wb") as f:
        f.write(data)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
