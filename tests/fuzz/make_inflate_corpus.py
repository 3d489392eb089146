#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Seeds of tests/fuzz/corpus/inflate_split: zlib streams made by zlib itself
(Python's module), each after one byte that picks where the split looks.

  tests/fuzz/make_inflate_corpus.py tests/fuzz/corpus/inflate_split
"""
import os
import random
import sys
import zlib

WORDS = [b"DW_TAG_subprogram ", b"std::vector<int> ", b"operator== ", b"_ZN4llvm5Value",
         b"/usr/include/c++/12/", b"basic_string ", b"\x01\x13\x00", b"\x2e\x3a\x0b"]


def text(rng, n):
    out = bytearray()
    while len(out) < n:
        if rng.randrange(5) == 0:
            out.append(rng.randrange(256))
        else:
            out += rng.choice(WORDS)
    return bytes(out[:n])


def mixed(rng, n):
    out = bytearray(text(rng, n))
    for at in range(60000, n - 20000, 90000):
        out[at:at + 20000] = bytes(rng.randrange(256) for _ in range(20000))
    return bytes(out)


def echo(rng, n):
    unit = bytes(rng.randrange(256) for _ in range(20480))
    return (unit * (n // len(unit) + 1))[:n]


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    rng = random.Random(26)
    # memLevel 1 and 2: blocks of 128 and 256 symbols, so that a small
    # seed has many boundaries; memLevel 8 (zlib's default) as binutils has it.
    seeds = [("text-l1", text, 1, 1, 4), ("text-l6", text, 6, 2, 4), ("text-l9", text, 9, 1, 2),
             ("text-l6-m8", text, 6, 8, 6), ("mixed-l6", mixed, 6, 2, 4),
             ("echo-l6", echo, 6, 1, 8)]
    for name, make, level, mem, pick in seeds:
        data = make(rng, 300000 if make is echo else 220000)
        z = zlib.compressobj(level, zlib.DEFLATED, 15, mem)
        with open(os.path.join(out, name), "wb") as f:
            f.write(bytes([pick]) + z.compress(data) + z.flush())


if __name__ == "__main__":
    main()
