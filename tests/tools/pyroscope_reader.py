#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Pyroscope's lidia v1 reader, re-stated from the spec: the tests' oracle.

Written for lidiagen from the format specification (doc/lidia-v1.md, sections
1 to 4), not from lidiagen's C reader: it opens a file the way Pyroscope's
symbolizer does (header checks, CRC32C of every table) and looks addresses up
with Pyroscope's walk, which knows no line numbers (every line is 0). It is
trusted as far as tests/t_pyroscope_reader.sh proves it: exactly the answers
Pyroscope's own reader gave on every file of tests/golden/, and a refusal of
every corrupt file tests/unit/test_corrupt.c makes.

    pyroscope_reader.py FILE                  open FILE; print "ok ranges=N lines=N strings=N"
    pyroscope_reader.py FILE ADDR...          open, then one line per address
    pyroscope_reader.py --json FILE ADDR...   the same answers as one JSON array
    pyroscope_reader.py --lines FILE ADDR...  lines as in tests/golden/*.lookups
    pyroscope_reader.py --each FILE...        open each file: "ok FILE ranges=N" or
                                              "refused FILE: WHY"; exit 1 if any refused

A line per address: "0xADDR", then " | FUNCTION @ FILE" for each frame,
innermost first (with --lines: " | FUNCTION @ FILE:0"). JSON: a list of
{"addr": "0xADDR", "frames": [{"function": F, "file": F}, ...]}. ADDR is read
as Python reads an integer literal (0x1139, 4409). Exit 0; 1 when the file is
refused (or a lookup meets a bad string or line reference), the reason on
standard error; 2 on bad usage. Names are bytes in the file: the text output
writes them as they are, JSON as UTF-8 with invalid bytes as U+FFFD.

As a module: LidiaFile(data) raises Refused, or gives .va_count, .line_count,
.str_size and .lookup(addr) -> [(function bytes, file bytes), ...].
"""
import bisect
import json
import sys

HEADER_SIZE = 128
MAGIC = b".dia"
VERSION = 1
U64_MAX = (1 << 64) - 1

# Header fields: (name, offset, size in bytes), spec section 2.
_FIELDS = (
    ("magic", 0x00, 4), ("version", 0x04, 4),
    ("va_width", 0x08, 8), ("va_count", 0x10, 8), ("va_off", 0x18, 8), ("va_crc", 0x20, 4),
    ("field_width", 0x28, 8), ("range_count", 0x30, 8), ("range_off", 0x38, 8),
    ("range_crc", 0x40, 4),
    ("str_size", 0x48, 8), ("str_off", 0x50, 8), ("str_crc", 0x58, 4),
    ("line_width", 0x60, 8), ("line_count", 0x68, 8), ("line_off", 0x70, 8),
    ("line_crc", 0x78, 4),
)
_RANGE_FIELDS = 8  # length, depth, func, file, lineIdx, lineCount, callFile, callLine


class Refused(Exception):
    """The file is not one Pyroscope's reader would open, or a lookup failed."""


# ---- CRC32C ------------------------------------------------------------------
# Reflected Castagnoli polynomial. Four 16-bit tables fold 8 input bytes per
# step (slicing by 8, two bytes per table lookup): a pure-Python CRC that
# checks a 10 MB file in one or two seconds.

_POLY = 0x82F63B78
_crc_tables = None


def _tables():
    """The byte table t[0], and w[k]: two bytes at once, 2k bytes into an 8-byte block."""
    global _crc_tables
    if _crc_tables is None:
        t = [[0] * 256 for _ in range(8)]
        for x in range(256):
            c = x
            for _ in range(8):
                c = (c >> 1) ^ (_POLY if c & 1 else 0)
            t[0][x] = c
        # t[k][x]: byte x followed by k zero bytes.
        for k in range(1, 8):
            for x in range(256):
                c = t[k - 1][x]
                t[k][x] = (c >> 8) ^ t[0][c & 0xFF]
        w = []
        for k in range(4):
            lo, hi = t[7 - 2 * k], t[6 - 2 * k]
            w.append([lo[x & 0xFF] ^ hi[x >> 8] for x in range(65536)])
        _crc_tables = (t[0], w)
    return _crc_tables


def crc32c(data):
    t8, (w0, w1, w2, w3) = _tables()
    c = 0xFFFFFFFF
    n = len(data)
    whole = n - n % 8
    mv = memoryview(data)
    if whole:
        for q in mv[:whole].cast("Q") if sys.byteorder == "little" else \
                (int.from_bytes(mv[i:i + 8], "little") for i in range(0, whole, 8)):
            q ^= c
            c = w0[q & 0xFFFF] ^ w1[(q >> 16) & 0xFFFF] ^ w2[(q >> 32) & 0xFFFF] ^ w3[q >> 48]
    for byte in mv[whole:]:
        c = t8[(c ^ byte) & 0xFF] ^ (c >> 8)
    return c ^ 0xFFFFFFFF


# ---- the file ------------------------------------------------------------------

def _le(data, off, size):
    return int.from_bytes(data[off:off + size], "little")


class LidiaFile:
    """A lidia v1 file opened as Pyroscope opens it: with the CRC check."""

    def __init__(self, data, check_crc=True):
        self.data = data = bytes(data)
        if len(data) < HEADER_SIZE:
            raise Refused("%d bytes: shorter than the %d-byte header" % (len(data), HEADER_SIZE))
        h = {name: _le(data, off, size) for name, off, size in _FIELDS}
        if data[:4] != MAGIC:
            raise Refused("bad magic %s" % data[:4].hex())
        if h["version"] != VERSION:
            raise Refused("version %d (only %d is known)" % (h["version"], VERSION))
        for name, allowed in (("va_width", (4, 8)), ("field_width", (4, 8)),
                              ("line_width", (2, 4))):
            if h[name] not in allowed:
                raise Refused("%s %d (must be %s)" % (name, h[name],
                                                      " or ".join(map(str, allowed))))
        if h["range_count"] != h["va_count"]:
            raise Refused("range count %d differs from VA count %d"
                          % (h["range_count"], h["va_count"]))
        self.va_w, self.field_w, self.line_w = h["va_width"], h["field_width"], h["line_width"]
        self.va_count, self.line_count, self.str_size = h["va_count"], h["line_count"], h["str_size"]
        tables = (
            ("VA", h["va_off"], self.va_count * self.va_w, h["va_crc"]),
            ("range", h["range_off"], self.va_count * _RANGE_FIELDS * self.field_w,
             h["range_crc"]),
            ("strings", h["str_off"], self.str_size, h["str_crc"]),
            ("line", h["line_off"], self.line_count * 2 * self.line_w, h["line_crc"]),
        )
        # Python integers do not wrap: a 64-bit count times a width, plus a
        # 64-bit offset, is compared with the file size as the true number.
        for name, off, size, _ in tables:
            if off + size > len(data):
                raise Refused("%s table [%d, %d) runs past the end of the file (%d bytes)"
                              % (name, off, off + size, len(data)))
        if check_crc:
            for name, off, size, want in tables:
                got = crc32c(data[off:off + size])
                if got != want:
                    raise Refused("%s table CRC32C %08x, header says %08x" % (name, got, want))
        self.va_off, self.range_off = h["va_off"], h["range_off"]
        self.str_off, self.line_off = h["str_off"], h["line_off"]
        self._vas = None

    def va(self, i):
        return _le(self.data, self.va_off + i * self.va_w, self.va_w)

    def field(self, i, k):
        w = self.field_w
        return _le(self.data, self.range_off + (i * _RANGE_FIELDS + k) * w, w)

    def string(self, off):
        """The bytes of the string at off in the strings table."""
        if off == 0:
            return b""
        if off + 4 > self.str_size:
            raise Refused("string offset %d outside the strings table (%d bytes)"
                          % (off, self.str_size))
        n = _le(self.data, self.str_off + off, 4)
        if off + 4 + n > self.str_size:
            raise Refused("string at %d of %d bytes runs past the strings table (%d bytes)"
                          % (off, n, self.str_size))
        start = self.str_off + off + 4
        return self.data[start:start + n]

    def vas(self):
        if self._vas is None:
            self._vas = [self.va(i) for i in range(self.va_count)]
        return self._vas

    def lookup(self, addr):
        """Frames at addr, innermost first: [(function, file)] as bytes.

        The last range starting at or before addr, then backwards: every
        range covering addr is a frame, and the walk ends after the first
        range of depth 0, covering or not (spec section 4)."""
        frames = []
        i = bisect.bisect_right(self.vas(), addr) - 1
        while i >= 0:
            va, length, depth = self._vas[i], self.field(i, 0), self.field(i, 1)
            if va <= addr < va + length:
                frames.append((self.string(self.field(i, 2)), self.string(self.field(i, 3))))
            if depth == 0:
                break
            i -= 1
        return frames


# ---- command line ----------------------------------------------------------------

USAGE = ("usage: pyroscope_reader.py [--json | --lines] FILE [ADDR...]\n"
         "       pyroscope_reader.py --each FILE...\n")


def _text(b):
    return b.decode("utf-8", "replace")


def _each(paths, out):
    refused = 0
    for path in paths:
        try:
            with open(path, "rb") as f:
                t = LidiaFile(f.read())
            out.write(("ok %s ranges=%d\n" % (path, t.va_count)).encode())
        except (Refused, OSError) as e:
            out.write(("refused %s: %s\n" % (path, e)).encode())
            refused += 1
    return 1 if refused else 0


def run(argv, out, err):
    """The command: argv without the program name; out and err take bytes."""
    mode = "text"
    if argv and argv[0] in ("--json", "--lines", "--each"):
        mode, argv = argv[0][2:], argv[1:]
    if not argv or argv[0] in ("-h", "--help") or argv[0].startswith("--"):
        (out if argv and argv[0] in ("-h", "--help") else err).write(USAGE.encode())
        return 0 if argv and argv[0] in ("-h", "--help") else 2
    if mode == "each":
        return _each(argv, out)
    path, args = argv[0], argv[1:]
    try:
        addrs = [int(a, 0) for a in args]
    except ValueError as e:
        err.write(("pyroscope_reader.py: bad address: %s\n" % e).encode())
        return 2
    if any(a < 0 or a > U64_MAX for a in addrs):
        err.write(b"pyroscope_reader.py: an address outside 0..2^64-1\n")
        return 2
    try:
        with open(path, "rb") as f:
            t = LidiaFile(f.read())
        answers = [(a, t.lookup(a)) for a in addrs]
    except OSError as e:
        err.write(("%s: %s\n" % (path, e.strerror or e)).encode())
        return 1
    except Refused as e:
        err.write(("%s: refused: %s\n" % (path, e)).encode())
        return 1
    if not addrs:
        out.write(("ok ranges=%d lines=%d strings=%d\n"
                   % (t.va_count, t.line_count, t.str_size)).encode())
    elif mode == "json":
        doc = [{"addr": "0x%x" % a,
                "frames": [{"function": _text(fn), "file": _text(fl)} for fn, fl in frames]}
               for a, frames in answers]
        out.write(json.dumps(doc).encode() + b"\n")
    else:
        tail = b":0" if mode == "lines" else b""
        for a, frames in answers:
            out.write(b"0x%x" % a + b"".join(b" | " + fn + b" @ " + fl + tail
                                             for fn, fl in frames) + b"\n")
    return 0


def main():
    rc = run(sys.argv[1:], sys.stdout.buffer, sys.stderr.buffer)
    sys.stdout.flush()
    return rc


if __name__ == "__main__":
    sys.exit(main())
