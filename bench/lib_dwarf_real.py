#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Compare lidiagen's DWARF frames with an oracle on a real Debian package.

Used by bench/dwarf_real.sh (see bench/README.md).

    lib_dwarf_real.py --lidiagen PATH --name PKG --main ROOT --dbg ROOT
                      --oracle ORACLE[,ORACLE...] --work DIR [--samples N]
                      [--jobs N] [--examples N] [--ns] [--dwz] [--summary FILE]

For every ELF file under --main (a `dpkg-deb -x` of the package) whose GNU
build ID has a debug file in --dbg (ROOT/usr/lib/debug/.build-id/xx/yy.debug):
  1. lidiagen FILE --debug-dir ROOT/usr/lib/debug -q -o - > WORK/ID.lidia
  2. samples N instruction starts of FILE's .text (objdump -d, evenly spaced)
  3. lidiagen lookup --json WORK/ID.lidia on them
  4. the same addresses through each oracle, run on the debug file:
       llvm      llvm-symbolizer --obj=DEBUG --output-style=JSON
       eu        eu-addr2line -a -i -f -C -e DEBUG
       gdb       gdb -batch with bench/lib_dwarf_gdb.py on DEBUG
       llvm+gdb  llvm's chain, files and lines; a name llvm leaves blank (a
                 DW_FORM_GNU_ref_alt/strp_alt into a dwz file, which llvm 16
                 cannot follow) is taken from gdb when gdb's chain is as deep
     With --ns, eu and gdb run in a private mount namespace (unshare -m) in
     which ROOT/usr/lib/debug is bind-mounted over /usr/lib/debug, so the
     absolute .gnu_debugaltlink path (/usr/lib/debug/.dwz/...) of a dwz file
     resolves to the unpacked package, as it would once installed.
  5. compares (a) the chain of function names, innermost first, (b) every
     frame's file and line. An address where the oracle names no function is
     skipped and counted. llvm's names and files are compared as printed; eu's
     and gdb's file names with os.path.normpath on both sides (eu-addr2line
     joins DW_AT_comp_dir and the line table's directory differently, e.g.
     ./iconv/./iconv/x.c for ./iconv/x.c). A name from gdb is compared without
     whitespace or clone suffix, and ours may carry a return type (gdb prints
     'std::operator< <char' and '> >' where the demangler prints '<<char' and
     '>>').
Names agree "strict" when every frame's name is the same; "adjusted" also
accepts a frame whose difference is the oracle's own limitation (EXCUSES:
blank llvm names on dwz, llvm's bare DW_AT_name where the linkage name is a
strp_alt (with --dwz), gdb's qualified DW_AT_name, names llvm-cxxfilt-16 cannot
demangle either); each excuse is counted and shown with an example.
Prints the rates, the kinds of disagreement with examples and the most
frequent name pairs; writes every disagreement to WORK/disagreements-ORACLE.jsonl.
"""
import argparse
import collections
import concurrent.futures
import json
import os
import re
import struct
import subprocess
import sys

LLVM_SYMBOLIZER = os.environ.get("LLVM_SYMBOLIZER", "/usr/lib/llvm-16/bin/llvm-symbolizer")
HERE = os.path.dirname(os.path.abspath(__file__))

# ---- a minimal ELF reader -------------------------------------------------------


def elf_sections_and_id(path):
    """(sections {name: (addr, size, type)}, build id hex or None), or None if not ELF."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:4] != b"\x7fELF" or data[4] not in (1, 2) or data[5] not in (1, 2):
        return None
    e = "<" if data[5] == 1 else ">"
    if data[4] == 2:
        shoff, = struct.unpack_from(e + "Q", data, 0x28)
        shentsize, shnum, shstrndx = struct.unpack_from(e + "HHH", data, 0x3A)
        shfmt = e + "IIQQQQIIQQ"
    else:
        shoff, = struct.unpack_from(e + "I", data, 0x20)
        shentsize, shnum, shstrndx = struct.unpack_from(e + "HHH", data, 0x2E)
        shfmt = e + "IIIIIIIIII"
    if shoff == 0 or shnum == 0:
        return {}, None
    shdrs = []
    for i in range(shnum):
        name, typ, flags, addr, off, size = struct.unpack_from(shfmt, data, shoff + i * shentsize)[:6]
        shdrs.append((name, typ, flags, addr, off, size))
    stroff = shdrs[shstrndx][4]
    secs = {}
    bid = None
    for name, typ, flags, addr, off, size in shdrs:
        end = data.index(b"\0", stroff + name)
        n = data[stroff + name:end].decode()
        secs[n] = (addr, size, typ)
        if typ == 7 and bid is None:  # SHT_NOTE
            p = off
            while p + 12 <= off + size:
                namesz, descsz, ntype = struct.unpack_from(e + "III", data, p)
                nm = data[p + 12:p + 12 + namesz]
                dp = p + 12 + ((namesz + 3) & ~3)
                if ntype == 3 and nm.rstrip(b"\0") == b"GNU":
                    bid = data[dp:dp + descsz].hex()
                    break
                p = dp + ((descsz + 3) & ~3)
    return secs, bid


# ---- addresses ------------------------------------------------------------------

INSN_RE = re.compile(r"^\s*([0-9a-f]+):\s")


def sample_addresses(path, n):
    out = subprocess.run(["objdump", "-d", "--no-show-raw-insn", "-j", ".text", path],
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, check=True,
                         text=True).stdout
    insns = [int(m.group(1), 16) for m in map(INSN_RE.match, out.splitlines()) if m]
    if len(insns) <= n:
        return insns
    # evenly spaced over the instruction list (deterministic)
    return [insns[(i * len(insns)) // n] for i in range(n)]


# ---- running things ---------------------------------------------------------------


def in_ns(cmd, dbg_debug_root):
    """Wrap cmd to run with dbg_debug_root bind-mounted over /usr/lib/debug."""
    script = 'mount --make-rprivate / && mount --bind "$0" /usr/lib/debug && exec "$@"'
    return ["unshare", "-m", "sh", "-c", script, dbg_debug_root] + cmd


def run(cmd, stdin=None):
    p = subprocess.run(cmd, input=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True, errors="replace")
    return p.returncode, p.stdout, p.stderr


def ours(lidiagen, lidia, addrs):
    rc, out, err = run([lidiagen, "lookup", "--json", lidia],
                       "".join("%x\n" % a for a in addrs))
    if rc != 0:
        raise RuntimeError("lidiagen lookup failed: " + err)
    res = {}
    for line in out.splitlines():
        o = json.loads(line)
        res[int(o["address"], 16)] = [(f["function"], f["file"], f["line"]) for f in o["frames"]]
    return res


def llvm_run(debug, addrs):
    """llvm-symbolizer on ADDRS: (exit code, {address: chain}, stderr)."""
    rc, out, err = run([LLVM_SYMBOLIZER, "--obj=" + debug, "--output-style=JSON",
                        "--inlining", "--demangle", "--functions=linkage"],
                       "".join("0x%x\n" % a for a in addrs))
    res = {}
    for line in out.splitlines():
        o = json.loads(line)
        fr = [(s.get("FunctionName", ""), s.get("FileName", ""), s.get("Line", 0))
              for s in o.get("Symbol", [])]
        res[int(o["Address"], 16)] = fr
    return rc, res, err


def oracle_llvm(debug, addrs, ctx):
    # llvm-symbolizer 16 recurses without end on some dwz'd files (in
    # DWARFDie::getTypeSize), at some addresses only. A crash would leave the
    # addresses after it unseen: the batch is halved until each address that
    # crashes it stands alone, and those are counted in ctx.crashed (and
    # skipped, the oracle naming nothing there), not compared.
    rc, res, err = llvm_run(debug, addrs)
    if rc == 0:
        return res
    if len(addrs) == 1:
        if rc < 0:
            ctx.crashed.add(addrs[0])
            return {}
        raise RuntimeError("llvm-symbolizer exited with %d on %s: %s" % (rc, debug, err[-500:]))
    half = len(addrs) // 2
    res = oracle_llvm(debug, addrs[:half], ctx)
    res.update(oracle_llvm(debug, addrs[half:], ctx))
    return res


def oracle_eu(debug, addrs, ctx):
    cmd = ["eu-addr2line", "-a", "-i", "-f", "-C", "-e", debug]
    if ctx.ns:
        cmd = in_ns(cmd, ctx.dbg_debug)
    rc, out, err = run(cmd, "".join("0x%x\n" % a for a in addrs))
    res = {}
    cur = None
    lines = out.splitlines()
    i = 0
    while i < len(lines):
        ln = lines[i]
        if re.match(r"^0x[0-9a-f]+$", ln):
            cur = int(ln, 16)
            res[cur] = []
            i += 1
            continue
        name = ln.split(" inlined at ", 1)[0]
        loc = lines[i + 1] if i + 1 < len(lines) else "??:0"
        m = re.match(r"^(.*?):(\d+)(?::\d+)?$", loc)
        fname, lno = (m.group(1), int(m.group(2))) if m else (loc, 0)
        if fname == "??":
            fname = ""
        if name == "??":
            name = ""
        res[cur].append((name, fname, lno))
        i += 2
    return res


def oracle_gdb(debug, addrs, ctx):
    afile = os.path.join(ctx.tmp, "gdb-addrs.txt")
    ofile = os.path.join(ctx.tmp, "gdb-out.jsonl")
    with open(afile, "w") as f:
        f.write("".join("%x\n" % a for a in addrs))
    cmd = ["gdb", "-nx", "-batch", "-ex", "python ADDRS=%r; OUT=%r" % (afile, ofile),
           "-x", os.path.join(HERE, "lib_dwarf_gdb.py"), debug]
    if ctx.ns:
        cmd = in_ns(cmd, ctx.dbg_debug)
    rc, out, err = run(cmd)
    res = {}
    if not os.path.exists(ofile):
        raise RuntimeError("gdb failed: " + err[-2000:])
    with open(ofile) as f:
        for line in f:
            o = json.loads(line)
            res[int(o["address"], 16)] = [(x["function"], x["file"], x["line"]) for x in o["frames"]]
    return res


def oracle_llvm_gdb(debug, addrs, ctx):
    """llvm-symbolizer, with the names it leaves blank (DW_FORM_GNU_ref_alt /
    strp_alt into a dwz file, which llvm 16 cannot follow) taken from gdb when
    gdb's chain has the same depth. Files and lines stay llvm's."""
    lo = ctx.memo("llvm", debug, addrs)
    go = ctx.memo("gdb", debug, addrs)
    res = {}
    for a in addrs:
        lc, gc = lo.get(a, []), go.get(a, [])
        out = []
        for i, f in enumerate(lc):
            if f[0] == "" and len(gc) == len(lc) and gc[i][0]:
                out.append((gc[i][0], f[1], f[2], "gdb"))
            else:
                out.append(f)
        res[a] = out
    return res


ORACLES = {"llvm": oracle_llvm, "eu": oracle_eu, "gdb": oracle_gdb, "llvm+gdb": oracle_llvm_gdb}
NORMALIZE_FILES = {"llvm": False, "eu": True, "gdb": True, "llvm+gdb": False}

# ---- comparing ------------------------------------------------------------------


def names_only(chain):
    return [f[0] for f in chain]


def cxx_key(name):
    """A C++ name without return type, parameters, clone suffix or '> >' spacing,
    to compare gdb's names (its own printer) with the demangler's."""
    s = re.sub(r" \[clone [^]]*\]$| \(\.[a-z_]+(\.\d+)*\)$", "", name)
    while "> >" in s:
        s = s.replace("> >", ">>")
    depth = 0
    for i, c in enumerate(s):
        if c == "<":
            depth += 1
        elif c == ">":
            depth -= 1
        elif c == "(" and depth == 0 and not s[:i].endswith("operator") and \
                not s.startswith("(anonymous", i):
            s = s[:i]
            break
    depth = 0
    last = 0
    for i, c in enumerate(s):
        if c == "<":
            depth += 1
        elif c == ">":
            depth -= 1
        elif c == " " and depth == 0 and not s[:i].endswith("operator"):
            last = i + 1
    return s[last:]


LLVM_CXXFILT = os.environ.get("LLVM_CXXFILT", "/usr/lib/llvm-16/bin/llvm-cxxfilt")
_cxxfilt_cache = {}


def llvm_demangles(name):
    """Whether llvm-cxxfilt (16, the demangler llvm-symbolizer uses) demangles name."""
    if name not in _cxxfilt_cache:
        try:
            out = subprocess.run([LLVM_CXXFILT, name], stdout=subprocess.PIPE,
                                 stderr=subprocess.DEVNULL, text=True).stdout.strip()
        except OSError:
            out = name
        _cxxfilt_cache[name] = out != name
    return _cxxfilt_cache[name]


def squash(name):
    """gdb's printer vs the demangler's: no clone suffix, no whitespace at all
    (gdb writes 'operator< <char' and '> >', llvm 'operator<<char' and '>>')."""
    s = re.sub(r" \[clone [^]]*\]$| \(\.[a-z_]+(\.\d+)*\)$", "", name)
    return re.sub(r"\s+", "", s)


# Excuses: a frame whose names differ only because of the oracle. Counted apart;
# the strict rate does not take them, the adjusted rate does.
EXCUSES = {
    "blank": "oracle could not name the frame (llvm 16: DW_FORM_GNU_ref_alt/strp_alt "
             "into the dwz file)",
    "strp_alt": "oracle printed the bare DW_AT_name, ours the demangled linkage name "
                "(llvm 16 cannot read a DW_FORM_GNU_strp_alt DW_AT_linkage_name)",
    "gdb_qualifies": "gdb qualifies a DW_AT_name that has no linkage name "
                     "(ours prints DW_AT_name bare, as llvm-symbolizer does)",
    "local_label": "oracle named an assembler-local label (.Lnnn: a zero-size NOTYPE symbol "
                   "left in .symtab, which llvm-symbolizer 16 takes for a function)",
    "llvm_demangler": "ours left the name mangled, and so does llvm-cxxfilt-16 "
                      "(what llvm-symbolizer would print)",
}


def top_level_scope(name):
    """Whether name has a '::' outside template arguments and parentheses."""
    depth = 0
    for i, c in enumerate(name):
        if c in "<(":
            depth += 1
        elif c in ">)":
            depth -= 1
        elif c == ":" and depth == 0 and name.startswith("::", i):
            return True
    return False


def frame_cmp(o, u, dwz=False):
    """'eq', 'ne', or the key of an excuse. o: the oracle's frame, u: ours."""
    how = o[3] if len(o) > 3 else ""
    if o[0] == u[0]:
        return "eq"
    if o[0] == "":
        return "blank"
    if how == "gdb":
        so, su = squash(o[0]), squash(u[0])
        if so == su or su.endswith(so):  # ours may carry a return type
            return "eq"
        ku = cxx_key(u[0])
        if not top_level_scope(ku) and \
                squash(cxx_key(o[0])).endswith("::" + squash(ku)):
            return "gdb_qualifies"
        if u[0].startswith("_Z") and not llvm_demangles(u[0]):
            return "llvm_demangler"
        return "ne"
    if o[0].startswith(".L"):
        return "local_label"
    if dwz and "::" not in o[0] and "(" not in o[0] and \
            (cxx_key(u[0]) == o[0] or cxx_key(u[0]).endswith("::" + o[0])):
        return "strp_alt"
    return "ne"


def frame_name_eq(o, u, dwz=False):
    return frame_cmp(o, u, dwz) != "ne"


def chain_excuses(orc, our, dwz=False):
    """None when the chains disagree, else the set of excuses needed (empty: equal)."""
    if not our and orc and all(f[0].startswith(".L") for f in orc):
        return {"local_label"}  # llvm's name for padding after a function
    if len(orc) != len(our):
        return None
    ex = {frame_cmp(a, b, dwz) for a, b in zip(orc, our)} - {"eq"}
    return None if "ne" in ex else ex


def names_agree(orc, our, dwz=False):
    return chain_excuses(orc, our, dwz) is not None


def names_agree_strict(orc, our):
    return len(orc) == len(our) and all(frame_cmp(a, b) == "eq" for a, b in zip(orc, our))


def no_function(chain):
    return not chain or all(f[0] in ("", "??", "<invalid>") for f in chain)


SUFFIX_RE = re.compile(r"(\.(cold|part|isra|constprop|lto_priv|llvm|localalias)(\.\d+)*)+$")


def name_pair_kind(o, u):
    if SUFFIX_RE.sub("", o) == SUFFIX_RE.sub("", u):
        return "same name but for a GCC clone suffix (.cold/.part/.isra/.lto_priv...)"
    if o.split("(")[0] == u.split("(")[0]:
        return "same name but for the parameter list"
    if o == "" or u == "":
        return "one side has an empty name"
    return "different functions"


def classify_names(orc, our, dwz=False):
    o, u = names_only(orc), names_only(our)
    if not u:
        return "ours: no frame at all"
    if len(u) < len(o):
        if names_agree(orc[-len(u):], our, dwz):
            return "ours lacks the %d innermost inline frame(s)" % (len(o) - len(u)) if len(o) - len(u) < 3 \
                else "ours lacks >=3 innermost inline frames"
        return "ours has fewer frames (not just the innermost)"
    if len(u) > len(o):
        if names_agree(orc, our[-len(o):], dwz):
            return "ours has extra inner frame(s) the oracle does not"
        return "ours has more frames (not just inner ones)"
    diffs = [i for i in range(len(o)) if not frame_name_eq(orc[i], our[i], dwz)]
    where = "outermost" if diffs == [len(o) - 1] else (
        "innermost" if diffs == [0] else "depth " + ",".join(map(str, diffs)))
    return "same depth, %s name differs: %s" % (where, name_pair_kind(o[diffs[0]], u[diffs[0]]))


def classify_lines(orc, our, norm):
    if len(orc) != len(our):
        return "chain lengths differ (see names)"
    for k, (a, b) in enumerate(zip(orc, our)):
        fa, fb = (os.path.normpath(a[1]) if a[1] else "", os.path.normpath(b[1]) if b[1] else "") \
            if norm else (a[1], b[1])
        lvl = "innermost" if k == 0 else "outer (call site)"
        if fa != fb and a[2] != b[2]:
            return "%s frame: file and line differ" % lvl
        if fa != fb:
            if os.path.basename(fa) == os.path.basename(fb):
                return "%s frame: same basename, different directory" % lvl
            return "%s frame: file differs" % lvl
        if a[2] != b[2]:
            if a[2] == 0 or b[2] == 0:
                return "%s frame: line 0 on one side" % lvl
            return "%s frame: line differs" % lvl
    return None


def same_lines(orc, our, norm):
    return classify_lines(orc, our, norm) is None


def short(s, n=90):
    return s if len(s) <= n else s[:n // 2 - 2] + "..." + s[-(n // 2 - 1):]


def fmt_chain(chain, full=False):
    cut = (lambda s, n: s) if full else short
    return " <- ".join("%s@%s:%s" % (cut(f[0] or "??", 90), cut(f[1] or "??", 60), f[2])
                       for f in chain) or "(none)"


# ---- driver -----------------------------------------------------------------------


class Ctx:
    def __init__(self):
        self.cache = {}
        self.crashed = set()   # addresses at which llvm-symbolizer crashed

    def memo(self, name, debug, addrs):
        if name not in self.cache:
            self.cache[name] = ORACLES[name](debug, addrs, self)
        return self.cache[name]


def process_file(args, path, bid, debug):
    ctx = Ctx()
    ctx.ns = args.ns
    ctx.dbg_debug = os.path.join(args.dbg, "usr/lib/debug")
    ctx.tmp = os.path.join(args.work, "tmp-" + bid)
    os.makedirs(ctx.tmp, exist_ok=True)
    lidia = os.path.join(args.work, bid + ".lidia")
    with open(lidia, "wb") as out:
        p = subprocess.run([args.lidiagen, path, "--debug-dir", ctx.dbg_debug, "-q", "-o", "-"],
                           stdout=out, stderr=subprocess.PIPE, text=True)
    warn = p.stderr.strip()
    if p.returncode != 0:
        return {"path": path, "error": "convert failed (%d): %s" % (p.returncode, warn)}
    addrs = sample_addresses(path, args.samples)
    res = {"path": path, "bid": bid, "debug": debug, "warn": warn, "n": len(addrs), "per": {}}
    u = ours(args.lidiagen, lidia, addrs)
    for name in args.oracles:
        o = ctx.memo(name, debug, addrs)
        res["per"][name] = [(a, o.get(a, []), u.get(a, [])) for a in addrs]
    res["crashed"] = len(ctx.crashed)
    return res


def report(args, oname, results, errors, warns):
    norm = NORMALIZE_FILES[oname]
    tot = skipped = skipped_label = strict_ok = name_ok = line_ok = filled = 0
    excused = collections.Counter()      # excuse -> addresses
    ex_exc = collections.defaultdict(list)
    kinds_n = collections.Counter()
    kinds_l = collections.Counter()
    ex_n = collections.defaultdict(list)
    ex_l = collections.defaultdict(list)
    pairs = collections.Counter()
    per_file = []
    dis_path = os.path.join(args.work, "disagreements-%s.jsonl" % oname)
    with open(dis_path, "w") as dis:
        for r in results:
            if "error" in r:
                continue
            ft = fn_ok = fl_ok = 0
            for a, orc, our in r["per"][oname]:
                if no_function(orc):
                    skipped += 1
                    continue
                if not our and all(f[0].startswith(".L") for f in orc):
                    skipped += 1  # padding after a function, named by a .L label
                    skipped_label += 1
                    continue
                tot += 1
                ft += 1
                sok = names_agree_strict(orc, our)
                nok = names_agree(orc, our, args.dwz)
                filled += any(len(f) > 3 and f[3] == "gdb" for f in orc)
                if nok and not sok:
                    for e in sorted(chain_excuses(orc, our, args.dwz)):
                        excused[e] += 1
                        if len(ex_exc[e]) < args.examples:
                            ex_exc[e].append((r, a, orc, our))
                lok = same_lines(orc, our, norm)
                strict_ok += sok
                name_ok += nok
                line_ok += lok
                fn_ok += nok
                fl_ok += lok
                rec = None
                if not nok:
                    k = classify_names(orc, our, args.dwz)
                    kinds_n[k] += 1
                    if len(orc) == len(our):
                        for x, y in zip(orc, our):
                            if not frame_name_eq(x, y, args.dwz):
                                pairs[(x[0], y[0])] += 1
                    rec = {"kind_names": k}
                    if len(ex_n[k]) < args.examples:
                        ex_n[k].append((r, a, orc, our))
                if not lok:
                    k = classify_lines(orc, our, norm)
                    kinds_l[k] += 1
                    rec = rec or {}
                    rec["kind_lines"] = k
                    if len(ex_l[k]) < args.examples:
                        ex_l[k].append((r, a, orc, our))
                if rec:
                    rec.update({"file": r["path"], "debug": r["debug"], "address": "0x%x" % a,
                                "oracle": orc, "ours": our})
                    dis.write(json.dumps(rec) + "\n")
            per_file.append((r["path"], ft, fn_ok, fl_ok))

    def pct(x, n):
        return 100.0 * x / n if n else float("nan")

    def show(r, a, orc, our):
        print("         %s 0x%x" % (os.path.relpath(r["path"], args.main), a))
        print("           oracle: %s" % fmt_chain(orc))
        print("           ours:   %s" % fmt_chain(our))

    print()
    print("== %s vs %s: %d files, %d addresses, %d skipped (oracle names no function), %d compared"
          % (args.name, oname, len(results) - len(errors), tot + skipped, skipped, tot))
    crashed = sum(r.get("crashed", 0) for r in results if "error" not in r)
    if crashed and oname.startswith("llvm"):
        print("   (of the skipped, %d where llvm-symbolizer crashed: each tried alone)" % crashed)
    if skipped_label:
        print("   (of the skipped, %d where the oracle names only a .Lnnn label and ours nothing:"
              " padding after a function)" % skipped_label)
    if strict_ok != name_ok:
        print("   names agree, strict    %7d / %d = %7.3f %%" % (strict_ok, tot, pct(strict_ok, tot)))
        print("   names agree, adjusted  %7d / %d = %7.3f %%  (oracle limitations excused, below)"
              % (name_ok, tot, pct(name_ok, tot)))
    else:
        print("   names agree            %7d / %d = %7.3f %%" % (name_ok, tot, pct(name_ok, tot)))
    print("   file+line agree        %7d / %d = %7.3f %%" % (line_ok, tot, pct(line_ok, tot)))
    if filled:
        print("   (%d addresses have a name llvm left blank filled in from gdb)" % filled)
    if excused:
        print("   excused (addresses):")
        for e, c in excused.most_common():
            print("     %6d  %s" % (c, EXCUSES[e]))
            for x in ex_exc[e][:1]:
                show(*x)
    if warns:
        print("   lidiagen warnings (number of files):")
        for w, c in warns.most_common(5):
            print("     %4d  %s" % (c, w))
    worst = sorted((x for x in per_file if x[1]), key=lambda x: (x[2] / x[1], x[3] / x[1]))[:5]
    print("   worst files (names %, file+line %, addresses):")
    for p, n, a, b in worst:
        print("     %7.2f %7.2f  %5d  %s" % (pct(a, n), pct(b, n), n, os.path.relpath(p, args.main)))
    for title, kinds, exs in (("name", kinds_n, ex_n), ("file/line", kinds_l, ex_l)):
        if not kinds:
            continue
        print("   %s disagreements by kind:" % title)
        for k, c in kinds.most_common(args.kinds):
            print("     %6d  %s" % (c, k))
            for x in exs[k]:
                show(*x)
    if pairs:
        print("   most frequent name pairs (oracle -> ours):")
        for (x, y), c in pairs.most_common(8):
            print("     %6d  %s -> %s" % (c, short(x or '""', 110), short(y or '""', 110)))
    print("   all disagreements: %s" % dis_path)
    if args.summary:
        with open(args.summary, "a") as s:
            s.write(json.dumps({"package": args.name, "oracle": oname,
                                "files": len(results) - len(errors),
                                "addresses": tot + skipped, "skipped": skipped,
                                "compared": tot, "names_strict": strict_ok, "names_ok": name_ok,
                                "lines_ok": line_ok, "gdb_filled": filled,
                                "errors": len(errors)}) + "\n")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lidiagen", required=True)
    ap.add_argument("--name", required=True)
    ap.add_argument("--main", required=True)
    ap.add_argument("--dbg", required=True)
    ap.add_argument("--oracle", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--samples", type=int, default=2000)
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--examples", type=int, default=3)
    ap.add_argument("--kinds", type=int, default=10)
    ap.add_argument("--ns", action="store_true")
    ap.add_argument("--dwz", action="store_true",
                    help="the debug files use a dwz file: excuse llvm's bare DW_AT_name "
                         "where the linkage name is a DW_FORM_GNU_strp_alt")
    ap.add_argument("--summary", help="append one JSON line per oracle to this file")
    args = ap.parse_args()
    args.oracles = args.oracle.split(",")
    os.makedirs(args.work, exist_ok=True)

    files = []
    for dp, dn, fn in os.walk(args.main):
        for f in sorted(fn):
            p = os.path.join(dp, f)
            if os.path.islink(p) or not os.path.isfile(p):
                continue
            try:
                r = elf_sections_and_id(p)
            except Exception:  # noqa: BLE001
                r = None
            if r is None:
                continue
            secs, bid = r
            if not bid or ".text" not in secs:
                continue
            dbg = os.path.join(args.dbg, "usr/lib/debug/.build-id", bid[:2], bid[2:] + ".debug")
            if os.path.exists(dbg):
                files.append((p, bid, dbg))
    files.sort()
    results = []
    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as ex:
        for r in ex.map(lambda t: process_file(args, *t), files):
            results.append(r)

    errors = [r for r in results if "error" in r]
    for r in errors:
        print("%s: %s: %s" % (args.name, r["path"], r["error"]))
    warns = collections.Counter()
    for r in results:
        for w in (r.get("warn") or "").splitlines():
            warns[re.sub(r"^.*?: (\S+\.debug|\S+): ", "", w)] += 1

    for oname in args.oracles:
        report(args, oname, results, errors, warns)
    return 0


if __name__ == "__main__":
    sys.exit(main())
