#!/usr/bin/env python3
"""Make the seed corpora of tests/fuzz/fuzz_archive.c and fuzz_config.c.

    batch_fuzz_corpus.py ARCHIVE_DIR CONFIG_DIR [DEFAULT_CONFIG]

ARCHIVE_DIR gets tiny archives of every format lidiagen reads (tar plain
and compressed, zip stored/deflated/streamed, cpio newc/odc, ar as in a
.deb, .rpm when rpmbuild is there), nested ones, truncated ones, hostile
member names, a member over the fuzz target's 1 MiB limit, a bomb past its
8 MiB, and a few inputs that are no archive. Their ELF members are a 2 KB
static program built here with gcc (and its stripped and debug-file forms).
CONFIG_DIR gets YAML configs, valid (every kind of option) and broken (each
kind of error), DEFAULT_CONFIG (config/lidiagen.yaml) among them. Run it
from the repository's top directory; it rewrites both directories.
"""
import bz2
import gzip
import io
import lzma
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import batch_mkarchive as mk  # noqa: E402

TINY_C = b"""void _start(void) { for (;;) ; }
int helper(int x) { return x * 3; }
static inline int twice(int x) { return x + x; }
int outer(int x) { return twice(helper(x)); }
"""


def tiny_elves(tmp):
    src = os.path.join(tmp, "tiny.c")
    with open(src, "wb") as f:
        f.write(TINY_C)
    out = os.path.join(tmp, "tiny")
    subprocess.check_call(["gcc", "-Os", "-g", "-nostdlib", "-static", "-no-pie",
                           "-fno-asynchronous-unwind-tables", "-ffile-prefix-map=%s=/t" % tmp,
                           "-Wl,--build-id=sha1", "-Wl,-n", "-o", out, src])
    subprocess.check_call(["strip", "-o", out + ".s", out])
    subprocess.check_call(["objcopy", "--only-keep-debug", out, out + ".debug"])
    subprocess.check_call(["gcc", "-Os", "-nostdlib", "-static", "-no-pie", "-Wl,--build-id=none",
                           "-Wl,-n", "-s", "-o", out + ".noid", src])
    res = []
    for suffix in ("", ".s", ".debug", ".noid"):
        with open(out + suffix, "rb") as f:
            res.append(f.read())
    return res


def tar(members, comp=None):
    raw = mk.make_tar(None, members, None)
    if comp == "gz":
        return gzip.compress(raw, mtime=0)
    if comp == "xz":
        return lzma.compress(raw)
    if comp == "bz2":
        return bz2.compress(raw)
    if comp == "zst":
        return subprocess.run(["zstd", "-q", "-19", "-c"], input=raw, stdout=subprocess.PIPE,
                              check=True).stdout
    return raw


class Unseekable(io.RawIOBase):
    """A write-only stream: zipfile then writes sizes after the data (flag 8)."""

    def __init__(self):
        self.buf = bytearray()

    def writable(self):
        return True

    def write(self, b):
        self.buf += b
        return len(b)


def zip_of(members, stored=False, streamed=False):
    method = zipfile.ZIP_STORED if stored else zipfile.ZIP_DEFLATED
    if streamed:
        out = Unseekable()
        with zipfile.ZipFile(out, "w", method) as z:
            for name, data in members:
                with z.open(zipfile.ZipInfo(name, date_time=(2020, 1, 1, 0, 0, 0)), "w") as f:
                    f.write(data)
        return bytes(out.buf)
    return mk.make_zip(members) if not stored else _zip_stored(members)


def _zip_stored(members):
    raw = io.BytesIO()
    with zipfile.ZipFile(raw, "w", zipfile.ZIP_STORED) as z:
        for name, data in members:
            z.writestr(zipfile.ZipInfo(name, date_time=(2020, 1, 1, 0, 0, 0)), data)
    return raw.getvalue()


def cpio_odc(members):
    out = io.BytesIO()

    def entry(ino, name, mode, data):
        nb = name.encode() + b"\0"
        out.write(("070707%06o%06o%06o%06o%06o%06o%06o%011o%06o%011o" % (
            0, ino, mode, 0, 0, 1, 0, mk.MTIME, len(nb), len(data))).encode())
        out.write(nb)
        out.write(data)

    for i, (name, data) in enumerate(members, 1):
        entry(i, name, 0o100755, data)
    entry(0, "TRAILER!!!", 0, b"")
    return out.getvalue()


def ar_of(members):
    out = io.BytesIO()
    out.write(b"!<arch>\n")
    for name, data in members:
        out.write(("%-16s%-12d%-6d%-6d%-8o%-10d`\n" % (name, 0, 0, 0, 0o100644, len(data))).encode())
        out.write(data)
        if len(data) % 2:
            out.write(b"\n")
    return out.getvalue()


def deb_of(members):
    return ar_of([("debian-binary", b"2.0\n"),
                  ("control.tar.gz", tar([("./control", b"Package: fuzz\n")], "gz")),
                  ("data.tar.xz", tar(members, "xz"))])


def rpm_of(tmp, elf):
    if not shutil.which("rpmbuild"):
        return None
    top = os.path.join(tmp, "rpm")
    os.makedirs(os.path.join(top, "SOURCES"), exist_ok=True)
    with open(os.path.join(top, "SOURCES", "tiny"), "wb") as f:
        f.write(elf)
    spec = os.path.join(top, "tiny.spec")
    with open(spec, "w") as f:
        f.write("\n".join([
            "Name: tiny", "Version: 1", "Release: 1", "Summary: fuzz seed", "License: Apache-2.0",
            "%define debug_package %{nil}", "%define __os_install_post %{nil}",
            "%define _build_id_links none", "%description", "seed", "%install",
            "mkdir -p %{buildroot}/usr/bin", "cp -p %{_sourcedir}/tiny %{buildroot}/usr/bin/",
            "%files", "/usr/bin/tiny", ""]))
    subprocess.check_call(["rpmbuild", "-bb", "--quiet", "--target", "x86_64", "--define",
                           "_topdir " + top, spec], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    with open(os.path.join(top, "RPMS", "x86_64", "tiny-1-1.x86_64.rpm"), "rb") as f:
        return f.read()


def archives(tmp):
    elf, stripped, debug, noid = tiny_elves(tmp)
    bid_dir = "usr/lib/debug/.build-id/ab/cdef.debug"
    basic = [("usr/bin/tiny", stripped), (bid_dir, debug), ("usr/share/doc/README", b"text\n"),
             ("usr/bin/noid", noid)]
    c = {}
    c["tar"] = tar(basic)
    c["tar.gz"] = tar(basic, "gz")
    c["tar.xz"] = tar(basic, "xz")
    c["tar.bz2"] = tar(basic, "bz2")
    if shutil.which("zstd"):
        c["tar.zst"] = tar(basic, "zst")
    c["zip-deflated"] = zip_of(basic)
    c["zip-stored"] = zip_of(basic, stored=True)
    c["zip-streamed"] = zip_of(basic, streamed=True)
    c["cpio-newc"] = mk.make_cpio(basic)
    c["cpio-odc"] = cpio_odc(basic)
    c["cpio.gz"] = gzip.compress(mk.make_cpio(basic), mtime=0)
    c["ar-deb"] = deb_of(basic)
    c["ar-dbgsym-deb"] = deb_of([("./" + bid_dir, debug)])
    rpm = rpm_of(tmp, elf)
    if rpm:
        c["rpm"] = rpm
    # Nested: depth 2 (tar.gz > zip > cpio > ELF), depth 4 (past the target's 3).
    c["nested-2"] = tar([("inner.zip", zip_of([("level2.cpio", mk.make_cpio([("tiny", elf)]))]))], "gz")
    deep = tar([("tiny", elf)])
    for i in range(4):
        deep = tar([("level%d.tar" % i, deep)])
    c["nested-5"] = deep
    c["nested-deb-in-tar"] = tar([("pool/fuzz.deb", deb_of(basic))], "xz")
    # Hostile names.
    c["names-hostile"] = tar([("../../escape", elf), ("/abs/path", stripped),
                              ("ctl\x01\x1b[2Jname\nx", elf), ("x" * 2000, elf), ("./", b"")])
    c["names-zip-hostile"] = mk.make_zip([("../zip-escape", elf), ("/abs-zip", elf)])
    # Truncated.
    for name in ("tar.gz", "tar.xz", "zip-deflated", "ar-deb", "cpio-newc", "nested-2"):
        c["truncated-" + name] = c[name][:len(c[name]) // 2]
    c["truncated-elf-member"] = tar([("tiny", elf)])[:512 + len(elf) // 2]
    # Limits of the target: a member over 1 MiB, expansion over 8 MiB.
    c["member-too-large"] = tar([("big", elf + bytes((1 << 20) + 4096))], "xz")
    c["bomb-nested"] = tar([("inner.tar", tar([("zeros", bytes(9 << 20))]))], "xz")
    c["bomb-flat"] = tar([("zeros", bytes(9 << 20))], "xz")
    c["many-members"] = tar([("bin/t%03d" % i, elf) for i in range(300)], "xz")
    # A fake ELF (magic only), an ELF of the other byte order's header.
    c["elf-fake"] = tar([("fake", b"\x7fELF" + bytes(60)), ("fake2", b"\x7fELF\x02\x02\x01" + bytes(100))])
    # Found by fuzz_archive: a zip member (46 bytes in all) whose data inflates
    # past the size its header declares overflowed read_elf's buffer.
    c["crash-zip-inflates-past-declared-size"] = bytes.fromhex(
        "504b030414000000082800002150d709e35f04010000b000000000000000ab77f5716319d1f8caea81d1f87858c1")
    # No archives at all.
    c["not-archive-elf"] = elf
    c["not-archive-text"] = b"hello\n"
    c["empty"] = b""
    c["gzip-of-elf"] = gzip.compress(elf, mtime=0)
    # Positions: a compressed ELF member (its one entry), and one name thrice.
    c["tar-of-gzip-of-elf"] = tar([("dir/app.gz", gzip.compress(elf, mtime=0)), ("app", elf)])
    c["tar-names-twice"] = tar([("app", elf), ("app", elf[:-1] + b"x"), ("app", elf)])
    return c


CONFIGS = {
    "valid-every-kind": """# every kind of option
output: out
recursive: true
follow-symlinks: false
include:
  - '*.so*'
  - 'usr/bin/*'
exclude: ['*test*', "*.o"]
layout: template
layout-template: "x/{tenant}/{build_id}.lidia"
tenant: team-a
jobs: 4
force: yes
manifest: m.jsonl
fallback-key: sha256
shard: 2/3
symbols-only: off
no-inlines: false
no-lines: no
no-files: 0
no-go: 1
no-dwarf: false
no-demangle: false
no-symtab: false
no-dynsym: true
debug-dir: /usr/lib/debug
no-debug-search: false
max-member-size: 512M
max-expansion: 16G
max-depth: 2
state: st
no-state: false
quiet: false
verbose: true
""",
    "valid-flow-map": "{output: o, layout: flat, include: [a, b], force: true}\n",
    "valid-documents": "---\nlayout: flat\n...\n---\nlayout: debuginfod\n",
    "valid-comments-only": "# nothing set\n\n",
    "valid-empty": "",
    "valid-directive": "%YAML 1.1\n---\nlayout: flat\n",
    "valid-quoted": "tenant: 'a-b.c_d'\noutput: \"dir with spaces\"\nmax-member-size: \"4k\"\n",
    "valid-block-scalar": "output: |\n  multi\n  line\n",
    "valid-crlf": "layout: flat\r\ninclude:\r\n  - a\r\n",
    "bad-unknown-key": "layout: flat\nbogus: 1\n",
    "bad-layout": "layout: sideways\n",
    "bad-template": "layout-template: ../{build_id}\n",
    "bad-tenant": "tenant: a/b\n",
    "bad-jobs": "jobs: 100000\n",
    "bad-jobs-negative": "jobs: -1\n",
    "bad-size": "max-member-size: 12Q\n",
    "bad-size-zero": "max-expansion: 0\n",
    "bad-size-overflow": "max-expansion: 99999999999999999999T\n",
    "bad-depth": "max-depth: 17\n",
    "bad-shard": "shard: 0/0\n",
    "bad-shard-text": "shard: 1/2x\n",
    "bad-fallback": "fallback-key: md5\n",
    "bad-flag": "recursive: maybe\n",
    "bad-flag-list": "force: [true]\n",
    "bad-map-for-list": "include: {a: b}\n",
    "bad-list-for-value": "layout: [flat]\n",
    "bad-nested-list": "exclude:\n  - a\n  - [b]\n",
    "bad-top-sequence": "- layout\n- flat\n",
    "bad-top-scalar": "just a string\n",
    "bad-config-key": "config: other.yaml\n",
    "bad-null-value": "layout:\n",
    "bad-unclosed-flow": "include: [a, b\n",
    "bad-unclosed-quote": "layout: \"flat\n",
    "bad-tab": "\tlayout: flat\n",
    "bad-indent": "exclude:\n  - a\n - b\n",
    "bad-alias": "layout: &l flat\ntenant: *l\n",
    "bad-alias-undefined": "layout: *nope\n",
    "bad-merge-key": "base: &b {layout: flat}\n<<: *b\n",
    "bad-complex-key": "? [a]\n: b\n",
    "bad-tag": "output: !!binary aGVsbG8=\njobs: !!int 3\n",
    "bad-deep": "include: " + "[" * 200 + "\n",
    "bad-long-scalar": "output: " + "x" * 5000 + "\n",
    "bad-many-include": "include:\n" + "".join("  - p%d\n" % i for i in range(70)),
    "bad-duplicate-keys": "layout: flat\nlayout: debuginfod\n",
    "bad-nel-linebreak": "layout: flat\u0085bogus: 1\n",
    "bad-bom-utf16": "\ufefflayout: flat\nbogus: 1\n",
    "bad-binary": "\x00\x01\x02layout\xff: flat\n",
}


def main(argv):
    if len(argv) < 2:
        sys.stderr.write(__doc__)
        return 2
    adir, cdir = argv[0], argv[1]
    for d in (adir, cdir):
        if os.path.isdir(d):
            shutil.rmtree(d)
        os.makedirs(d)
    with tempfile.TemporaryDirectory() as tmp:
        for name, data in sorted(archives(tmp).items()):
            with open(os.path.join(adir, name), "wb") as f:
                f.write(data)
    for name, text in sorted(CONFIGS.items()):
        if name == "bad-bom-utf16":
            data = text.encode("utf-16-le")
        elif name == "bad-binary":
            data = text.encode("latin-1")
        else:
            data = text.encode("utf-8")
        with open(os.path.join(cdir, name + ".yaml"), "wb") as f:
            f.write(data)
    if len(argv) > 2 and os.path.isfile(argv[2]):
        shutil.copy(argv[2], os.path.join(cdir, "valid-default.yaml"))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
