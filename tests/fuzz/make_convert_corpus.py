#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Make the seed corpus of the whole-path fuzz target: tests/fuzz/corpus/convert/.

How the files were made (run from the repository root on Debian 12: gcc 12,
clang 14, binutils 2.40, dwz, xz, Go 1.22 from bookworm-backports):

    python3 tests/fuzz/make_convert_corpus.py [OUT_DIR]

OUT_DIR defaults to tests/fuzz/corpus/convert. Every seed is small on purpose
(libFuzzer mutates whole inputs; the corpus stays near 1 MB). The script
prints each command it runs; tests/fuzz/corpus/convert/README lists the files.

  c-*            tests/fixtures/batch/batch_prog.c (a function inlined twice)
                 built with gcc or clang -O2 -g: DWARF 4 and 5, debug sections
                 compressed (zlib, zstd, .zdebug), dwz'd, split into a stripped
                 binary and its debug file, and stripped with MiniDebugInfo
                 (.gnu_debugdata: the symbols, xz-compressed, as Fedora does)
  cxx-*          the small C++ program below (namespaces, templates, a lambda)
  c-data-only.so a library of one variable: DWARF with no subprogram at all
  asm-origins    tests/fixtures/corners/origins.s assembled and linked: a
                 partial unit of declarations (strp, strx1, string names)
                 that inlined code reaches through abstract origins and
                 specifications across units (lib/dwarf/name_chain.c)
  go-*.elf       the synthetic pclntabs of tests/fuzz/corpus/pclntab/synth-*.bin
                 (written by tests/unit/test_pclntab.c) wrapped in a minimal ELF
                 image of their class and byte order: one PT_LOAD at 0x10000,
                 a .gopclntab section and a go:func.* symbol at its start
  go1.22-trimmed a real Go 1.22 program (println only, -ldflags='-s -w') with
                 its .text bytes dropped (NOBITS): the pclntab, the inline
                 trees in .rodata and the module data are what is read
Inputs found by fuzzing (crash-*, timeout-*, leak-*) and the reproducers
(repro-*, symbolic links into tests/fixtures/repro/) are not made here; a
re-run leaves them alone.
"""
import os
import shutil
import struct
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
C_SRC = os.path.join(ROOT, "tests/fixtures/batch/batch_prog.c")
GO_SRC = os.path.join(ROOT, "tests/fixtures/batch/gohello")
PCLNTAB = os.path.join(ROOT, "tests/fuzz/corpus/pclntab")
GO = "/usr/lib/go-1.22/bin/go"

CXX_SRC = r"""
namespace shapes {
template <typename T> struct Box {
	T v;
	__attribute__((always_inline)) T area(T k) const { return v * k + (v >> 1); }
};
__attribute__((noinline)) int measure(int n)
{
	Box<int> b{n};
	auto twice = [&](int k) __attribute__((always_inline)) { return b.area(k) + b.area(k + 1); };
	int s = 0;
	for (int i = 0; i < n; i++)
		s += twice(i);
	return s;
}
} // namespace shapes
int main(int argc, char **) { return shapes::measure(argc * 7) & 0x7f; }
"""


def run(*cmd, cwd=None):
    print("  " + " ".join(cmd))
    subprocess.run(cmd, check=True, cwd=cwd)


def build_c(tmp, out):
    src = C_SRC
    cxx = os.path.join(tmp, "prog.cpp")
    with open(cxx, "w") as f:
        f.write(CXX_SRC)

    def cc(name, *args, compiler="gcc", source=src):
        # Paths mapped: the same bytes from any checkout and temporary directory.
        run(compiler, "-O2", "-g", "-fdebug-prefix-map=%s=/src" % ROOT,
            "-fdebug-prefix-map=%s=/src" % tmp, *args, "-o", os.path.join(out, name), source)
        return os.path.join(out, name)

    cc("c-gcc-O2-dwarf4", "-gdwarf-4")
    d5 = cc("c-gcc-O2-dwarf5", "-gdwarf-5")
    cc("c-gcc-O2-dwarf5-gz-zlib", "-gdwarf-5", "-gz=zlib")
    cc("c-clang-O2-dwarf5", "-gdwarf-5", compiler="clang")
    cc("cxx-gcc-O2-dwarf5", "-gdwarf-5", compiler="g++", source=cxx)
    # DWARF units and lines, and no function at all: no subprogram anywhere.
    data = os.path.join(tmp, "data.c")
    with open(data, "w") as f:
        f.write("int lidia_fuzz_data = 1;\n")
    cc("c-data-only.so", "-shared", source=data)
    run("objcopy", "--compress-debug-sections=zstd", d5, os.path.join(out, "c-gcc-O2-dwarf5-zstd"))
    run("objcopy", "--compress-debug-sections=zlib-gnu", os.path.join(out, "c-gcc-O2-dwarf4"),
        os.path.join(out, "c-gcc-O2-dwarf4-zdebug"))
    dwz = os.path.join(out, "c-gcc-O2-dwarf4-dwz")
    shutil.copy(os.path.join(out, "c-gcc-O2-dwarf4"), dwz)
    run("dwz", dwz)
    # A stripped binary and its debug file, as distributions ship them.
    run("objcopy", "--only-keep-debug", d5, os.path.join(out, "c-split.debug"))
    run("objcopy", "--strip-debug", "--add-gnu-debuglink=" + os.path.join(out, "c-split.debug"),
        d5, os.path.join(out, "c-split"))
    # MiniDebugInfo (gdb's "Separate Debug Sections"): the function symbols
    # that .dynsym lacks, in an xz-compressed ELF of their own.
    mini = os.path.join(tmp, "mini")
    run("objcopy", "--only-keep-debug", "--strip-debug", "--remove-section=.comment",
        "--remove-section=.gnu_debuglink", d5, mini)
    with open(os.path.join(tmp, "keep"), "w") as f:
        f.write("batch_leaf\nbatch_outer\nmain\n")
    run("objcopy", "-S", "--keep-symbols=" + os.path.join(tmp, "keep"), mini, mini + ".syms")
    run("xz", "-f", "-k", mini + ".syms")
    run("objcopy", "--strip-all", "--add-section", ".gnu_debugdata=" + mini + ".syms.xz", d5,
        os.path.join(out, "c-minidebuginfo"))
    # Names along origins and specifications, by hand-written DWARF.
    obj = os.path.join(tmp, "origins.o")
    run("as", os.path.join(ROOT, "tests/fixtures/corners/origins.s"), "-o", obj)
    run("gcc", "-nostdlib", "-Wl,-e,oc_main", "-Wl,--build-id", obj, "-o",
        os.path.join(out, "asm-origins"))


def elf_image(blob, bits, be):
    """A minimal ELF executable holding blob as .gopclntab at 0x10000."""
    e = ">" if be else "<"
    va = 0x10000
    shstr = b"\0.gopclntab\0.symtab\0.strtab\0.shstrtab\0"
    strtab = b"\0go:func.*\0runtime.pclntab\0"
    if bits == 64:
        ehsize, phsize, shsize, symsize = 64, 56, 64, 24
    else:
        ehsize, phsize, shsize, symsize = 52, 32, 40, 16
    off_blob = ehsize + phsize
    pad = lambda n: (-n) % 8
    off_sym = off_blob + len(blob) + pad(off_blob + len(blob))

    def sym(name, value, size, info, shndx):
        if bits == 64:
            return struct.pack(e + "IBBHQQ", name, info, 0, shndx, value, size)
        return struct.pack(e + "IIIBBH", name, value, size, info, 0, shndx)

    syms = sym(0, 0, 0, 0, 0) + sym(1, va, 0, 0x11, 1) + sym(12, va, len(blob), 0x11, 1)
    off_str = off_sym + len(syms)
    off_shstr = off_str + len(strtab)
    off_sh = off_shstr + len(shstr) + pad(off_shstr + len(shstr))
    machine = {(64, False): 62, (64, True): 22, (32, False): 3, (32, True): 20}[(bits, be)]
    ident = b"\x7fELF" + bytes([1 if bits == 32 else 2, 2 if be else 1, 1, 0]) + bytes(8)
    if bits == 64:
        eh = ident + struct.pack(e + "HHIQQQIHHHHHH", 2, machine, 1, va, ehsize, off_sh, 0,
                                 ehsize, phsize, 1, shsize, 5, 4)
        ph = struct.pack(e + "IIQQQQQQ", 1, 5, off_blob, va, va, len(blob), len(blob), 0x1000)
    else:
        eh = ident + struct.pack(e + "HHIIIIIHHHHHH", 2, machine, 1, va, ehsize, off_sh, 0,
                                 ehsize, phsize, 1, shsize, 5, 4)
        ph = struct.pack(e + "IIIIIIII", 1, off_blob, va, va, len(blob), len(blob), 5, 0x1000)

    def sh(name, typ, flags, addr, off, size, link=0, info=0, align=1, entsize=0):
        if bits == 64:
            return struct.pack(e + "IIQQQQIIQQ", name, typ, flags, addr, off, size, link, info,
                               align, entsize)
        return struct.pack(e + "IIIIIIIIII", name, typ, flags, addr, off, size, link, info, align,
                           entsize)

    shdrs = (sh(0, 0, 0, 0, 0, 0) + sh(1, 1, 2, va, off_blob, len(blob), align=8) +
             sh(12, 2, 0, 0, off_sym, len(syms), link=3, info=1, align=8, entsize=symsize) +
             sh(20, 3, 0, 0, off_str, len(strtab)) + sh(28, 3, 0, 0, off_shstr, len(shstr)))
    img = bytearray(eh + ph + blob)
    img += bytes(pad(len(img))) + syms + strtab + shstr
    img += bytes(pad(len(img))) + shdrs
    assert len(img) == off_sh + 5 * shsize
    return bytes(img)


def build_go_synth(out):
    for name in sorted(os.listdir(PCLNTAB)):
        if not name.startswith("synth-") or name.count("-") != 3:
            continue  # the layouts, not their corrupt variants
        _, ver, kind, _ = name[:-4].split("-")
        with open(os.path.join(PCLNTAB, name), "rb") as f:
            blob = f.read()
        with open(os.path.join(out, "go-%s-%s.elf" % (ver, kind)), "wb") as f:
            f.write(elf_image(blob, int(kind[:2]), kind.endswith("be")))
        print("  wrapped %s" % name)


def trim_text(path, out):
    """Copy an ELF64 LE executable without the bytes of .text (made NOBITS)."""
    with open(path, "rb") as f:
        d = bytearray(f.read())
    shoff, = struct.unpack_from("<Q", d, 0x28)
    phoff, = struct.unpack_from("<Q", d, 0x20)
    phnum, shnum, shstrndx = struct.unpack_from("<H", d, 0x38)[0], *struct.unpack_from("<HH", d, 0x3c)
    secs = [list(struct.unpack_from("<IIQQQQIIQQ", d, shoff + 64 * i)) for i in range(shnum)]
    names = secs[shstrndx]
    name = lambda s: d[names[4] + s[0]:d.index(b"\0", names[4] + s[0])].decode()
    text = next(s for s in secs if name(s) == ".text")
    lo, cut = text[4], text[5] - text[5] % 0x1000  # keep file offsets page-congruent
    text[1] = 8  # SHT_NOBITS
    for s in secs:
        if s is not text and s[4] >= lo + cut:
            s[4] -= cut
    for i in range(phnum):
        p = phoff + 56 * i
        typ, flags, off, va, pa, fsz, msz, al = struct.unpack_from("<IIQQQQQQ", d, p)
        if off <= lo < off + fsz:
            fsz = lo - off  # the headers before .text stay
        elif off >= lo + cut:
            off -= cut
        struct.pack_into("<IIQQQQQQ", d, p, typ, flags, off, va, pa, fsz, msz, al)
    new = d[:lo] + d[lo + cut:]
    if shoff >= lo + cut:
        shoff -= cut
    struct.pack_into("<Q", new, 0x28, shoff)
    for i, s in enumerate(secs):
        struct.pack_into("<IIQQQQIIQQ", new, shoff + 64 * i, *s)
    with open(out, "wb") as f:
        f.write(new)


def build_go_real(tmp, out):
    src = os.path.join(tmp, "gohello")
    shutil.copytree(GO_SRC, src)
    env = dict(os.environ, GOCACHE=os.path.join(tmp, "gocache"), GOFLAGS="-mod=mod",
               GOTOOLCHAIN="local", CGO_ENABLED="0")
    cmd = [GO, "build", "-trimpath", "-ldflags=-s -w -buildid=", "-o", "prog", "."]
    print("  (in %s) %s" % (src, " ".join(cmd)))
    subprocess.run(cmd, check=True, cwd=src, env=env)
    trim_text(os.path.join(src, "prog"), os.path.join(out, "go1.22-trimmed"))


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "tests/fuzz/corpus/convert")
    os.makedirs(out, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        build_c(tmp, out)
        build_go_synth(out)
        build_go_real(tmp, out)


if __name__ == "__main__":
    main()
