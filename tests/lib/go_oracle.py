#!/usr/bin/env python3
"""Compare `lidiagen lookup --json` with Go's own answers for a Go binary.

    go_oracle.py runtime LIDIAGEN FILE.lidia ORACLE.jsonl LABEL
        ORACLE.jsonl is what tests/fixtures/go/goracle printed when run (see
        its main.go): runtime.CallersFrames chains and a runtime.FuncForPC
        sweep. Checks:
        - every physical frame of every chain: lidiagen's frames at that PC
          are the runtime's frames of the same physical frame (function,
          file, line, inlined or not, innermost first, as many), 100%;
        - the sweep: lidiagen's innermost frame at each PC is FuncForPC's
          function, file and line, at least 99.9% (every disagreement is
          listed, up to 20);
        - the oracle ran what it is meant to (deep inline chains);
        - names exactly as the runtime prints them (see NAMES below).

    go_oracle.py nm LIDIAGEN FILE.lidia NM.txt LABEL
        NM.txt is `go tool nm -size -sort address BINARY`. Every text symbol
        (T/t) is found by lidiagen at its address with its name as the
        depth-0 (last) frame, and its last byte still maps to it unless
        another symbol starts there.

    go_oracle.py addr2line GO BINARY LIDIAGEN FILE.lidia NM.txt LABEL
        `GO tool addr2line BINARY` (Go's debug/gosym) at every 37 bytes of
        every text symbol of NM.txt and at its last byte: lidiagen's depth-0
        frame is its function, lidiagen's innermost frame its file:line
        (gosym gives the pc-file/pc-line value, the innermost frame's). 100%.

    go_oracle.py symbol LIDIAGEN FILE.lidia LABEL NAME ADDR...
        lidiagen gives NAME (as the only, depth-0 frame) at every ADDR (hex).

The runtime's address convention is mirrored, not re-derived: runtime.Callers
stores return addresses (or a faulting PC plus one), and CallersFrames looks
up Frame.PC = that value minus one; the oracle prints Frame.PC, so lidiagen is
asked about Frame.PC itself. runtime.Callers returns one PC per logical frame,
inlined ones included, and CallersFrames gives one Frame per PC: the frames of
one physical frame are the run of inlined frames (Func == nil) up to and
including the next non-inlined one, and the innermost of them carries the
physical PC. lidiagen's chain at that PC must be that run.

NAMES: Go 1.21+ prints generic instantiations as F[...] (funcNameForPrint)
where its pclntab says F[go.shape.int]. The chain and sweep checks compare
names in the runtime's printed form (a file that says F[go.shape.int] still
names the right function); a separate check reports every name that is not
character for character what the runtime prints.

Output: "ok - ...", "not ok - ..." with "# " detail lines, for tests/run.sh.
"""
import json
import subprocess
import sys

MAX_SHOWN = 20


def ok(what):
    print("ok - " + what)


def not_ok(what, details=()):
    print("not ok - " + what)
    for d in details:
        for line in str(d).splitlines() or [""]:
            print("# " + line)


def note(*lines):
    for d in lines:
        for line in str(d).splitlines() or [""]:
            print("# " + line)


def for_print(name):
    """runtime.funcNameForPrint: the shape part of a generic name as [...]."""
    i = name.find("[")
    if i < 0:
        return name
    j = name.rfind("]")
    if j <= i:
        return name
    return name[:i] + "[...]" + name[j + 1:]


def lookup(lidiagen, lidia, addrs):
    """{address: [frame dict, ...]} from one `lidiagen lookup --json` run."""
    addrs = sorted(set(addrs))
    if not addrs:
        return {}, None
    p = subprocess.run([lidiagen, "lookup", "--json", lidia],
                       input="".join("%x\n" % a for a in addrs),
                       capture_output=True, text=True)
    if p.returncode != 0:
        return None, "lidiagen lookup --json %s: exit %d\n%s" % (
            lidia, p.returncode, p.stderr[-2000:])
    res = {}
    lines = p.stdout.splitlines()
    if len(lines) != len(addrs):
        return None, "lidiagen lookup printed %d lines for %d addresses" % (
            len(lines), len(addrs))
    for a, line in zip(addrs, lines):
        try:
            r = json.loads(line)
            got = int(r["address"], 16)
        except (ValueError, KeyError, TypeError) as e:
            return None, "bad lookup line %r: %s" % (line[:200], e)
        if got != a:
            return None, "lookup answered 0x%x where 0x%x was asked" % (got, a)
        res[a] = r.get("frames") or []
    return res, None


def fmt_frames(frames):
    return " <- ".join("%s @ %s:%s%s" % (f[0], f[1], f[2], " (inl)" if f[3] else "")
                       for f in frames) or "(no frame)"


def lidia_frames(frames):
    return [(f.get("function", ""), f.get("file", ""), f.get("line", 0), bool(f.get("inlined")))
            for f in frames]


# ---- runtime -----------------------------------------------------------------

def cmd_runtime(lidiagen, lidia, oracle, label):
    meta, chains, sweep = None, [], []
    with open(oracle) as fh:
        for line in fh:
            r = json.loads(line)
            if r[0] == "meta":
                meta = r
            elif r[0] == "chain":
                chains.append((r[1], r[2]))
            elif r[0] == "sweep":
                sweep.append(r[1:])
    if meta is None or not chains or not sweep:
        not_ok("%s: the oracle printed its chains and sweep" % label,
               ["meta %s, %d chains, %d sweep PCs" % (bool(meta), len(chains), len(sweep))])
        return
    slide = meta[3]
    note("%s: oracle %s/%s, load slide 0x%x" % (label, meta[1], meta[2], slide))

    # Physical frames: (scenario, index, address, [(fn, file, line, inlined)]).
    groups, bad_groups = [], []
    for name, frames in chains:
        cur = []
        for fr in frames:
            pc, entry, inlined, fn, file, line = fr
            cur.append(fr)
            if not inlined:
                if len({f[1] for f in cur}) != 1:
                    bad_groups.append("%s: frames of one physical frame with different entries: %s"
                                      % (name, cur))
                groups.append((name, len(groups), cur[0][0] - slide,
                               [(f[3], f[4], f[5], f[2]) for f in cur]))
                cur = []
        if cur:
            bad_groups.append("%s: inlined frames with no physical frame after them: %s" % (name, cur))
    if bad_groups:
        not_ok("%s: the runtime's chains split into physical frames" % label, bad_groups[:MAX_SHOWN])

    sweep_addrs = [s[0] - slide for s in sweep]
    res, err = lookup(lidiagen, lidia, [g[2] for g in groups] + sweep_addrs)
    if res is None:
        not_ok("%s: lidiagen lookup runs" % label, [err])
        return

    exact_names = {}  # (runtime name, lidia name) -> count, where they differ
    unnamed = {}  # lidia name -> count, where the runtime gives no name

    def same_name(rt, li):
        if rt == li:
            return True
        if rt == "" and li:
            # Go's funcName returns "" for a name at offset 0 of the name
            # table: the first function's. Its file and line still count.
            unnamed[li] = unnamed.get(li, 0) + 1
            return True
        if for_print(li) == rt:
            exact_names[(rt, li)] = exact_names.get((rt, li), 0) + 1
            return True
        return False

    # 1. Chains.
    nframes = sum(len(g[3]) for g in groups)
    bad = []
    for name, _, addr, want in groups:
        got = lidia_frames(res.get(addr, []))
        good = len(got) == len(want) and all(
            same_name(w[0], g[0]) and w[1] == g[1] and w[2] == g[2] and w[3] == g[3]
            for w, g in zip(want, got))
        if not good:
            bad.append("%s at 0x%x:\n  runtime:  %s\n  lidiagen: %s"
                       % (name, addr, fmt_frames(want), fmt_frames(got)))
    what = ("%s: CallersFrames chains: %d stacks, %d physical frames, %d frames, %d agree"
            % (label, len(chains), len(groups), nframes, len(groups) - len(bad)))
    if bad:
        not_ok(what, bad[:MAX_SHOWN] + (["... %d more" % (len(bad) - MAX_SHOWN)]
                                        if len(bad) > MAX_SHOWN else []))
    else:
        ok(what)

    # 2. The oracle did exercise deep inlining.
    inl = [g for g in groups if len(g[3]) > 1]
    deepest = max((len(g[3]) - 1 for g in groups), default=0)
    pkgs = {f[0].rsplit("/", 1)[-1].split(".")[0] for g in inl for f in g[3][:-1]}
    files = {f[1] for g in inl for f in g[3]}
    what = ("%s: the oracle ran inlined code: %d of %d physical frames have inlined frames,"
            " up to %d deep, %d packages, %d files"
            % (label, len(inl), len(groups), deepest, len(pkgs), len(files)))
    if len(inl) >= 8 and deepest >= 4 and len(pkgs) >= 4 and len(files) >= 5:
        ok(what)
    else:
        not_ok(what, ["want >= 8 physical frames with inlining, >= 4 deep, >= 4 packages, >= 5 files",
                      "packages: %s" % sorted(pkgs)])

    # 3. Sweep.
    agree, no_line, dis = 0, 0, []
    for (pc, entry, fn, file, line), addr in zip(sweep, sweep_addrs):
        frames = res.get(addr, [])
        got = lidia_frames(frames[:1])
        if file == "?" and line == 0:
            # No pc-file/pc-line value here (padding after the function's
            # code): the runtime answers "?", 0. Only the name is known.
            no_line += 1
            good = bool(got) and same_name(fn, got[0][0]) and got[0][2] == 0
        else:
            good = bool(got) and same_name(fn, got[0][0]) and got[0][1] == file and got[0][2] == line
        if good:
            agree += 1
        else:
            dis.append("0x%x: runtime %s @ %s:%d; lidiagen %s"
                       % (addr, fn, file, line, fmt_frames(got)))
    n = len(sweep)
    rate = 100.0 * agree / n
    what = "%s: FuncForPC sweep: %d PCs, %d agree, rate %.3f%%" % (label, n, agree, rate)
    details = ["(%d PCs with no line in the runtime: names compared, line 0 expected)" % no_line]
    if unnamed:
        details.append("(%d PCs where the runtime names no function, name offset 0: lidiagen says %s)"
                       % (sum(unnamed.values()), ", ".join(sorted(unnamed))))
    if len(unnamed) > 1:
        agree -= sum(unnamed.values())
        details.append("more than one function with no name in the runtime: not only offset 0")
    details += dis[:MAX_SHOWN]
    if len(dis) > MAX_SHOWN:
        details.append("... %d more" % (len(dis) - MAX_SHOWN))
    if agree * 1000 >= n * 999:
        ok(what)
        note(*details)
    else:
        not_ok(what, details)

    # 4. Names character for character.
    what = "%s: function names exactly as the runtime prints them" % label
    if exact_names:
        not_ok(what, ["%d names differ (frames+sweep PCs); lidiagen writes the pclntab name,"
                      " Go %s's runtime prints funcNameForPrint(name):" % (len(exact_names), meta[1])]
               + ["runtime %s, lidiagen %s (%d times)" % (rt, li, c)
                  for (rt, li), c in sorted(exact_names.items())[:MAX_SHOWN]])
    else:
        ok(what)


# ---- nm ----------------------------------------------------------------------

def norm(name):
    """A text symbol's name as the pclntab and runtime have it: without the
    .abi0 of an assembly function's ELF symbol, generic shapes as [...]."""
    if name.endswith(".abi0"):
        name = name[:-5]
    return for_print(name)


def cmd_nm(lidiagen, lidia, nm_txt, label):
    syms = []
    with open(nm_txt) as fh:
        for line in fh:
            parts = line.split(None, 3)
            if len(parts) < 4:
                continue
            addr, size, typ, name = parts
            if typ not in ("T", "t"):
                continue
            syms.append((int(addr, 16), int(size), name.rstrip("\n")))
    if not syms:
        not_ok("%s: go tool nm lists text symbols" % label)
        return
    starts = {}
    for a, s, nme in syms:
        starts.setdefault(a, []).append(nme)
    checked, markers = [], []
    for a, s, nme in syms:
        if s == 0:
            markers.append(nme)  # runtime.text, runtime.etext: labels, no code
        else:
            checked.append((a, s, nme))
    addrs = [a for a, _, _ in checked] + [a + s - 1 for a, s, _ in checked]
    res, err = lookup(lidiagen, lidia, addrs)
    if res is None:
        not_ok("%s: lidiagen lookup runs" % label, [err])
        return
    renamed = {}  # (nm name, lidia name) -> count, equal only once normalized

    def same(nm_name, li):
        if li == nm_name:
            return True
        if li is not None and norm(li) == norm(nm_name):
            renamed[(nm_name, li)] = renamed.get((nm_name, li), 0) + 1
            return True
        return False

    bad_start, bad_end, ends_checked = [], [], 0
    for a, s, nme in checked:
        got = res.get(a, [])
        outer = got[-1]["function"] if got else None
        if not same(nme, outer) and not any(same(o, outer) for o in starts.get(a, ())):
            bad_start.append("0x%x %s (size %d): lidiagen %s" % (a, nme, s, outer))
        last = a + s - 1
        if last != a and last in starts:
            continue  # another symbol starts at the last byte
        ends_checked += 1
        got = res.get(last, [])
        outer = got[-1]["function"] if got else None
        if not same(nme, outer):
            bad_end.append("0x%x %s (size %d): last byte 0x%x: lidiagen %s"
                           % (a, nme, s, last, outer))
    what = ("%s: every go tool nm text symbol at its start: %d symbols, %d found"
            % (label, len(checked), len(checked) - len(bad_start)))
    if bad_start:
        not_ok(what, bad_start[:MAX_SHOWN] + (["... %d more" % (len(bad_start) - MAX_SHOWN)]
                                              if len(bad_start) > MAX_SHOWN else []))
    else:
        ok(what)
        note("(%d zero-size labels not looked up: %s)" % (len(markers), " ".join(markers[:6])))
    if renamed:  # after the check it is about
        kinds = {}
        for (nm_name, li), c in renamed.items():
            k = ".abi0 suffix" if nm_name.endswith(".abi0") else "generic/array name as [...]"
            kinds.setdefault(k, []).append("%s -> %s" % (nm_name, li))
        note("names that differ only as Go's runtime prints them (the pclntab's name, which"
             " lidiagen gives, vs the ELF symbol's): "
             + "; ".join("%d with %s (e.g. %s)" % (len(v), k, v[0]) for k, v in sorted(kinds.items())))
    what = ("%s: every go tool nm text symbol's last byte: %d checked, %d agree"
            % (label, ends_checked, ends_checked - len(bad_end)))
    if bad_end:
        not_ok(what, bad_end[:MAX_SHOWN] + (["... %d more" % (len(bad_end) - MAX_SHOWN)]
                                            if len(bad_end) > MAX_SHOWN else []))
    else:
        ok(what)


# ---- addr2line ----------------------------------------------------------------

def read_nm_text(nm_txt):
    syms = []
    with open(nm_txt) as fh:
        for line in fh:
            parts = line.split(None, 3)
            if len(parts) == 4 and parts[2] in ("T", "t") and int(parts[1]) > 0:
                syms.append((int(parts[0], 16), int(parts[1]), parts[3].rstrip("\n")))
    return syms


def cmd_addr2line(go, binary, lidiagen, lidia, nm_txt, label, step=37):
    """`go tool addr2line` (debug/gosym: the physical function, and the
    pc-file/pc-line value at the PC, which is the innermost frame's) against
    lidiagen's depth-0 name and innermost file and line, at every step bytes
    of every text symbol and at its last byte."""
    pcs = set()
    for a, s, _ in read_nm_text(nm_txt):
        pcs.update(range(a, a + s, step))
        pcs.add(a + s - 1)
    pcs = sorted(pcs)
    p = subprocess.run([go, "tool", "addr2line", binary], input="".join("0x%x\n" % a for a in pcs),
                       capture_output=True, text=True)
    out = p.stdout.splitlines()
    if p.returncode != 0 or len(out) != 2 * len(pcs):
        not_ok("%s: go tool addr2line runs" % label,
               ["exit %d, %d lines for %d PCs" % (p.returncode, len(out), len(pcs)), p.stderr[-1000:]])
        return
    res, err = lookup(lidiagen, lidia, pcs)
    if res is None:
        not_ok("%s: lidiagen lookup runs" % label, [err])
        return
    agree, no_line, inl, dis = 0, 0, 0, []
    for i, a in enumerate(pcs):
        fn = out[2 * i]
        file, _, line = out[2 * i + 1].rpartition(":")
        line = int(line) if line.isdigit() else 0
        got = res.get(a, [])
        if len(got) > 1:
            inl += 1
        if not got:
            good = False
        elif file in ("?", "") or line == 0:
            no_line += 1
            good = norm(got[-1]["function"]) == norm(fn) and got[0].get("line", 0) == 0
        else:
            good = (norm(got[-1]["function"]) == norm(fn) and got[0].get("file") == file
                    and got[0].get("line") == line)
        if good:
            agree += 1
        else:
            dis.append("0x%x: addr2line %s @ %s:%d; lidiagen %s"
                       % (a, fn, file, line, fmt_frames(lidia_frames(got))))
    n = len(pcs)
    what = ("%s: go tool addr2line at every %d bytes: %d PCs (%d in inlined code), %d agree, rate %.3f%%"
            % (label, step, n, inl, agree, 100.0 * agree / n))
    details = ["(%d PCs with no line in addr2line: names compared, line 0 expected)" % no_line]
    details += dis[:MAX_SHOWN] + (["... %d more" % (len(dis) - MAX_SHOWN)] if len(dis) > MAX_SHOWN else [])
    if not dis:
        ok(what)
        note(*details)
    else:
        not_ok(what, details)


# ---- symbol ------------------------------------------------------------------

def cmd_symbol(lidiagen, lidia, label, name, addrs):
    addrs = [int(a, 16) for a in addrs]
    res, err = lookup(lidiagen, lidia, addrs)
    what = "%s: %s at %s" % (label, name, " ".join("0x%x" % a for a in addrs))
    if res is None:
        not_ok(what, [err])
        return
    bad = []
    for a in addrs:
        got = res.get(a, [])
        if len(got) != 1 or got[0].get("function") != name or got[0].get("inlined"):
            bad.append("0x%x: lidiagen %s" % (a, fmt_frames(lidia_frames(got))))
    if bad:
        not_ok(what, bad)
    else:
        ok(what)


def main(argv):
    if len(argv) >= 6 and argv[1] == "runtime":
        cmd_runtime(*argv[2:6])
    elif len(argv) >= 6 and argv[1] == "nm":
        cmd_nm(*argv[2:6])
    elif len(argv) >= 8 and argv[1] == "addr2line":
        cmd_addr2line(*argv[2:8])
    elif len(argv) >= 7 and argv[1] == "symbol":
        cmd_symbol(argv[2], argv[3], argv[4], argv[5], argv[6:])
    else:
        sys.stderr.write(__doc__)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
