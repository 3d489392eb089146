#!/usr/bin/env python3
"""The checks of tests/t_batch.sh that are easier in Python.

    batch_check.py manifest MANIFEST OUTDIR
        parse the JSON Lines manifest, check every field's type, that each
        output exists under OUTDIR with that size and sha256; print one line
        per output, sorted: "BUILD_ID OUTPUT STATUS lines=B inlines=B go=B
        INPUT|INPUT..."; the lines without an output (skipped, failed) are
        checked, not printed; problems as "error: ..." lines and exit 1.
    batch_check.py pick-inline LLVM_JSON FUNCTION
        from llvm-symbolizer --output-style=JSON --inlining over many
        addresses, print the first address whose innermost frame is FUNCTION
        ("-": any function) inlined into another function, then its frames
        "F:LINE>F:LINE...".
    batch_check.py chain LIDIAGEN_LOOKUP_JSON
        the frames of `lidiagen lookup --json` for one address, in the same
        form "F:LINE>F:LINE...", and whether the innermost one is inlined
        and has a file ("inlined-with-file" or "not-inlined").
"""
import hashlib
import json
import os
import sys


BUILD_ID_REASONS = ("other shard", "nothing to symbolize")
INPUT_REASONS = ("no build ID", "too short", "not linked", "not a program")


def other_line(m, line, err):
    """A line without an output: a build ID skipped or failed, or an input."""
    if isinstance(m.get("build_id"), str):
        ok = isinstance(m.get("inputs"), list) and m["inputs"] and (
            (m.get("status") == "skipped" and m.get("reason") in BUILD_ID_REASONS) or
            (m.get("status") == "failed" and isinstance(m.get("error"), str)))
    elif isinstance(m.get("input"), str):
        ok = (m.get("status") == "skipped" and m.get("reason") in INPUT_REASONS) or (
            m.get("status") == "failed" and isinstance(m.get("error"), str))
    elif isinstance(m.get("read"), str):
        ok = isinstance(m.get("opened"), int) and isinstance(m.get("bytes"), int) and m["opened"] > 0
    else:
        ok = False
    if not ok:
        err("neither an output, a build ID skipped or failed, nor an input: %s" % line)


def manifest(path, outdir):
    errors, rows = [], []

    def err(n, msg):
        errors.append("error: line %d: %s" % (n, msg))

    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    else:
        errors.append("error: the manifest does not end with a newline")
    seen = set()
    for n, line in enumerate(lines, 1):
        try:
            m = json.loads(line)
        except ValueError as e:
            err(n, "not JSON: %s" % e)
            continue
        if not isinstance(m, dict):
            err(n, "not an object")
            continue
        if m.get("status") not in ("converted", "replaced", "kept"):
            other_line(m, line, lambda msg: err(n, msg))
            continue
        want = {"build_id": str, "key": str, "object": str, "status": str, "inputs": list,
                "go": bool, "holds": dict, "counts": dict, "size": int, "sha256": str}
        bad = [k for k, t in want.items() if not isinstance(m.get(k), t)]
        if bad:
            err(n, "missing or mistyped fields: %s in %s" % (",".join(bad), line))
            continue
        if m["build_id"] in seen:
            err(n, "build ID %s twice" % m["build_id"])
        seen.add(m["build_id"])
        if not all(isinstance(i, str) for i in m["inputs"]) or not m["inputs"]:
            err(n, "inputs is not a list of paths: %r" % m["inputs"])
        holds = m["holds"]
        for k in ("symbols", "lines", "inlines"):
            if not isinstance(holds.get(k), bool):
                err(n, "holds.%s is not a boolean" % k)
        for k in ("functions", "inline_ranges", "line_rows"):
            if not isinstance(m["counts"].get(k), int):
                err(n, "counts.%s is not an integer" % k)
        if holds.get("inlines") and not m["counts"].get("inline_ranges"):
            err(n, "holds inlines but counts no inline range")
        if holds.get("lines") and not m["counts"].get("line_rows"):
            err(n, "holds lines but counts no line row")
        out = os.path.join(outdir, m["key"])
        if m["object"] != outdir.rstrip("/") + "/" + m["key"] and not m["object"].endswith("/" + m["key"]):
            err(n, "object %s is not the tree's path of key %s" % (m["object"], m["key"]))
        if os.path.isabs(m["key"]) or ".." in m["key"].split("/"):
            err(n, "key %s is not a path inside the tree" % m["key"])
        elif not os.path.isfile(out):
            err(n, "output %s does not exist" % out)
        else:
            with open(out, "rb") as f:
                data = f.read()
            if len(data) != m["size"]:
                err(n, "size %d, the file has %d bytes" % (m["size"], len(data)))
            sha = hashlib.sha256(data).hexdigest()
            if sha != m["sha256"]:
                err(n, "sha256 %s, the file's is %s" % (m["sha256"], sha))
        rows.append("%s %s %s lines=%s inlines=%s go=%s %s" % (
            m["build_id"], m["key"], m["status"], str(holds.get("lines")).lower(),
            str(holds.get("inlines")).lower(), str(m["go"]).lower(),
            "|".join(sorted(m["inputs"]))))
    for r in sorted(rows):
        print(r)
    for e in errors:
        print(e)
    return 1 if errors else 0


def fmt_chain(frames):
    return ">".join("%s:%s" % f for f in frames)


def pick_inline(path, func):
    with open(path) as f:
        text = f.read().strip()
    entries = []
    # One JSON array per line (or one for all the addresses).
    for line in text.splitlines():
        v = json.loads(line)
        entries.extend(v if isinstance(v, list) else [v])
    for e in entries:
        syms = e.get("Symbol", [])
        if len(syms) >= 2 and (func == "-" or syms[0].get("FunctionName") == func) and syms[0].get("Line"):
            print(e["Address"])
            print(fmt_chain((s["FunctionName"], s["Line"]) for s in syms))
            return 0
    return 1


def chain(path):
    with open(path) as f:
        v = json.loads(f.read().strip().splitlines()[0])
    fr = v.get("frames", [])
    print(fmt_chain((x.get("function"), x.get("line")) for x in fr))
    if fr and fr[0].get("inlined") and fr[0].get("file") and fr[0].get("line"):
        print("inlined-with-file")
    else:
        print("not-inlined")
    return 0


def main(argv):
    if not argv:
        sys.stderr.write(__doc__)
        return 2
    cmd, args = argv[0], argv[1:]
    if cmd == "manifest":
        return manifest(args[0], args[1])
    if cmd == "pick-inline":
        return pick_inline(args[0], args[1])
    if cmd == "chain":
        return chain(args[0])
    sys.stderr.write(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
