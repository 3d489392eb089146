#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Sizes of an ELF file's DWARF: lib_dwarf_sizes.py FILE

Prints one line per .debug_*/.zdebug_* section and a total:
    NAME STORED UNCOMPRESSED COMPRESSION
STORED is the section's size in the file; UNCOMPRESSED comes from the
SHF_COMPRESSED header (Elf64_Chdr/Elf32_Chdr ch_size; ch_type 1 zlib, 2 zstd)
or, for the old .zdebug_ form, from its "ZLIB" + 8-byte big-endian size prefix.
Used by bench/dwarf_bench.sh.
"""
import struct
import sys

SHF_COMPRESSED = 0x800
SHT_NOBITS = 8


def sizes(path):
    with open(path, "rb") as f:
        data = f.read()
    if data[:4] != b"\x7fELF":
        raise SystemExit("%s: not an ELF file" % path)
    cls, enc = data[4], data[5]
    e = "<" if enc == 1 else ">"
    if cls == 2:
        shoff, = struct.unpack_from(e + "Q", data, 0x28)
        shentsize, shnum, shstrndx = struct.unpack_from(e + "HHH", data, 0x3A)
        fmt = e + "IIQQQQIIQQ"
    else:
        shoff, = struct.unpack_from(e + "I", data, 0x20)
        shentsize, shnum, shstrndx = struct.unpack_from(e + "HHH", data, 0x2E)
        fmt = e + "IIIIIIIIII"
    sh = [struct.unpack_from(fmt, data, shoff + i * shentsize) for i in range(shnum)]
    stroff = sh[shstrndx][4]
    out = []
    for name, typ, flags, addr, off, size, *_ in sh:
        n = data[stroff + name:data.index(b"\0", stroff + name)].decode()
        if not (n.startswith(".debug_") or n.startswith(".zdebug_")) or typ == SHT_NOBITS:
            continue
        if flags & SHF_COMPRESSED:
            if cls == 2:
                ch_type, _, ch_size = struct.unpack_from(e + "IIQ", data, off)
            else:
                ch_type, ch_size = struct.unpack_from(e + "II", data, off)
            kind = {1: "zlib", 2: "zstd"}.get(ch_type, "type%d" % ch_type)
            out.append((n, size, ch_size, kind))
        elif n.startswith(".zdebug_") and data[off:off + 4] == b"ZLIB":
            out.append((n, size, struct.unpack_from(">Q", data, off + 4)[0], "zdebug"))
        else:
            out.append((n, size, size, "none"))
    return out


def main():
    rows = sizes(sys.argv[1])
    for n, s, u, k in rows:
        print("%s %d %d %s" % (n, s, u, k))
    print("total %d %d -" % (sum(r[1] for r in rows), sum(r[2] for r in rows)))


if __name__ == "__main__":
    main()
