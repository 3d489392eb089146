#!/usr/bin/env python3
"""Copies of an ELF file that differ only in their GNU build ID.

usage: clone_build_ids.py ELF OUTDIR N [SUBDIRS]

Writes OUTDIR/dNN/cloneNNNN (N files spread over SUBDIRS directories), each
the input with its 20-byte build ID replaced by the SHA-1 of its own name:
as many distinct keys as files, for tests that need a large tree quickly.
"""
import hashlib
import os
import sys

NOTE = b"\x04\x00\x00\x00\x14\x00\x00\x00\x03\x00\x00\x00GNU\x00"


def main():
    src, out, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
    dirs = int(sys.argv[4]) if len(sys.argv) > 4 else 10
    data = open(src, "rb").read()
    at = data.find(NOTE)
    if at < 0 or data.find(NOTE, at + 1) >= 0:
        sys.exit(f"{src}: not exactly one 20-byte GNU build ID note")
    desc = at + len(NOTE)
    for i in range(n):
        name = f"clone{i:04d}"
        d = os.path.join(out, f"d{i % dirs:02d}")
        os.makedirs(d, exist_ok=True)
        new_id = hashlib.sha1(name.encode()).digest()
        path = os.path.join(d, name)
        with open(path, "wb") as f:
            f.write(data[:desc] + new_id + data[desc + 20:])
        os.chmod(path, 0o755)


if __name__ == "__main__":
    main()
