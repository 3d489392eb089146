#!/usr/bin/env python3
"""Compare `lidiagen lookup --json` with Go's runtime at every byte of one function.

    go_bigfunc.py LIDIAGEN FILE.lidia ORACLE.jsonl LABEL FUNC SHAPE

ORACLE.jsonl is what tests/fixtures/go/bigfunc printed for FUNC's bytes:
runtime.FuncForPC(pc) (the innermost function there, inlined or not) and its
FileLine(pc), one "sweep" line a byte. Checks, at every byte:
  - lidiagen's innermost frame is the runtime's function, file and line
    (where the runtime has no line, "?" 0, lidiagen's line is 0);
  - lidiagen's outermost frame is FUNC;
and, SHAPE being "yes", that the oracle has the shape of issue 14 (FUNC's
first byte is inlined code: every node of its inline tree has parentPc 0,
and the runtime's inline unwinder would repeat that node's frame without
end), and that lidiagen gives at each inlined byte the frames the table
does say: the innermost one, then FUNC at an unknown line (0), no other.
Output: "ok - ...", "not ok - ..." with "# " detail lines.
"""
import json
import subprocess
import sys

MAX_SHOWN = 20


def for_print(name):
    i, j = name.find("["), name.rfind("]")
    return name if i < 0 or j <= i else name[:i] + "[...]" + name[j + 1:]


def report(good, what, details):
    print(("ok - " if good else "not ok - ") + what)
    for d in details[:MAX_SHOWN]:
        print("# " + d)
    if len(details) > MAX_SHOWN:
        print("# ... %d more" % (len(details) - MAX_SHOWN))


def main(lidiagen, lidia, oracle, label, func, shape):
    sweep = []
    with open(oracle) as fh:
        for line in fh:
            r = json.loads(line)
            if r[0] == "sweep":
                sweep.append(r[1:])
    if not sweep:
        report(False, "%s: the oracle printed its sweep" % label, [])
        return
    p = subprocess.run([lidiagen, "lookup", "--json", lidia],
                       input="".join("%x\n" % s[0] for s in sweep), capture_output=True, text=True)
    got = [json.loads(l).get("frames") or [] for l in p.stdout.splitlines()]
    if p.returncode != 0 or len(got) != len(sweep):
        report(False, "%s: lidiagen lookup runs" % label, [p.stderr[-1000:]])
        return
    inner_bad, outer_bad, chain_bad, inlined = [], [], [], 0
    for (pc, _, fn, file, line), fr in zip(sweep, got):
        shown = " <- ".join("%s @ %s:%s" % (f["function"], f.get("file", ""), f.get("line", 0))
                            for f in fr) or "(no frame)"
        want_line = 0 if file == "?" else line
        want_file = None if file == "?" else file
        if not fr or for_print(fr[0]["function"]) != for_print(fn) or \
                fr[0].get("line", 0) != want_line or \
                (want_file is not None and fr[0].get("file") != want_file):
            inner_bad.append("0x%x: runtime %s @ %s:%d; lidiagen %s" % (pc, fn, file, line, shown))
        if not fr or fr[-1]["function"] != func:
            outer_bad.append("0x%x: lidiagen %s" % (pc, shown))
        if fn != func:
            inlined += 1
            if shape == "yes" and (len(fr) != 2 or not fr[0].get("inlined") or
                                   fr[1].get("line", 0) != 0):
                chain_bad.append("0x%x: lidiagen %s" % (pc, shown))
    n = len(sweep)
    report(not inner_bad, "%s: FuncForPC at every byte of %s: %d PCs (%d in inlined code), "
           "%d agree" % (label, func, n, inlined, n - len(inner_bad)), inner_bad)
    report(not outer_bad, "%s: the outermost frame is %s at every byte: %d of %d"
           % (label, func, n - len(outer_bad), n), outer_bad)
    if shape == "yes":
        first = sweep[0][2]
        report(first != func, "%s: the runtime's function at %s's first byte is an inlined one "
               "(%s): the shape of issue 14" % (label, func, first), [])
        report(not chain_bad, "%s: at each inlined byte, the table's frames and no other: the "
               "callee, then %s at line 0: %d of %d" % (label, func, inlined - len(chain_bad),
                                                        inlined), chain_bad)


if __name__ == "__main__":
    if len(sys.argv) != 7:
        sys.stderr.write(__doc__)
        sys.exit(2)
    main(*sys.argv[1:])
