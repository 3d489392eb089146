#!/usr/bin/env python3
"""Compare lidiagen's inline frames, files and lines with an oracle symbolizer.

Used by tests/t_dwarf_oracle.sh; prints the lines tests/run.sh counts ("ok - ",
"not ok - ", "# ").

    dwarf_oracle.py compare [OPTIONS]
        --label L            name of the variant in the output
        --lidiagen PATH      the binary under test (its `lookup --json`)
        --lidia FILE         the .lidia file lidiagen wrote
        --code ELF           the ELF whose .text is sampled (objdump -d)
        --oracle llvm|eu     the oracle (llvm)
        --llvm PATH          llvm-symbolizer
        --llvm-obj ELF       llvm-symbolizer --obj=ELF: the oracle, or with
                             --oracle eu the second opinion
        --eu-obj ELF         eu-addr2line -a -i -f -C -e ELF: the oracle, or
                             with --oracle llvm the second opinion
        --eu-debuginfo-path DIR  eu-addr2line --debuginfo-path=DIR (its debug file by
                             build ID under DIR/.build-id)
        --consensus 1        with --oracle eu: count an address for a rate only
                             where llvm-symbolizer on --llvm-obj gives the same
                             names (file/lines) as eu-addr2line; the others are
                             counted apart and shown
        --min-names PCT      name chains must agree on at least PCT% (99.5)
        --min-lines PCT      file and line of every frame: at least PCT% (99)
        --every N            sample every Nth instruction (1)
        --objdump PROG       the objdump that reads --code (objdump; a cross one)
        --sections A,B       the sections sampled (.text)
        --pyroscope PATH     also check the file with Pyroscope's reader
        --python PATH        the interpreter for --pyroscope (python3)
        --want-inlines 1     fail when the oracle shows no inline frame at all
        --rates-file FILE    append "LABEL ORACLE NAMES% LINES% N_NAMES N_LINES IGNORED
                             SPLIT INLINED" (tab-separated)
    dwarf_oracle.py corrupt IN OUT MODE    damage .debug_info (MODE: see MODES, ZMODES)
    dwarf_oracle.py modes [compressed]     list the modes for a plain (compressed) .debug_info
    dwarf_oracle.py chtype ELF SECTION     print the compression of a section
                                           (none, zlib, zstd, zdebug)
    dwarf_oracle.py funcs ELF              "ADDR NAME" of each sized FUNC symbol
                                           of .symtab (else .dynsym) in .text
    dwarf_oracle.py shift-seq IN OUT DELTA move the second line sequence that starts
                                           where an earlier one does by DELTA bytes

Addresses are the instruction starts of .text as `objdump -d` lists them, so
the sample never comes from lidiagen. An address is ignored (and counted) when
the oracle names no function there at all (every frame '??' or ''): padding
between functions. Nothing is normalised: names, files and lines are compared
as the oracle prints them.
"""
import json
import re
import struct
import subprocess
import sys


def tap(ok, what, details=()):
    print(("ok - " if ok else "not ok - ") + what)
    for d in details:
        for line in str(d).splitlines() or [""]:
            print("# " + line)


def note(*lines):
    for d in lines:
        for line in str(d).splitlines() or [""]:
            print("# " + line)


# --- addresses -------------------------------------------------------------

INSN_RE = re.compile(r"^\s*([0-9a-f]+):\s")


def text_addresses(elf, every=1, objdump="objdump", sections=".text"):
    """Instruction starts in .text (or the sections named, comma-separated), from objdump -d
    (every Nth)."""
    js = [a for sec in sections.split(",") for a in ("-j", sec)]
    out = subprocess.run([objdump, "-d", "--no-show-raw-insn"] + js + [elf],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, check=True,
                         universal_newlines=True).stdout
    addrs = []
    for line in out.splitlines():
        m = INSN_RE.match(line)
        if m:
            addrs.append(int(m.group(1), 16))
    addrs = sorted(set(addrs))
    return addrs[::every] if every > 1 else addrs


# --- the symbolizers -------------------------------------------------------
# A frame is (function, file, line); a chain lists frames innermost first.


def run_llvm(symbolizer, obj, addrs):
    inp = "".join("0x%x\n" % a for a in addrs)
    p = subprocess.run([symbolizer, "--obj=" + obj, "--inlines", "--output-style=JSON"],
                       input=inp, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       universal_newlines=True)
    if p.returncode != 0:
        raise RuntimeError("%s --obj=%s: exit %d: %s" % (symbolizer, obj, p.returncode,
                                                         p.stderr[:500]))
    res = {}
    for line in p.stdout.splitlines():
        if not line.strip():
            continue
        d = json.loads(line)
        a = int(d["Address"], 16)
        res[a] = [(s.get("FunctionName", ""), s.get("FileName", ""), s.get("Line", 0))
                  for s in d.get("Symbol", [])]
    return res


LOC_RE = re.compile(r"^(.*?):(\d+)(?::(\d+))?$")


def run_eu(obj, addrs, debuginfo_path=None):
    """eu-addr2line -a -i -f -C: per address a "0x..." line, then pairs of
    "FUNCTION" (the first one "FUNCTION inlined at LOC in OUTER") and "FILE:LINE[:COL]"."""
    inp = "".join("0x%x\n" % a for a in addrs)
    dpath = ["--debuginfo-path=" + debuginfo_path] if debuginfo_path else []
    p = subprocess.run(["eu-addr2line", "-a", "-i", "-f", "-C"] + dpath + ["-e", obj], input=inp,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True)
    if p.returncode != 0 and not p.stdout:
        raise RuntimeError("eu-addr2line -e %s: exit %d: %s" % (obj, p.returncode, p.stderr[:500]))
    res = {}
    cur = None
    lines = p.stdout.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        if re.match(r"^0x[0-9a-f]+$", line):
            cur = int(line, 16)
            res[cur] = []
            i += 1
            continue
        fn = line
        k = fn.find(" inlined at ")
        if k >= 0:
            fn = fn[:k]
        loc = lines[i + 1] if i + 1 < len(lines) else "??:0"
        m = LOC_RE.match(loc)
        f, ln = (m.group(1), int(m.group(2))) if m else (loc, 0)
        if f == "??":
            f = ""
        if cur is not None:
            res[cur].append((fn, f, ln))
        i += 2
    return res


def run_lidiagen(lidiagen, lidia, addrs):
    inp = "".join("0x%x\n" % a for a in addrs)
    p = subprocess.run([lidiagen, "lookup", "--json", lidia], input=inp, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, universal_newlines=True)
    if p.returncode != 0:
        raise RuntimeError("lidiagen lookup --json %s: exit %d: %s" % (lidia, p.returncode,
                                                                      p.stderr[:500]))
    res = {}
    for line in p.stdout.splitlines():
        if not line.strip():
            continue
        d = json.loads(line)
        a = int(d["address"], 16)
        res[a] = [(f.get("function", ""), f.get("file", ""), f.get("line", 0))
                  for f in d.get("frames", [])]
    return res


def run_pyroscope(python, tool, lidia, addrs):
    """(error or None, {addr: [names]}) from Pyroscope's reader."""
    p = subprocess.run([python, tool, lidia], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       universal_newlines=True)
    if p.returncode != 0 or not p.stdout.startswith("ok"):
        return "%s %s: exit %d: %s%s" % (tool, lidia, p.returncode, p.stdout[:200],
                                         p.stderr[:300]), {}
    res = {}
    step = 4000  # keep each command line short
    for k in range(0, len(addrs), step):
        chunk = addrs[k:k + step]
        p = subprocess.run([python, tool, "--json", lidia] + ["0x%x" % a for a in chunk],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True)
        if p.returncode != 0:
            return "%s --json %s: exit %d: %s" % (tool, lidia, p.returncode, p.stderr[:300]), {}
        for d in json.loads(p.stdout):
            res[int(d["addr"], 16)] = [f["function"] for f in d["frames"]]
    return None, res


# --- comparing -------------------------------------------------------------


def fold_dots(path):
    """Drop "." elements (not ".."): "././x.c" and "./x.c" are one file."""
    if not path:
        return path
    parts = [p for p in path.split("/") if p not in (".", "")]
    return ("/" if path.startswith("/") else "") + "/".join(parts)


def no_function(chain):
    return all(fn in ("??", "") for fn, _f, _l in chain)


def fmt_chain(chain, width=90):
    if not chain:
        return "(none)"

    def one(fr):
        fn, f, ln = fr
        if len(fn) > width:
            fn = fn[:width - 3] + "..."
        return "%s @ %s:%s" % (fn, f if f else '""', ln)
    return " <- ".join(one(fr) for fr in chain)


def cmd_compare(o):
    label = o["label"]
    addrs = text_addresses(o["code"], int(o.get("every", 1)), o.get("objdump", "objdump"),
                           o.get("sections", ".text"))
    if not addrs:
        tap(False, "%s: .text has instructions" % label, ["objdump -d -j .text %s" % o["code"]])
        return 1
    consensus = None
    if o.get("oracle", "llvm") == "llvm":
        oracle_name = "llvm-symbolizer"
        oracle = run_llvm(o["llvm"], o["llvm_obj"], addrs)
        second = ("eu-addr2line", o["eu_obj"]) if o.get("eu_obj") else None
    else:
        oracle_name = "eu-addr2line"
        oracle = run_eu(o["eu_obj"], addrs, o.get("eu_debuginfo_path"))
        second = ("llvm-symbolizer", o["llvm_obj"]) if o.get("llvm_obj") else None
        if o.get("consensus"):
            consensus = run_llvm(o["llvm"], o["llvm_obj"], addrs)
    got = run_lidiagen(o["lidiagen"], o["lidia"], addrs)

    def names(chain):
        return [fr[0] for fr in chain]

    def places(chain):
        # Paths are compared as the same file: llvm-symbolizer joins a "."
        # include directory literally ("././x.c", a relative comp_dir from
        # -ffile-prefix-map=$PWD=.), lidiagen through libdw ("./x.c"). Only
        # "." and "" elements are folded; ".." and every other element count.
        return [(fold_dots(fr[1]), fr[2]) for fr in chain]

    considered = ignored = name_ok = line_ok = 0
    name_n = line_n = 0  # addresses counted for each rate
    name_split, line_split = [], []  # the two oracles disagree here
    name_bad, line_bad = [], []
    depth_hist = {}
    for a in addrs:
        want = oracle.get(a, [])
        if no_function(want):
            ignored += 1
            continue
        considered += 1
        have = got.get(a, [])
        depth_hist[len(want)] = depth_hist.get(len(want), 0) + 1
        if consensus is not None and names(consensus.get(a, [])) != names(want):
            name_split.append(a)
        else:
            name_n += 1
            if names(want) == names(have):
                name_ok += 1
            else:
                name_bad.append(a)
        if consensus is not None and places(consensus.get(a, [])) != places(want):
            line_split.append(a)
        else:
            line_n += 1
            if places(want) == places(have):
                line_ok += 1
            else:
                line_bad.append(a)

    min_names = float(o.get("min_names", 99.5))
    min_lines = float(o.get("min_lines", 99.0))
    pn = 100.0 * name_ok / name_n if name_n else 0.0
    pl = 100.0 * line_ok / line_n if line_n else 0.0
    inl = sum(n for d, n in depth_hist.items() if d > 1)
    note("%s: %d addresses (%d instructions%s of .text), %d ignored (no function in %s), "
         "%d compared, %d with inline frames, deepest chain %d"
         % (label, len(addrs), len(addrs), " sampled every %s" % o["every"]
            if int(o.get("every", 1)) > 1 else "", ignored, oracle_name, considered, inl,
            max(depth_hist) if depth_hist else 0))

    def spread(bad, n=10):
        """Up to n of bad: the first in each function (the oracle's outermost
        frame) first, then the rest in address order."""
        first, seen = [], set()
        for a in bad:
            fn = (oracle.get(a) or [("", "", 0)])[-1][0]
            if fn not in seen:
                seen.add(fn)
                first.append(a)
        chosen = set(first)
        rest = [a for a in bad if a not in chosen]
        return sorted((first + rest)[:n])

    if consensus is not None:
        note("%s: counted only where llvm-symbolizer on %s agrees with %s: names differ between "
             "the two at %d addresses, file/line at %d; some of them:"
             % (label, o["llvm_obj"], oracle_name, len(name_split), len(line_split)))
        for a in sorted(set(spread(name_split, 4) + spread(line_split, 4))):
            note("0x%x: %s: %s" % (a, oracle_name, fmt_chain(oracle.get(a, []))),
                 "%s  llvm-symbolizer: %s" % (" " * len("0x%x" % a), fmt_chain(consensus.get(a, []))),
                 "%s  lidiagen: %s" % (" " * len("0x%x" % a), fmt_chain(got.get(a, []))))

    name_show, line_show = spread(name_bad), spread(line_bad)
    shown = {}
    if second and (name_bad or line_bad):
        pick = sorted(set(name_show + line_show))
        if second[0] == "eu-addr2line":
            shown = run_eu(second[1], pick)
        else:
            shown = run_llvm(o["llvm"], second[1], pick)

    def details(bad, what):
        d = []
        for a in (name_show if bad is name_bad else line_show):
            d.append("0x%x: %s: %s" % (a, oracle_name, fmt_chain(oracle.get(a, []))))
            d.append("%s  lidiagen: %s" % (" " * len("0x%x" % a), fmt_chain(got.get(a, []))))
            if a in shown:
                d.append("%s  %s: %s" % (" " * len("0x%x" % a), second[0], fmt_chain(shown[a])))
        if len(bad) > 10:
            d.append("... and %d more %s disagreements" % (len(bad) - 10, what))
        return d

    rc = 0
    ok = name_n > 0 and pn >= min_names
    tap(ok, "%s: function-name chains agree with %s at %.2f%% of %d addresses (%d/%d, need %.1f%%)"
        % (label, oracle_name, pn, name_n, name_ok, name_n, min_names),
        details(name_bad, "name") if not ok else [])
    if ok and name_bad:
        note("%s: %d name disagreements (within tolerance):" % (label, len(name_bad)),
             *details(name_bad, "name"))
    rc |= not ok
    ok = line_n > 0 and pl >= min_lines
    tap(ok, "%s: file and line of every frame agree with %s at %.2f%% of %d addresses "
        "(%d/%d, need %.1f%%)" % (label, oracle_name, pl, line_n, line_ok, line_n, min_lines),
        details(line_bad, "file/line") if not ok else [])
    if ok and line_bad:
        note("%s: %d file/line disagreements (within tolerance):" % (label, len(line_bad)),
             *details(line_bad, "file/line"))
    rc |= not ok
    if considered and inl == 0 and o.get("want_inlines"):
        tap(False, "%s: the oracle shows inline frames (the fixture inlines)" % label)
        rc = 1

    if o.get("pyroscope"):
        err, py = run_pyroscope(o.get("python", "python3"), o["pyroscope"], o["lidia"], addrs)
        what = "%s: Pyroscope's reader accepts the file and gives lidiagen lookup's name chains" % label
        if err:
            tap(False, what, [err])
            rc = 1
        else:
            bad = [a for a in addrs if py.get(a) != [fr[0] for fr in got.get(a, [])]]
            d = ["0x%x: pyroscope %s / lidiagen %s" % (a, py.get(a), [fr[0] for fr in got.get(a, [])])
                 for a in bad[:10]]
            tap(not bad, what + " (%d addresses, %d differ)" % (len(addrs), len(bad)), d)
            rc |= bool(bad)
    if o.get("rates_file"):
        with open(o["rates_file"], "a") as f:
            f.write("%s\t%s\t%.2f\t%.2f\t%d\t%d\t%d\t%d\t%d\n"
                    % (label, oracle_name + ("+llvm" if consensus is not None else ""), pn, pl,
                       name_n, line_n, ignored, len(name_split) + len(line_split), inl))
    return rc


# --- ELF bits (stdlib only) ------------------------------------------------


def elf_sections(data):
    if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        raise ValueError("not a little-endian ELF64 file")
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3a)
    secs = []
    for i in range(shnum):
        off = shoff + i * shentsize
        name, typ, flags, addr, offset, size, link, info, align, entsize = struct.unpack_from(
            "<IIQQQQIIQQ", data, off)
        secs.append(dict(index=i, hdr=off, name_off=name, type=typ, flags=flags, addr=addr,
                         offset=offset, size=size, link=link, entsize=entsize))
    strs = secs[shstrndx]
    for s in secs:
        o = strs["offset"] + s["name_off"]
        s["name"] = data[o:data.index(b"\0", o)].decode()
    return secs


def find_section(secs, name):
    for s in secs:
        if s["name"] == name:
            return s
    return None


def cmd_chtype(path, name):
    data = open(path, "rb").read()
    secs = elf_sections(data)
    s = find_section(secs, name)
    if s is None:
        z = find_section(secs, ".z" + name.lstrip("."))
        print("zdebug" if z else "missing")
        return 0
    if s["flags"] & 0x800:  # SHF_COMPRESSED
        t, = struct.unpack_from("<I", data, s["offset"])
        print({1: "zlib", 2: "zstd"}.get(t, "type%d" % t))
    else:
        print("none")
    return 0


def cmd_shift_seq(src, dst, delta):
    """Move the second line sequence of .debug_line that starts where an
    earlier one does (identical code folded by the linker) by delta bytes:
    the two then overlap in part, the shape of old GCC output for C++
    templates. Sequences start with DW_LNE_set_address (00 09 02 ADDR64)."""
    data = bytearray(open(src, "rb").read())
    s = find_section(elf_sections(bytes(data)), ".debug_line")
    if s is None:
        raise SystemExit("%s: no .debug_line" % src)
    seen, p, end = set(), s["offset"], s["offset"] + s["size"]
    while True:
        p = data.find(b"\x00\x09\x02", p, end)
        if p < 0:
            raise SystemExit("%s: no two sequences start at one address" % src)
        addr, = struct.unpack_from("<Q", data, p + 3)
        if addr and addr in seen:
            struct.pack_into("<Q", data, p + 3, addr + int(delta, 0))
            open(dst, "wb").write(bytes(data))
            print("0x%x" % addr)
            return 0
        seen.add(addr)
        p += 11


def cmd_funcs(path):
    data = open(path, "rb").read()
    secs = elf_sections(data)
    text = find_section(secs, ".text")
    tab = [s for s in secs if s["type"] == 2] or [s for s in secs if s["type"] == 11]
    if not tab or not text:
        return 0
    tab = tab[0]
    strs = secs[tab["link"]]
    for k in range(tab["size"] // 24):
        name, info, other, shndx, value, size = struct.unpack_from("<IBBHQQ", data,
                                                                   tab["offset"] + 24 * k)
        if info & 0xf != 2 or size == 0 or shndx != text["index"]:
            continue
        o = strs["offset"] + name
        print("0x%x %s" % (value, data[o:data.index(b"\0", o)].decode()))
    return 0


# Ways to damage .debug_info (uncompressed), each deterministic.
MODES = {
    "zero-middle": "zero 256 bytes in the middle of .debug_info",
    "garbage": "overwrite every 97th byte of .debug_info with 0xff",
    "truncate-header": "shrink .debug_info's sh_size to half (units run past the end)",
    "unit-length": "set the first unit's length to 0xfffffff0 (runs past the section)",
    "abbrev-offset": "point every unit's abbrev offset past .debug_abbrev",
    "bad-version": "set the first unit's version to 9",
    "line-garbage": "overwrite .debug_line's middle third with a byte pattern",
}
# Ways to damage a compressed .debug_info (SHF_COMPRESSED, zlib or zstd).
ZMODES = {
    "chdr-huge": "claim an inflated size of 1 TiB in the compression header",
    "chdr-small": "claim an inflated size of 16 bytes (the stream holds more)",
    "chdr-type": "set the compression type to 77 (unknown)",
    "zdata-garbage": "overwrite the middle third of the compressed stream with a byte pattern",
    "zdata-cut": "shrink sh_size so the compressed stream ends halfway",
}


def cmd_corrupt(src, dst, mode):
    data = bytearray(open(src, "rb").read())
    secs = elf_sections(data)
    info = find_section(secs, ".debug_info")
    if info is None:
        raise SystemExit("%s: no .debug_info" % src)
    off, size = info["offset"], info["size"]
    compressed = bool(info["flags"] & 0x800)
    if compressed != (mode in ZMODES):
        raise SystemExit("%s: mode %s wants a%s .debug_info" % (src, mode, " compressed"
                                                               if mode in ZMODES else "n uncompressed"))
    # Elf64_Chdr: ch_type u32, reserved u32, ch_size u64, ch_addralign u64.
    if mode == "chdr-huge":
        struct.pack_into("<Q", data, off + 8, 1 << 40)
    elif mode == "chdr-small":
        struct.pack_into("<Q", data, off + 8, 16)
    elif mode == "chdr-type":
        struct.pack_into("<I", data, off, 77)
    elif mode == "zdata-garbage":
        for p in range(off + 24 + (size - 24) // 3, off + 24 + 2 * (size - 24) // 3):
            data[p] = (p * 37 + 0x5a) & 0xff
    elif mode == "zdata-cut":
        struct.pack_into("<Q", data, info["hdr"] + 0x20, 24 + (size - 24) // 2)
    elif mode == "zero-middle":
        mid = off + size // 2
        data[mid:mid + 256] = bytes(min(256, off + size - mid))
    elif mode == "garbage":
        for p in range(off + 11, off + size, 97):
            data[p] = 0xff
    elif mode == "truncate-header":
        struct.pack_into("<Q", data, info["hdr"] + 0x20, size // 2)
    elif mode == "unit-length":
        struct.pack_into("<I", data, off, 0xfffffff0)
    elif mode == "abbrev-offset":
        p = off
        while p + 12 <= off + size:
            ulen, = struct.unpack_from("<I", data, p)
            ver, = struct.unpack_from("<H", data, p + 4)
            if ulen >= 0xfffffff0 or ulen == 0:
                break
            ao = p + 8 if ver >= 5 else p + 6  # v5: unit_type, address_size, then the offset
            struct.pack_into("<I", data, ao, 0x7ffffff0)
            p += 4 + ulen
    elif mode == "bad-version":
        struct.pack_into("<H", data, off + 4, 9)
    elif mode == "line-garbage":
        line = find_section(secs, ".debug_line")
        if line is None or line["flags"] & 0x800:
            raise SystemExit("%s: no uncompressed .debug_line" % src)
        lo = line["offset"] + line["size"] // 3
        hi = line["offset"] + 2 * line["size"] // 3
        for p in range(lo, hi):
            data[p] = (p * 37 + 0x5a) & 0xff
    else:
        raise SystemExit("unknown mode %s (%s)" % (mode, ", ".join(list(MODES) + list(ZMODES))))
    open(dst, "wb").write(bytes(data))
    return 0


def main(argv):
    if not argv:
        sys.stderr.write(__doc__)
        return 2
    cmd = argv[0]
    if cmd == "compare":
        o = {}
        args = argv[1:]
        while args:
            k = args.pop(0)
            if not k.startswith("--") or not args:
                sys.stderr.write("compare: bad argument %s\n" % k)
                return 2
            o[k[2:].replace("-", "_")] = args.pop(0)
        try:
            return cmd_compare(o)
        except (RuntimeError, subprocess.CalledProcessError, ValueError) as e:
            tap(False, "%s: oracle comparison ran" % o.get("label", "?"), [str(e)])
            return 1
    if cmd == "corrupt" and len(argv) == 4:
        return cmd_corrupt(*argv[1:])
    if cmd == "modes":
        for k, v in (ZMODES if argv[1:] == ["compressed"] else MODES).items():
            print("%s\t%s" % (k, v))
        return 0
    if cmd == "chtype" and len(argv) == 3:
        return cmd_chtype(argv[1], argv[2])
    if cmd == "shift-seq" and len(argv) == 4:
        return cmd_shift_seq(*argv[1:])
    if cmd == "funcs" and len(argv) == 2:
        return cmd_funcs(argv[1])
    sys.stderr.write(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
