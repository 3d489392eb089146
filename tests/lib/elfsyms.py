#!/usr/bin/env python3
"""Read what the tests need from an ELF file, independently of lidiagen.

A small stdlib-only ELF reader (ELF32/ELF64, either byte order): section
headers, the symbols of .symtab and .dynsym, and the GNU build ID. The tests
derive the addresses they look up from here, never from lidiagen's output.

    elfsyms.py build-id FILE     print the GNU build ID (lowercase hex); exit 1 if none
    elfsyms.py funcs FILE        print "VALUE SIZE TYPE BIND TABLE NAME" per symbol
"""
import struct
import sys

SHT_SYMTAB = 2
SHT_NOTE = 7
SHT_NOBITS = 8
SHT_DYNSYM = 11
SHF_EXECINSTR = 0x4

STT_NOTYPE, STT_OBJECT, STT_FUNC, STT_SECTION, STT_FILE = 0, 1, 2, 3, 4
STT_GNU_IFUNC = 10
STB_LOCAL, STB_GLOBAL, STB_WEAK = 0, 1, 2
SHN_UNDEF = 0
SHN_LORESERVE = 0xFF00
SHN_ABS = 0xFFF1
SHN_COMMON = 0xFFF2
SHN_XINDEX = 0xFFFF

TYPE_NAMES = {0: "NOTYPE", 1: "OBJECT", 2: "FUNC", 3: "SECTION", 4: "FILE", 10: "IFUNC"}


class NotElf(Exception):
    pass


class Section:
    __slots__ = ("index", "name", "type", "flags", "addr", "offset", "size", "link", "entsize")


class Symbol:
    __slots__ = ("index", "name", "value", "size", "type", "bind", "shndx", "table")

    def __repr__(self):
        return "%s@0x%x+%d(%s,%s)" % (self.name, self.value, self.size,
                                      TYPE_NAMES.get(self.type, self.type), self.table)


class Elf:
    def __init__(self, path):
        with open(path, "rb") as f:
            self.data = data = f.read()
        if data[:4] != b"\x7fELF":
            raise NotElf("%s: not an ELF file" % path)
        self.is64 = data[4] == 2
        self.end = "<" if data[5] == 1 else ">"
        e = self.end
        if self.is64:
            (self.type, self.machine, _v, self.entry, _phoff, shoff, _flags, _ehsize, _phentsize,
             _phnum, shentsize, shnum, shstrndx) = struct.unpack_from(e + "HHIQQQIHHHHHH", data, 16)
        else:
            (self.type, self.machine, _v, self.entry, _phoff, shoff, _flags, _ehsize, _phentsize,
             _phnum, shentsize, shnum, shstrndx) = struct.unpack_from(e + "HHIIIIIHHHHHH", data, 16)
        self.sections = []
        if shoff and shnum == 0 and shoff + shentsize <= len(data):
            shnum = self._shdr(shoff, 0).size  # extended section numbering
        for i in range(shnum):
            off = shoff + i * shentsize
            if off + shentsize > len(data):
                break
            self.sections.append(self._shdr(off, i))
        if shstrndx == SHN_XINDEX and self.sections:
            shstrndx = self.sections[0].link
        if shstrndx < len(self.sections):
            strs = self.sections[shstrndx]
            for s in self.sections:
                s.name = self._cstr(strs.offset + s.name) if strs.type != SHT_NOBITS else ""

    def _shdr(self, off, index):
        s = Section()
        s.index = index
        if self.is64:
            (s.name, s.type, s.flags, s.addr, s.offset, s.size, s.link, _info, _align,
             s.entsize) = struct.unpack_from(self.end + "IIQQQQIIQQ", self.data, off)
        else:
            (s.name, s.type, s.flags, s.addr, s.offset, s.size, s.link, _info, _align,
             s.entsize) = struct.unpack_from(self.end + "IIIIIIIIII", self.data, off)
        return s

    def _cstr(self, off):
        if off < 0 or off >= len(self.data):
            return ""
        end = self.data.find(b"\0", off)
        if end < 0:
            end = len(self.data)
        return self.data[off:end].decode("utf-8", errors="surrogateescape")

    def section(self, name):
        for s in self.sections:
            if s.name == name:
                return s
        return None

    def has_table(self, table):
        t = SHT_SYMTAB if table == "symtab" else SHT_DYNSYM
        return any(s.type == t for s in self.sections)

    def symbols(self, table):
        """Every symbol (entry 0 left out) of the .symtab or .dynsym table."""
        t = SHT_SYMTAB if table == "symtab" else SHT_DYNSYM
        out = []
        for sec in self.sections:
            if sec.type != t or not sec.entsize:
                continue
            strtab = self.sections[sec.link] if sec.link < len(self.sections) else None
            n = sec.size // sec.entsize
            for i in range(1, n):
                off = sec.offset + i * sec.entsize
                if off + sec.entsize > len(self.data):
                    break
                sym = Symbol()
                sym.index = i
                sym.table = table
                if self.is64:
                    (name, info, _other, sym.shndx, sym.value,
                     sym.size) = struct.unpack_from(self.end + "IBBHQQ", self.data, off)
                else:
                    (name, sym.value, sym.size, info, _other,
                     sym.shndx) = struct.unpack_from(self.end + "IIIBBH", self.data, off)
                sym.type = info & 0xF
                sym.bind = info >> 4
                sym.name = self._cstr(strtab.offset + name) if strtab and name else ""
                out.append(sym)
        return out

    def build_id(self):
        """The NT_GNU_BUILD_ID note as lowercase hex, or None."""
        for sec in self.sections:
            if sec.type != SHT_NOTE:
                continue
            off, end = sec.offset, sec.offset + sec.size
            while off + 12 <= end:
                namesz, descsz, ntype = struct.unpack_from(self.end + "III", self.data, off)
                name_off = off + 12
                desc_off = name_off + ((namesz + 3) & ~3)
                nxt = desc_off + ((descsz + 3) & ~3)
                if nxt > end:
                    break
                name = self.data[name_off:name_off + namesz].rstrip(b"\0")
                if ntype == 3 and name == b"GNU" and descsz:
                    return self.data[desc_off:desc_off + descsz].hex()
                off = nxt
        return None

    def exec_sections(self):
        return [s for s in self.sections if s.flags & SHF_EXECINSTR and s.size]


def defined(sym):
    return sym.shndx != SHN_UNDEF and not (SHN_LORESERVE <= sym.shndx and sym.shndx != SHN_XINDEX)


def function_symbols(elf):
    """(table, [sized, defined STT_FUNC symbols]): from .symtab, or .dynsym when
    there is no .symtab (what a symbolizer without debug info sees)."""
    table = "symtab" if elf.has_table("symtab") else "dynsym"
    syms = [s for s in elf.symbols(table)
            if s.type == STT_FUNC and s.size > 0 and s.name and defined(s)]
    return table, syms


def main(argv):
    if len(argv) != 2 or argv[0] not in ("build-id", "funcs"):
        sys.stderr.write(__doc__)
        return 2
    try:
        elf = Elf(argv[1])
    except (OSError, NotElf, struct.error) as e:
        sys.stderr.write("elfsyms: %s\n" % e)
        return 1
    if argv[0] == "build-id":
        bid = elf.build_id()
        if not bid:
            return 1
        print(bid)
        return 0
    for table in ("symtab", "dynsym"):
        for s in elf.symbols(table):
            print("0x%x %d %s %d %s %s" % (s.value, s.size, TYPE_NAMES.get(s.type, s.type),
                                           s.bind, table, s.name))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
