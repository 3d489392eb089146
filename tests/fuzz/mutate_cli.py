#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""A mutation campaign through the real command: byte flips, overwritten runs,
inserted and erased bytes, truncations and field-sized integer changes of ELF
seeds, aimed at their sections (DWARF, line programs, pclntab, symbols, notes,
.gnu_debugdata) as often as anywhere, each converted by `lidiagen` (build it
with SANITIZE=address,undefined) under a timeout:

    python3 tests/fuzz/mutate_cli.py LIDIAGEN COUNT OUT_DIR SEED...

Mutants go to the command BATCH at a time (one `lidiagen M1 M2 ... -o DIR -j 1
--no-debug-search` run; each mutant's GNU build ID is made unique, so that no
two are paired as one build); a batch that does not end with exit 0 or 1, or
whose stderr holds a sanitizer report, is run again one mutant at a time to
find the culprit, which is kept as OUT_DIR/finding-KIND-N (KIND: crash, hang,
sanitizer) with its output. The random generator is seeded (--seed, default
1), so a campaign can be re-run. Prints the counts at the end; exit 1 when
anything was found.
"""
import argparse
import os
import random
import shutil
import struct
import subprocess
import sys
import tempfile
import time

ENV = dict(os.environ, ASAN_OPTIONS="detect_leaks=1:exitcode=86:abort_on_error=0",
           UBSAN_OPTIONS="halt_on_error=1:exitcode=87:print_stacktrace=1")
INTERESTING = (".debug_", ".zdebug_", ".gopclntab", ".symtab", ".dynsym", ".strtab", ".dynstr",
               ".note", ".gnu_debugdata", ".rodata", ".data", ".shstrtab")


def sections(data):
    """(name, offset, size) of an ELF64/32 file's sections; [] when unreadable."""
    try:
        if data[:4] != b"\x7fELF":
            return []
        is64, e = data[4] == 2, "<" if data[5] == 1 else ">"
        if is64:
            shoff, = struct.unpack_from(e + "Q", data, 0x28)
            shentsize, shnum, shstrndx = struct.unpack_from(e + "HHH", data, 0x3A)
        else:
            shoff, = struct.unpack_from(e + "I", data, 0x20)
            shentsize, shnum, shstrndx = struct.unpack_from(e + "HHH", data, 0x2E)
        out = []
        for i in range(shnum):
            o = shoff + i * shentsize
            if is64:
                name, typ, _, _, off, size = struct.unpack_from(e + "IIQQQQ", data, o)
            else:
                name, typ, _, _, off, size = struct.unpack_from(e + "IIIIII", data, o)
            out.append([name, typ, off, size])
        stro = out[shstrndx][2]
        res = []
        for name, typ, off, size in out:
            n = data[stro + name:data.index(b"\0", stro + name)].decode("latin1")
            if typ != 8 and size and off + size <= len(data):
                res.append((n, off, size))
        return res
    except (struct.error, ValueError, IndexError):
        return []


def unique_build_id(buf, rng):
    i = buf.find(b"\x04\x00\x00\x00\x14\x00\x00\x00\x03\x00\x00\x00GNU\x00")
    if i >= 0:
        buf[i + 16:i + 36] = bytes(rng.randrange(256) for _ in range(20))


def mutate(seed, secs, rng):
    buf = bytearray(seed)
    lo, hi = 0, len(buf)
    targets = [s for s in secs if s[0].startswith(INTERESTING)]
    if targets and rng.random() < 0.75:
        _, lo, size = rng.choice(targets)
        hi = lo + size
    for _ in range(rng.choice((1, 1, 2, 3, 4, 8))):
        # Inserting and erasing shift what follows: mostly an ELF cut short, rarely tried.
        kind = rng.choices(range(7), weights=(6, 6, 6, 4, 1, 1, 4))[0]
        hi = min(hi, len(buf))  # erasures shorten the file
        p = rng.randrange(lo, hi) if hi > lo else 0
        if kind < 2 and p >= len(buf):
            continue
        if kind == 0:  # flip bits
            buf[p] ^= 1 << rng.randrange(8)
        elif kind == 1:  # a random byte
            buf[p] = rng.randrange(256)
        elif kind == 2:  # an interesting integer, field-sized
            w = rng.choice((1, 2, 4, 8))
            v = rng.choice((0, 1, 0x7F, 0x80, 0xFF, 0xFFFF, 0x7FFFFFFF, 0xFFFFFFFF,
                            (1 << 64) - 1, rng.randrange(1 << 32)))
            buf[p:p + w] = (v & ((1 << (8 * w)) - 1)).to_bytes(w, "little")
        elif kind == 3:  # overwrite a run with a copy of other bytes
            n = rng.randrange(1, 64)
            q = rng.randrange(len(buf))
            buf[p:p + n] = seed[q:q + n]
        elif kind == 4:  # insert bytes (shifts what follows)
            buf[p:p] = bytes(rng.randrange(256) for _ in range(rng.randrange(1, 16)))
        elif kind == 5:  # erase bytes
            del buf[p:p + rng.randrange(1, 16)]
        else:  # a run of one byte (ULEB128 without end, counts)
            buf[p:p + rng.randrange(1, 32)] = bytes([rng.choice((0, 0x80, 0xFF))]) * rng.randrange(1, 32)
    if rng.random() < 0.03:  # truncated
        del buf[rng.randrange(16, max(17, len(buf))):]
    unique_build_id(buf, rng)
    return bytes(buf)


def run(lidiagen, files, out, timeout):
    shutil.rmtree(out, ignore_errors=True)
    cmd = [lidiagen, *files, "-o", out, "-j", "1", "--no-debug-search", "-q", "--fallback-key", "sha256"]
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=ENV,
                           timeout=timeout)
        rc, err = p.returncode, p.stderr.decode("utf-8", "replace")
    except subprocess.TimeoutExpired as e:
        rc, err = "hang", (e.stderr or b"").decode("utf-8", "replace")
    if rc == "hang":
        return "hang", err
    if "Sanitizer" in err or "runtime error:" in err or "LeakSanitizer" in err:
        return "sanitizer", err
    if rc not in (0, 1):
        return "crash", err
    return None, err


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("lidiagen")
    ap.add_argument("count", type=int)
    ap.add_argument("out")
    ap.add_argument("seeds", nargs="+")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--timeout", type=float, default=30)
    a = ap.parse_args()
    rng = random.Random(a.seed)
    seeds = []
    for s in a.seeds:
        with open(s, "rb") as f:
            d = f.read()
        seeds.append((os.path.basename(s), d, sections(d)))
    os.makedirs(a.out, exist_ok=True)
    tmp = tempfile.mkdtemp(prefix="mutate-cli.")
    found, done, start = {}, 0, time.time()
    while done < a.count:
        files = []
        for k in range(min(a.batch, a.count - done)):
            name, data, secs = rng.choice(seeds)
            path = os.path.join(tmp, "m%02d-%s" % (k, name))
            with open(path, "wb") as f:
                f.write(mutate(data, secs, rng))
            files.append(path)
        done += len(files)
        kind, _ = run(a.lidiagen, files, os.path.join(tmp, "out"), a.timeout * len(files))
        if kind:
            for f in files:
                k, err = run(a.lidiagen, [f], os.path.join(tmp, "out1"), a.timeout)
                if not k:
                    continue
                n = sum(found.values())
                dst = os.path.join(a.out, "finding-%s-%d-%s" % (k, n, os.path.basename(f)[4:]))
                shutil.copy(f, dst)
                with open(dst + ".txt", "w") as o:
                    o.write(err)
                found[k] = found.get(k, 0) + 1
                print("%s: %s" % (k, dst), flush=True)
        if done % 1000 < a.batch:
            print("%d inputs, %.0f s, found %s" % (done, time.time() - start, found or "nothing"),
                  flush=True)
    shutil.rmtree(tmp, ignore_errors=True)
    print("total: %d inputs in %.0f s; found %s" % (done, time.time() - start, found or "nothing"))
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
