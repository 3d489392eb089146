#!/usr/bin/env python3
"""Comparisons behind tests/t_golden.sh, t_writer_pyroscope.sh and t_oracle_names.sh.

Each subcommand prints TAP-like lines ("ok - ...", "not ok - ..." with "# ..."
detail lines) and exits 0 unless it could not run at all (then 1, with the
reason printed as a "not ok" line too).

  lidiacheck.py golden LIDIAGEN NAME LOOKUPS LIDIA
      lidiagen's reader on a file Pyroscope wrote must give, for every
      address of LOOKUPS, the (function, file) frames Pyroscope's reader gave.

  lidiacheck.py pyroscope [--oracle SYMBOLIZER OBJ] LIDIAGEN PYROSCOPE_READER LABEL LIDIA ELF...
      Pyroscope's reader (PYROSCOPE_READER --json LIDIA ADDR...) must accept LIDIA and give the
      frames lidiagen's reader gives at addresses taken from the ELF files'
      own symbol tables (start, quarter points, end-1 and end of every
      function symbol, and a sweep through its bytes). With --oracle, the
      frames Pyroscope's reader gives must also be those llvm-symbolizer
      (--inlines, on OBJ: the input, or its debug file) gives there, so that
      two readers agreeing on a wrong name cannot pass (see oracle_frames).

  lidiacheck.py oracle [--no-demangle] [--go-tool GO] LIDIAGEN SYMBOLIZER LABEL LIDIA SYMBOLS_ELF ORACLE_ELF
      lidiagen's outermost frame must name the function llvm-symbolizer names
      (--no-inlines, on ORACLE_ELF, a copy without DWARF) at addresses sampled
      in every sized STT_FUNC symbol of SYMBOLS_ELF (.symtab, else .dynsym).
      For a Go binary the oracle's symbol names are first turned into the
      runtime's names (see go_runtime_name), and with --go-tool, Go's own
      `go tool addr2line` on SYMBOLS_ELF is a second, strict oracle.
"""
import bisect
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import elfsyms  # noqa: E402

MAX_SHOWN = 8


def tap(ok, what, details=()):
    print(("ok - " if ok else "not ok - ") + what)
    for d in details:
        for line in str(d).splitlines() or [""]:
            print("# " + line)


def note(*lines):
    for d in lines:
        for line in str(d).splitlines() or [""]:
            print("# " + line)


class RunError(Exception):
    pass


def lidiagen_lookup(lidiagen, lidia, addrs, stdin=False):
    """[(addr, [(function, file), ...])] from `lidiagen lookup --json`.

    Addresses go on the command line, or on standard input with stdin=True
    (for long lists)."""
    hexes = ["0x%x" % a for a in addrs]
    if stdin:
        p = subprocess.run([lidiagen, "lookup", "--json", lidia], input="\n".join(hexes) + "\n",
                           capture_output=True, text=True, errors="surrogateescape")
    else:
        p = subprocess.run([lidiagen, "lookup", "--json", lidia] + hexes, capture_output=True,
                           text=True, errors="surrogateescape", stdin=subprocess.DEVNULL)
    if p.returncode != 0:
        raise RunError("lidiagen lookup --json %s exited %d: %s" % (lidia, p.returncode, p.stderr.strip()[:500]))
    out = []
    lines = [l for l in p.stdout.splitlines() if l.strip()]
    if len(lines) != len(addrs):
        raise RunError("lidiagen lookup printed %d lines for %d addresses" % (len(lines), len(addrs)))
    for a, line in zip(addrs, lines):
        try:
            obj = json.loads(line)
        except ValueError as e:
            raise RunError("lidiagen lookup: not JSON (%s): %r" % (e, line[:200]))
        if int(obj.get("address", "-1"), 16) != a:
            raise RunError("lidiagen lookup: answer for %s where 0x%x was asked" % (obj.get("address"), a))
        out.append((a, [(f.get("function", ""), f.get("file", "")) for f in obj.get("frames", [])]))
    return out


def fmt_frames(frames):
    if not frames:
        return "(no frame)"
    return " | ".join("%s @ %s" % (fn, fl) for fn, fl in frames)


def short(name, n=70):
    return name if len(name) <= n else name[:n - 3] + "..."


def fmt_diff(addr, who_a, a, who_b, b):
    """One line on how two frame lists differ: just the differing files when
    the functions agree, else both lists."""
    if [f for f, _ in a] == [f for f, _ in b]:
        parts = ["frame %d (0 = innermost) of %d, %s: %s file %r, %s file %r"
                 % (k, len(a), short(fa), who_a, la, who_b, lb)
                 for k, ((fa, la), (_, lb)) in enumerate(zip(a, b)) if la != lb]
        return "0x%x: %s" % (addr, "; ".join(parts))
    return "0x%x: %s %s; %s %s" % (addr, who_a, fmt_frames(a), who_b, fmt_frames(b))


# ---- golden -----------------------------------------------------------------

def parse_lookups(path):
    """Pyroscope's answers: [(addr, [(function, file), ...])]; LINE dropped."""
    out = []
    with open(path, encoding="utf-8", errors="surrogateescape") as f:
        for n, line in enumerate(f, 1):
            line = line.rstrip("\n")
            if not line.strip():
                continue
            parts = line.split(" | ")
            frames = []
            for fr in parts[1:]:
                fn, sep, rest = fr.rpartition(" @ ")
                if not sep:
                    raise RunError("%s:%d: frame without ' @ ': %r" % (path, n, fr))
                file_, _, _line = rest.rpartition(":")
                frames.append((fn, file_))
            out.append((int(parts[0], 16), frames))
    return out


def cmd_golden(lidiagen, name, lookups, lidia):
    want = parse_lookups(lookups)
    got = lidiagen_lookup(lidiagen, lidia, [a for a, _ in want])
    bad = [(a, w, g) for (a, w), (_, g) in zip(want, got) if w != g]
    what = ("golden %s: lidiagen's reader gives Pyroscope's frames at %d addresses (%d with frames)"
            % (name, len(want), sum(1 for _, w in want if w)))
    details = [fmt_diff(a, "Pyroscope", w, "lidiagen", g) for a, w, g in bad[:MAX_SHOWN]]
    if bad:
        details.insert(0, "%d of %d addresses differ (function, file); first ones:" % (len(bad), len(want)))
    tap(not bad, what, details)


# ---- pyroscope ---------------------------------------------------------------

DENSE_TOTAL = 20000  # about how many addresses a sweep of all functions may add


def symbol_addresses(paths):
    """Addresses around and inside every function symbol of the ELF files
    (both tables): its start, quarter points, last byte, end and the byte
    before it, plus a sweep through its bytes at a stride that keeps the
    total near DENSE_TOTAL (every byte for small programs)."""
    addrs = {0, 1}
    funcs = set()
    for p in paths:
        try:
            elf = elfsyms.Elf(p)
        except (elfsyms.NotElf, OSError):
            continue
        for table in ("symtab", "dynsym"):
            for s in elf.symbols(table):
                if s.type not in (elfsyms.STT_FUNC, elfsyms.STT_GNU_IFUNC) or not elfsyms.defined(s):
                    continue
                funcs.add((s.value, s.size))
    total = sum(n for _, n in funcs)
    stride = max(1, -(-total // DENSE_TOTAL))
    for a, n in funcs:
        addrs.update((a, a + n))
        if n:
            addrs.update((a + n // 4, a + n // 2, a + 3 * n // 4, a + n - 1))
            addrs.update(range(a, a + n, stride))
        if a:
            addrs.add(a - 1)
    return sorted(addrs)


def symbolizer_frames(symbolizer, obj, addrs):
    """Per address, ([(function, file), ...] innermost first, from_symbol)
    from llvm-symbolizer --inlines; frames are [] where it names no function.
    from_symbol: its one frame comes from no DWARF subprogram (no start file
    or line): the name is the symbol's, the file that of a line-table row."""
    args = [symbolizer, "--obj=" + obj, "--inlines", "--output-style=JSON"]
    p = subprocess.run(args, input="".join("0x%x\n" % a for a in addrs), capture_output=True,
                       text=True, errors="surrogateescape")
    if p.returncode != 0:
        raise RunError("%s exited %d: %s" % (" ".join(args), p.returncode, p.stderr.strip()[:500]))
    out = []
    for line in p.stdout.splitlines():
        if not line.strip():
            continue
        frames = []
        syms = json.loads(line).get("Symbol") or []
        for sym in syms:
            fn = sym.get("FunctionName", "")
            fl = sym.get("FileName", "")
            frames.append(("" if fn in ("??", "<invalid>") else fn, "" if fl == "??" else fl))
        from_symbol = len(syms) == 1 and not syms[0].get("StartFileName") and not syms[0].get("StartLine")
        out.append((frames if any(fn for fn, _ in frames) else [], from_symbol))
    if len(out) != len(addrs):
        raise RunError("llvm-symbolizer gave %d answers for %d addresses" % (len(out), len(addrs)))
    return out


def go_dwarf_frames(frames):
    """A Go binary's DWARF frames as its pclntab (and so Pyroscope) names
    them: function names by go_runtime_name's linker rules, and the "./" that
    go1.19's linker puts before a -trimpath file name in DWARF (pclntab has
    "internal/cpu/cpu.go" where DWARF has "./internal/cpu/cpu.go") dropped."""
    return [(go_runtime_name(fn)[0], fl[2:] if fl.startswith("./") else fl) for fn, fl in frames]


def names_only(frames):
    return [(fn, "") for fn, _ in frames]


def oracle_frames(symbolizer, obj, label, addrs, theirs):
    """Pyroscope's answers (theirs) against llvm-symbolizer's on obj: the
    chain of (function, file) frames must be the same wherever the oracle
    names a function. Counted apart: addresses where it names none, and
    those whose nearest symbol in obj is no sized function (a zero-size
    label such as _init, which llvm-symbolizer stretches up to the address,
    or an object): lidia files leave such symbols out (spec section 4).
    Compared by names alone, counted: a function no DWARF subprogram
    describes (assembly), whose file llvm-symbolizer takes from a line-table
    row that an earlier subprogram claimed and lidia does not (spec sections
    5.3, 5.4); and in Go, an autogenerated wrapper, where pclntab records the
    method inlined into it and Go's DWARF does not: the outermost frame."""
    elf = elfsyms.Elf(obj)
    go_binary = is_go(elf)
    model = OracleModel(elf)
    want = symbolizer_frames(symbolizer, obj, addrs)
    compared, unnamed, excluded, bad = 0, [], {}, []
    by_name = {"assembly": 0, "wrapper": 0}
    for (a, t), (w, from_symbol) in zip(theirs, want):
        if go_binary:
            w = go_dwarf_frames(w)
        if not w:
            unnamed.append((a, t))
            continue
        group = model.nearest(a)
        if group and (any(s.type not in FUNC_TYPES for s in group) or all(s.size == 0 for s in group)):
            excluded.setdefault(group[0].name, []).append(a)
            continue
        compared += 1
        if from_symbol and len(t) == 1 and w[0][1] and not t[0][1]:
            by_name["assembly"] += 1
            w, t = names_only(w), names_only(t)
        elif go_binary and len(w) == 1 and len(t) > 1 and t[-1][1] == "<autogenerated>":
            by_name["wrapper"] += 1
            w, t = names_only(w), names_only(t[-1:])
        if t != w:
            bad.append((a, w, t))
    what = ("writer %s: Pyroscope's frames (function, file, inlines) equal llvm-symbolizer's at %d"
            " addresses" % (label, compared))
    details, seen = [], set()
    for a, w, t in bad:
        key = tuple(f for f, _ in w)
        if key in seen:
            continue
        seen.add(key)
        details.append(fmt_diff(a, "llvm-symbolizer", w, "Pyroscope", t))
        if len(details) == MAX_SHOWN:
            break
    if bad:
        details.insert(0, "%d of %d addresses differ; one example per frame chain:" % (len(bad), compared))
    if compared == 0:
        details.append("no address was compared")
    tap(not bad and compared > 0, what, details)
    if unnamed:
        named = [a for a, t in unnamed if t]
        note("%s: llvm-symbolizer names no function at %d addresses (Pyroscope names %d of them%s)"
             % (label, len(unnamed), len(named), ", e.g. 0x%x" % named[0] if named else ""))
    if by_name["assembly"]:
        note("%s: names alone at %d addresses of functions no DWARF subprogram describes"
             % (label, by_name["assembly"]))
    if by_name["wrapper"]:
        note("%s: outermost name alone at %d addresses of Go's autogenerated wrappers"
             % (label, by_name["wrapper"]))
    for name, lst in sorted(excluded.items()):
        note("%s: not compared at %d addresses whose nearest symbol, %s, is no sized function, e.g. 0x%x"
             % (label, len(lst), name, lst[0]))
    if go_binary:
        note("%s: Go binary: DWARF names and files mapped to pclntab's (go_dwarf_frames)" % label)


def cmd_pyroscope(lidiagen, pyroscope, label, lidia, elfs, oracle=None):
    # One run of the reader: it validates the header and every table's CRC
    # before it looks anything up, and exits 1 when it rejects the file.
    addrs = symbol_addresses(elfs)
    p = subprocess.run([sys.executable, pyroscope, "--json", lidia] + ["0x%x" % a for a in addrs],
                       capture_output=True, text=True, errors="surrogateescape")
    accepted = p.returncode == 0
    tap(accepted, "writer %s: Pyroscope's reader accepts the file (CRCs checked)" % label,
        [] if accepted else ["Pyroscope's reader exited %d: %s" % (p.returncode, p.stderr.strip())])
    what = "writer %s: Pyroscope's frames equal lidiagen's at %d symbol addresses" % (label, len(addrs))
    if not accepted:
        tap(False, what, ["not compared: Pyroscope's reader rejects the file"])
        if oracle:
            tap(False, "writer %s: Pyroscope's frames equal llvm-symbolizer's" % label,
                ["not compared: Pyroscope's reader rejects the file"])
        return
    theirs = [(int(o["addr"], 16), [(f["function"], f["file"]) for f in o["frames"]])
              for o in json.loads(p.stdout)]
    if [a for a, _ in theirs] != addrs:
        raise RunError("Pyroscope's reader answered %d addresses for %d asked" % (len(theirs), len(addrs)))
    ours = lidiagen_lookup(lidiagen, lidia, addrs, stdin=True)
    bad = [(a, t, o) for (a, t), (_, o) in zip(theirs, ours) if t != o]
    framed = sum(1 for _, o in ours if o)
    # One example per function whose frames differ, up to MAX_SHOWN.
    details, seen = [], set()
    for a, t, o in bad:
        key = tuple(f for f, _ in t)
        if key in seen:
            continue
        seen.add(key)
        details.append(fmt_diff(a, "Pyroscope", t, "lidiagen", o))
        if len(details) == MAX_SHOWN:
            break
    if bad:
        details.insert(0, "%d of %d addresses differ; one example per frame chain:" % (len(bad), len(addrs)))
    tap(not bad, what, details)
    note("%s: %d of %d addresses have frames" % (label, framed, len(addrs)))
    if oracle:
        oracle_frames(oracle[0], oracle[1], label, addrs, theirs)


# ---- oracle -------------------------------------------------------------------

# The symbol types llvm-symbolizer names an address by (SymbolizableObjectFile::addSymbol).
ORACLE_TYPES = (elfsyms.STT_NOTYPE, elfsyms.STT_FUNC, elfsyms.STT_OBJECT, elfsyms.STT_GNU_IFUNC)
FUNC_TYPES = (elfsyms.STT_FUNC, elfsyms.STT_GNU_IFUNC)


class OracleModel:
    """Which symbol llvm-symbolizer names an address by, from its rules: the
    symbols of .symtab (of .dynsym when .symtab has none) of types NOTYPE,
    FUNC, OBJECT and IFUNC in a real section; per address only those of the
    largest size; an address takes the group at the greatest address not
    above it, and no name when that group is sized and ends before it."""

    def __init__(self, elf):
        syms = [s for s in elf.symbols("symtab")] or elf.symbols("dynsym")
        keep = [s for s in syms if s.type in ORACLE_TYPES and s.shndx != elfsyms.SHN_UNDEF
                and (s.shndx < elfsyms.SHN_LORESERVE or s.shndx == elfsyms.SHN_XINDEX)]
        groups = {}
        for s in keep:
            groups.setdefault(s.value, []).append(s)
        self.addrs = sorted(groups)
        self.groups = {}
        for a, g in groups.items():
            top = max(s.size for s in g)
            self.groups[a] = [s for s in g if s.size == top]

    def nearest(self, addr):
        i = bisect.bisect_right(self.addrs, addr) - 1
        if i < 0:
            return None
        return self.groups[self.addrs[i]]


def run_symbolizer(symbolizer, obj, addrs, demangle):
    args = [symbolizer, "--obj=" + obj, "--no-inlines", "--output-style=JSON"]
    if not demangle:
        args.append("--no-demangle")
    p = subprocess.run(args, input="".join("0x%x\n" % a for a in addrs), capture_output=True,
                       text=True, errors="surrogateescape")
    if p.returncode != 0:
        raise RunError("%s exited %d: %s" % (" ".join(args), p.returncode, p.stderr.strip()[:500]))
    names = []
    for line in p.stdout.splitlines():
        if not line.strip():
            continue
        obj_ = json.loads(line)
        sym = obj_.get("Symbol") or [{}]
        fn = sym[0].get("FunctionName", "")
        names.append("" if fn in ("", "??", "<invalid>") else fn)
    if len(names) != len(addrs):
        raise RunError("llvm-symbolizer gave %d answers for %d addresses" % (len(names), len(addrs)))
    return names


def go_runtime_name(name):
    """The name Go's runtime (and its pclntab, and so Pyroscope) gives the
    function whose linker symbol is `name`, by two rules of Go's linker
    (go1.19 cmd/link/internal/ld): the ELF symbol of an ABI0 (assembly)
    function carries a ".abi0" suffix that the function's name has not; and
    pclntab writes everything from the first '[' to the last ']' of a name
    as "[...]" (generic instantiations, array types in type..eq functions).
    Returns (name, which rules applied)."""
    rules = []
    if name.endswith(".abi0"):
        name = name[:-len(".abi0")]
        rules.append(".abi0")
    i, j = name.find("["), name.rfind("]")
    if 0 <= i < j and name[i:j + 1] != "[...]":
        name = name[:i] + "[...]" + name[j + 1:]
        rules.append("[...]")
    return name, rules


def run_go_addr2line(go, binary, addrs):
    p = subprocess.run([go, "tool", "addr2line", binary], input="".join("0x%x\n" % a for a in addrs),
                       capture_output=True, text=True, errors="surrogateescape")
    if p.returncode != 0:
        raise RunError("go tool addr2line %s exited %d: %s" % (binary, p.returncode, p.stderr.strip()[:500]))
    lines = p.stdout.splitlines()
    if len(lines) != 2 * len(addrs):
        raise RunError("go tool addr2line gave %d lines for %d addresses" % (len(lines), len(addrs)))
    return ["" if lines[2 * k] == "?" else lines[2 * k] for k in range(len(addrs))]


def is_go(elf):
    return bool(elf.section(".gopclntab") or elf.section(".note.go.buildid"))


def sample_points(start, size):
    return sorted({start, start + size // 4, start + size // 2, start + 3 * size // 4, start + size - 1})


def cmd_oracle(lidiagen, symbolizer, label, lidia, symbols_elf, oracle_elf, demangle=True, go=None):
    elf = elfsyms.Elf(symbols_elf)
    go_binary = is_go(elf)
    table, funcs = elfsyms.function_symbols(elf)
    model = OracleModel(elfsyms.Elf(oracle_elf))
    empty_mode = not funcs
    if empty_mode:
        # No function symbol at all (a stripped executable): every executable
        # byte must stay unnamed by both.
        addrs = set()
        for s in elf.exec_sections():
            addrs.update(s.addr + s.size * k // 32 for k in range(32))
        addrs = sorted(addrs)
    else:
        addrs = sorted({a for s in funcs for a in sample_points(s.value, s.size)})
    oracle = run_symbolizer(symbolizer, oracle_elf, addrs, demangle)
    # Raw names, only to explain a mismatch (Go names are not mangled).
    raw = run_symbolizer(symbolizer, oracle_elf, addrs, False) if demangle and not go_binary else oracle
    ours = lidiagen_lookup(lidiagen, lidia, addrs, stdin=True)

    normalized = {}
    if go_binary:
        for k, name in enumerate(oracle):
            oracle[k], rules = go_runtime_name(name)
            for r in rules:
                normalized[r] = normalized.get(r, 0) + 1

    compared = agree = 0
    no_name, no_name_named = [], 0
    excluded = {}
    bad = []
    # At an excluded address lidiagen must still name the function around it
    # (spec section 4): the innermost sized function symbol covering it, by
    # the name the oracle gives at that symbol's start.
    name_at = dict(zip(addrs, oracle))
    starts = sorted((s.value, -s.size, s.index, s) for s in funcs)
    enclosing_bad, enclosing_ok = [], 0

    def enclosing(a):
        best = None
        for v, _neg, _idx, s in starts[:bisect.bisect_right(starts, (a, 1))]:
            if v <= a < v + s.size:
                best = s
        return best
    for a, want, want_raw, (_, frames) in zip(addrs, oracle, raw, ours):
        got = frames[-1][0] if frames else ""
        group = model.nearest(a)
        if empty_mode:
            compared += 1
            if got == want:
                agree += 1
            else:
                bad.append((a, want, want_raw, got, group))
            continue
        key = None
        if group and any(s.type not in FUNC_TYPES for s in group):
            s = next(s for s in group if s.type not in FUNC_TYPES)
            key = "%s %s" % (elfsyms.TYPE_NAMES.get(s.type, s.type), s.name)
        elif group and all(s.size == 0 for s in group):
            # A zero-size FUNC (an assembler label) is the nearest symbol:
            # llvm-symbolizer stretches it up to the address; lidia files
            # drop zero-size symbols (spec section 4).
            key = "zero-size FUNC %s" % group[0].name
        if key:
            excluded.setdefault(key, []).append(a)
            outer = enclosing(a)
            want_outer = name_at.get(outer.value, "") if outer else ""
            if want_outer:
                if got == want_outer:
                    enclosing_ok += 1
                else:
                    enclosing_bad.append("0x%x (after %s): lidiagen %r, the enclosing function is %r"
                                         % (a, key, got, want_outer))
            continue
        if not want:
            no_name.append(a)
            no_name_named += bool(got)
            continue
        compared += 1
        if got == want:
            agree += 1
        else:
            bad.append((a, want, want_raw, got, group))

    nfuncs = len({(s.value, s.size) for s in funcs})
    rate = 100.0 * agree / compared if compared else 0.0
    if empty_mode:
        what = ("names %s: no function symbol in the ELF; %d addresses in executable sections,"
                " %.1f%% agree (no name)" % (label, compared, rate))
    else:
        what = ("names %s: %d functions (%d %s symbols), %d addresses compared, %.1f%% agree"
                % (label, nfuncs, len(funcs), table, compared, rate))
    details = []
    for a, want, want_raw, got, group in bad[:MAX_SHOWN]:
        why = ""
        if got and got == want_raw and want != want_raw:
            why = " (lidiagen gives the mangled name; the oracle demangles, spec section 5)"
        elif group and len(group) > 1 and got in {s.name for s in group}:
            why = " (aliases at 0x%x: %s)" % (group[0].value, ", ".join(s.name for s in group))
        details.append("0x%x: llvm-symbolizer %r, lidiagen %r%s" % (a, want, got, why))
    if bad:
        details.insert(0, "%d of %d addresses disagree; first ones:" % (len(bad), compared))
    if not empty_mode and compared == 0:
        details.append("no address was compared")
    tap(not bad and (compared > 0 or empty_mode), what, details)
    if not empty_mode:
        note("%s: the oracle gives no name at %d addresses%s; %d addresses excluded"
             % (label, len(no_name),
                " (lidiagen names %d of them; e.g. %s)" % (no_name_named, ", ".join("0x%x" % a for a in no_name[:4]))
                if no_name else "", sum(len(v) for v in excluded.values())))
    for key, lst in sorted(excluded.items()):
        note("%s: excluded %d addresses whose nearest symbol is %s, which llvm-symbolizer names"
             " there but which is no sized function, e.g. 0x%x" % (label, len(lst), key, lst[0]))
    if excluded:
        n = sum(len(v) for v in excluded.values())
        tap(not enclosing_bad, "names %s: at the %d excluded addresses lidiagen names the enclosing"
            " function (%d checked)" % (label, n, enclosing_ok + len(enclosing_bad)),
            enclosing_bad[:MAX_SHOWN])
    for rule, n in sorted(normalized.items()):
        note("%s: Go binary: %d oracle names rewritten by the linker rule '%s' (see go_runtime_name)"
             % (label, n, rule))
    if go_binary and go:
        names = run_go_addr2line(go, symbols_elf, addrs)
        compared = agree = unnamed = 0
        bad = []
        for a, want, (_, frames) in zip(addrs, names, ours):
            got = frames[-1][0] if frames else ""
            if not want:
                unnamed += 1
                continue
            compared += 1
            if got == want:
                agree += 1
            else:
                bad.append("0x%x: go tool addr2line %r, lidiagen %r" % (a, want, got))
        if compared == 0 and elf.type == 3:
            # go1.19's debug/gosym takes the text start from a PIE's pclntab
            # as stored, 0 until the dynamic loader relocates it: it names
            # nothing in a PIE. Not lidiagen's business.
            print("skip - names %s (go tool addr2line): it names no address of a Go PIE"
                  " (unrelocated pclntab), so it cannot serve as oracle here" % label)
            return
        rate = 100.0 * agree / compared if compared else 0.0
        details = bad[:MAX_SHOWN]
        if bad:
            details.insert(0, "%d of %d addresses disagree; first ones:" % (len(bad), compared))
        tap(not bad and compared > 0, "names %s (go tool addr2line): %d addresses compared, %.1f%% agree"
            % (label, compared, rate), details)
        if unnamed:
            note("%s: go tool addr2line gives no name for %d addresses" % (label, unnamed))


def main(argv):
    if not argv:
        sys.stderr.write(__doc__)
        return 2
    cmd, args = argv[0], argv[1:]
    try:
        if cmd == "golden" and len(args) == 4:
            cmd_golden(*args)
        elif cmd == "pyroscope":
            oracle = None
            if args[:1] == ["--oracle"] and len(args) > 2:
                oracle, args = (args[1], args[2]), args[3:]
            if len(args) < 5:
                sys.stderr.write(__doc__)
                return 2
            cmd_pyroscope(args[0], args[1], args[2], args[3], args[4:], oracle)
        elif cmd == "oracle":
            demangle, go = True, None
            while args and args[0].startswith("--"):
                if args[0] == "--no-demangle":
                    demangle, args = False, args[1:]
                elif args[0] == "--go-tool" and len(args) > 1:
                    go, args = args[1], args[2:]
                else:
                    break
            if len(args) != 6:
                sys.stderr.write(__doc__)
                return 2
            cmd_oracle(*args, demangle=demangle, go=go)
        else:
            sys.stderr.write(__doc__)
            return 2
    except Exception as e:  # noqa: BLE001 - any failure must show as "not ok"
        label = args[1] if cmd == "golden" else args[2] if len(args) > 2 else "?"
        kind = "" if isinstance(e, RunError) else type(e).__name__ + ": "
        what = {"oracle": "names", "pyroscope": "writer"}.get(cmd, cmd)
        tap(False, "%s %s: comparison ran" % (what, label), [kind + str(e)])
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
