#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Make the seed corpus of the lidia reader fuzz target: tests/fuzz/corpus/reader/.

How the files were made (run from the repository root, Python 3.9+, no other
dependency):

    python3 tests/fuzz/make_reader_corpus.py [GOLDEN_DIR [OUT_DIR]]

GOLDEN_DIR defaults to tests/golden (Pyroscope-written files; see its
README.md), OUT_DIR to tests/fuzz/corpus/reader. The script:
  1. copies every GOLDEN_DIR/*.lidia as golden-NAME;
  2. writes gen-*.lidia: valid files from a small Lidia v1 writer below (lines,
     inline ranges, wide fields, reordered and overlapping tables, no depth-0
     range, deep inline chains), and hostile variants of them: truncations, bad
     magic/version/widths/counts, offsets and counts that overflow 64 bits, a
     bad CRC, and range entries that point outside their tables with the CRCs
     recomputed (so the reader meets them with its CRC check on too).
The crash-* files are not made here: they are inputs libFuzzer found
(build/fuzz/fuzz_reader, see `make fuzz`), copied in as regression inputs; a
re-run of this script leaves them alone.
Everything is deterministic (no randomness but a fixed-seed generator), so a
re-run reproduces the committed files byte for byte.
"""
import os
import random
import shutil
import struct
import sys

HEADER = 128
MAGIC = b".dia"

# Header field offsets, spec section 2.
VA_SIZE, VA_COUNT, VA_OFF, VA_CRC = 0x08, 0x10, 0x18, 0x20
FIELD_SIZE, RANGE_COUNT, RANGE_OFF, RANGE_CRC = 0x28, 0x30, 0x38, 0x40
STR_SIZE, STR_OFF, STR_CRC = 0x48, 0x50, 0x58
LINE_SIZE, LINE_COUNT, LINE_OFF, LINE_CRC = 0x60, 0x68, 0x70, 0x78
# Range fields, spec section 3.
F_LENGTH, F_DEPTH, F_FUNC, F_FILE, F_LINE_IDX, F_LINE_COUNT, F_CALL_FILE, F_CALL_LINE = range(8)


def _crc_table():
    t = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
        t.append(c)
    return t


_T = _crc_table()


def crc32c(data):
    c = 0xFFFFFFFF
    for b in data:
        c = _T[(c ^ b) & 0xFF] ^ (c >> 8)
    return c ^ 0xFFFFFFFF


assert crc32c(b"123456789") == 0xE3069283


def rng(func, file="", call_file="", depth=0, call_line=0, lines=()):
    return dict(func=func, file=file, call_file=call_file, depth=depth,
                call_line=call_line, lines=list(lines))


def write(ranges, va_w=None, field_w=None, line_w=None, order=(0, 1, 2, 3)):
    """A Lidia v1 file of ranges [(va, length, rng(...))], as lidiagen writes it.

    Widths default to the narrowest; order is the order the four tables are
    laid out in after the header (the header records each one's offset)."""
    strs, pool = {}, bytearray()

    def intern(s):
        s = s.encode()
        if s not in strs:
            strs[s] = len(pool)
            pool.extend(struct.pack("<I", len(s)) + s)
        return strs[s]

    # As lidiagen's builder does: strings and line rows in insertion order,
    # then the ranges sorted stably by (va, depth).
    intern("")
    intern("[overflow]")
    rows, lines = [], []
    for seq, (va, length, r) in enumerate(ranges):
        f = [length, r["depth"], intern(r["func"]), intern(r["file"]),
             len(lines) if r["lines"] else 0, len(r["lines"]),
             intern(r["call_file"]), r["call_line"]]
        lines.extend(r["lines"])
        rows.append((va, f, seq))
    rows = [(va, f) for va, f, _ in sorted(rows, key=lambda e: (e[0], e[1][F_DEPTH], e[2]))]
    va_w = va_w or (8 if any(va > 0xFFFFFFFF for va, _ in rows) else 4)
    field_w = field_w or (8 if any(v > 0xFFFFFFFF for _, f in rows for v in f) else 4)
    line_w = line_w or (4 if any(v > 0xFFFF for row in lines for v in row) else 2)
    vfmt = {4: "<I", 8: "<Q"}
    lfmt = {2: "<H", 4: "<I"}
    tables = [
        b"".join(struct.pack(vfmt[va_w], va) for va, _ in rows),
        b"".join(struct.pack(vfmt[field_w], v) for _, f in rows for v in f),
        bytes(pool),
        b"".join(struct.pack(lfmt[line_w], v) for row in lines for v in row),
    ]
    off, pos = [0] * 4, HEADER
    for t in order:
        off[t] = pos
        pos += len(tables[t])
    h = bytearray(HEADER)
    h[0:4] = MAGIC
    struct.pack_into("<I", h, 4, 1)
    struct.pack_into("<QQQI", h, VA_SIZE, va_w, len(rows), off[0], crc32c(tables[0]))
    struct.pack_into("<QQQI", h, FIELD_SIZE, field_w, len(rows), off[1], crc32c(tables[1]))
    struct.pack_into("<QQI", h, STR_SIZE, len(pool), off[2], crc32c(tables[2]))
    struct.pack_into("<QQQI", h, LINE_SIZE, line_w, len(lines), off[3], crc32c(tables[3]))
    out = bytearray(h)
    for t in order:
        out += tables[t]
    return out


# ---- editing a written file ----

def hdr(buf, off, size=8):
    return int.from_bytes(buf[off:off + size], "little")


def set_hdr(buf, off, value, size=8):
    buf[off:off + size] = (value % (1 << (8 * size))).to_bytes(size, "little")


def layout(buf):
    va_w, n = hdr(buf, VA_SIZE), hdr(buf, VA_COUNT)
    field_w, line_w = hdr(buf, FIELD_SIZE), hdr(buf, LINE_SIZE)
    return dict(va_w=va_w, n=n, field_w=field_w, line_w=line_w,
                va=(hdr(buf, VA_OFF), n * va_w),
                ranges=(hdr(buf, RANGE_OFF), n * 8 * field_w),
                strings=(hdr(buf, STR_OFF), hdr(buf, STR_SIZE)),
                lines=(hdr(buf, LINE_OFF), hdr(buf, LINE_COUNT) * 2 * line_w))


def fix_crcs(buf):
    """Recompute every table's CRC, so a hostile entry passes the CRC check."""
    lay = layout(buf)
    for name, at in (("va", VA_CRC), ("ranges", RANGE_CRC), ("strings", STR_CRC),
                     ("lines", LINE_CRC)):
        off, size = lay[name]
        set_hdr(buf, at, crc32c(buf[off:off + size]), 4)
    return buf


def set_field(buf, i, k, value):
    lay = layout(buf)
    w = lay["field_w"]
    set_hdr(buf, lay["ranges"][0] + (i * 8 + k) * w, value, w)
    return fix_crcs(buf)


def get_field(buf, i, k):
    lay = layout(buf)
    w = lay["field_w"]
    return hdr(buf, lay["ranges"][0] + (i * 8 + k) * w, w)


# ---- the sets ----

def nested(base=0, wide_len=False, big_line=False):
    """alpha with beta inlined, gamma inlined in beta; delta; eps."""
    return [
        (base + 0x1024, 8, rng("gamma", "g.h", "b.h", 2, 21, [(0, 30)])),
        (base + 0x1000, 0x100, rng("alpha", "a.c", lines=[(0, 10), (0x10, 11), (0x80, 12)])),
        (base + 0x1020, 0x20, rng("beta", "b.h", "a.c", 1, 11, [(0, 20), (4, 21)])),
        (base + 0x1100, 0x40, rng("delta", "a.c", lines=[(0, 40), (8, 70000 if big_line else 41)])),
        (base + 0x1200, (1 << 32) if wide_len else 0x10, rng("eps")),
    ]


def variants():
    small = write(nested())
    wide = write(nested(0x500000000, True, True))
    lay = layout(small)
    out = {}

    out["valid-small"] = small
    out["valid-wide"] = wide
    out["valid-empty"] = write([])
    out["valid-widest-fields"] = write(nested(), va_w=8, field_w=8, line_w=4)
    out["valid-tables-reversed"] = write(nested(), order=(3, 2, 1, 0))
    # Every table at one offset (the strings table's): legal bounds, nonsense content.
    b = bytearray(small)
    for at in (VA_OFF, RANGE_OFF, LINE_OFF):
        set_hdr(b, at, lay["strings"][0])
    out["overlapping-tables"] = fix_crcs(b)
    # No depth-0 range at all: the lookup walk runs to index 0.
    out["no-function"] = write([(0x1000 + 4 * i, 64, rng("inl%d" % i, depth=1 + i % 3,
                                                         call_line=i, lines=[(0, i)]))
                                for i in range(12)])
    # 40 frames at one address: more than a small frame buffer holds.
    out["deep-inline-chain"] = write([(0x2000, 0x100, rng("f"))] +
                                     [(0x2000 + i, 0x100 - 2 * i, rng("i%d" % i, "x.h", "x.h", i, i))
                                      for i in range(1, 41)])
    # A corrupt name in an outer frame beyond a 16-frame buffer (CRCs fixed):
    # a lookup with less room than frames must not report a count that a
    # retry with more room turns into an error (found by the fuzzer).
    b = write([(0x2000, 0x100, rng("f"))] +
              [(0x2000 + i, 0x100 - 2 * i, rng("i%d" % i, "x.h", "x.h", i, i))
               for i in range(1, 20)])
    out["corrupt-frame-beyond-cap"] = set_field(b, 1, F_FUNC, layout(b)["strings"][1] + 7)
    out["same-va-functions"] = write([(0x3000, 0x10, rng("a")), (0x3000, 0x10, rng("b")),
                                      (0x3000, 0, rng("zero")), (0x3008, 0, rng("label"))])

    out["trunc-empty"] = b""
    out["trunc-magic"] = small[:4]
    out["trunc-header-64"] = small[:64]
    out["trunc-in-va"] = small[:lay["va"][0] + 3]
    out["trunc-in-strings"] = small[:lay["strings"][0] + lay["strings"][1] // 2]
    out["trunc-last-byte"] = small[:-1]

    def edited(src, *edits):
        b = bytearray(src)
        for off, value, size in edits:
            set_hdr(b, off, value, size)
        return b

    out["bad-magic"] = edited(small, (0, 0x61696465, 4))
    out["bad-version"] = edited(small, (4, 2, 4))
    out["bad-width-va3"] = edited(small, (VA_SIZE, 3, 8))
    out["bad-width-line8"] = edited(small, (LINE_SIZE, 8, 8))
    out["count-mismatch"] = edited(small, (RANGE_COUNT, lay["n"] + 1, 8))
    out["count-2p62-wraps"] = edited(small, (VA_COUNT, 1 << 62, 8), (RANGE_COUNT, 1 << 62, 8))
    out["line-count-2p62-wraps"] = edited(small, (LINE_COUNT, 1 << 62, 8))
    out["offset-max-minus-10"] = edited(small, (STR_OFF, (1 << 64) - 11, 8))
    out["strings-size-wraps"] = edited(small, (STR_SIZE, (1 << 64) - lay["strings"][0], 8))

    b = bytearray(small)
    b[lay["strings"][0] + 12] ^= 0x04
    out["crc-mismatch-strings"] = b

    # Hostile entries with the CRCs recomputed. Range 0 is alpha.
    ssize = lay["strings"][1]
    out["func-past-strings"] = set_field(bytearray(small), 0, F_FUNC, ssize + 100)
    out["func-near-end"] = set_field(bytearray(small), 0, F_FUNC, ssize - 2)
    out["call-file-past-strings"] = set_field(bytearray(small), 1, F_CALL_FILE, ssize + 1)
    b = bytearray(small)
    s_off = get_field(b, 0, F_FUNC)
    set_hdr(b, lay["strings"][0] + s_off, ssize - s_off - 3, 4)
    out["string-length-past-end"] = fix_crcs(b)
    out["line-idx-past-end"] = set_field(bytearray(small), 0, F_LINE_IDX, 1000)
    out["line-count-past-end"] = set_field(bytearray(small), 0, F_LINE_COUNT, 0xFFFFFFFF)
    out["wide-line-idx-wraps"] = set_field(bytearray(wide), 0, F_LINE_IDX, (1 << 64) - 1)
    out["wide-func-wraps"] = set_field(bytearray(wide), 0, F_FUNC, (1 << 64) - 4)
    b = bytearray(wide)
    for i in range(5):
        set_field(b, i, F_LENGTH, (1 << 64) - 1)
        set_field(b, i, F_DEPTH, (1 << 64) - 1 if i != 2 else 0)
    out["wide-huge-length-depth"] = b
    b = bytearray(small)
    va = lay["va"][0]
    b[va + 4:va + 8], b[va + 8:va + 12] = small[va + 8:va + 12], small[va + 4:va + 8]
    out["unsorted-va"] = fix_crcs(b)
    b = bytearray(small)
    idx = get_field(b, 0, F_LINE_IDX)
    set_hdr(b, lay["lines"][0] + (idx + 1) * 2 * lay["line_w"], 0xFFFF, lay["line_w"])
    out["unsorted-lines"] = fix_crcs(b)

    # A few random byte flips of a small golden-like file (fixed seed).
    r = random.Random(0x11D1A)
    for k in range(3):
        b = bytearray(small)
        for _ in range(4):
            b[r.randrange(len(b))] ^= 1 << r.randrange(8)
        out["flips-%d" % k] = b
    return out


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    golden = sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "..", "golden")
    outdir = sys.argv[2] if len(sys.argv) > 2 else os.path.join(here, "corpus", "reader")
    os.makedirs(outdir, exist_ok=True)
    for name in sorted(os.listdir(golden)):
        if not name.endswith(".lidia"):
            continue
        shutil.copyfile(os.path.join(golden, name), os.path.join(outdir, "golden-" + name))
    for name, data in sorted(variants().items()):
        with open(os.path.join(outdir, "gen-%s.lidia" % name), "wb") as f:
            f.write(bytes(data))


if __name__ == "__main__":
    main()
