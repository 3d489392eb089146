#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Pyroscope's reader as the tests run it: ours, and the shared one where present.

    pyroscope_both.py ARGS...

takes the arguments of tests/tools/pyroscope_reader.py (FILE [ADDR...],
--json, --lines, --each) and answers as it does. When $SHARED_PYROSCOPE names
an existing file (default: ../shared/tools/pyroscope_lookup.py beside the
source tree, which CI provides), that second re-statement of Pyroscope's
reader runs on the same arguments too, and the two must agree: both open the
file or both refuse it, and opened, the same answers (JSON compared as data).
Where they disagree, our answer is printed, the difference goes to standard
error and the exit status is 3, so every check that reads a file through this
command fails. Where the shared one is absent, ours alone answers: no check
depends on a file outside the tree.
"""
import contextlib
import importlib.util
import io
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tools"))
import pyroscope_reader  # noqa: E402

DISAGREE = 3


def shared_path():
    p = os.environ.get("SHARED_PYROSCOPE")
    if p is None:
        p = os.path.join(HERE, "..", "..", "..", "shared", "tools", "pyroscope_lookup.py")
    return p if p and os.path.isfile(p) else None


def ours(argv):
    out, err = io.BytesIO(), io.BytesIO()
    rc = pyroscope_reader.run(argv, out, err)
    return rc, out.getvalue(), err.getvalue()


def load_shared(shared):
    """The shared reader as a module: its command is main(argv), as in its
    `sys.exit(main(sys.argv[1:]))`; Table(data) opens or raises Rejected."""
    spec = importlib.util.spec_from_file_location("shared_pyroscope_lookup", shared)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def theirs(mod, argv):
    """The shared reader's command, run in this process: (status, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            rc = mod.main(list(argv))
    except SystemExit as e:
        rc = e.code if isinstance(e.code, int) else 1
    except Exception as e:  # noqa: BLE001 - a crash is an answer too: a refusal
        rc = 1
        err.write("%s: %s" % (type(e).__name__, e))
    return rc or 0, out.getvalue().encode("utf-8", "surrogateescape"), \
        err.getvalue().encode("utf-8", "surrogateescape")


def each_shared(mod, paths):
    """{path: None (opened) or why refused} from the shared reader."""
    res = {}
    for path in paths:
        try:
            with open(path, "rb") as f:
                mod.Table(f.read())
            res[path] = None
        except mod.Rejected as e:
            res[path] = str(e) or "rejected"
        except OSError as e:
            res[path] = str(e)
    return res


def same_output(a, b, as_json):
    if not as_json:
        return a == b
    try:
        return json.loads(a) == json.loads(b)
    except ValueError:
        return a == b


def compare(argv, shared, rc, out):
    """A description of how the shared reader disagrees with ours, or None."""
    mod = load_shared(shared)
    if argv and argv[0] == "--each":
        verdicts = each_shared(mod, argv[1:])
        diffs = []
        for line in out.decode("utf-8", "replace").splitlines():
            status, _, rest = line.partition(" ")
            path = rest.split(": ", 1)[0] if status == "refused" else rest.rsplit(" ", 1)[0]
            if (status == "ok") != (verdicts.get(path, "missing") is None):
                diffs.append("%s: ours %s, shared %s" % (path, status,
                                                         verdicts.get(path) or "opens it"))
        return "; ".join(diffs[:5]) if diffs else None
    # The shared reader knows no --lines: compare the text answers instead.
    args = argv[1:] if argv and argv[0] == "--lines" else argv
    if args is not argv:
        rc, out, _ = ours(args)
    trc, tout, terr = theirs(mod, args)
    if (rc == 0) != (trc == 0):
        return "ours exits %d, shared %d (%s)" % (rc, trc, terr.decode("utf-8", "replace").strip()[:300])
    if rc == 0 and not same_output(out, tout, args[:1] == ["--json"]):
        return "ours printed %r..., shared %r..." % (out[:200], tout[:200])
    return None


def main():
    argv = sys.argv[1:]
    rc, out, err = ours(argv)
    shared = shared_path()
    why = compare(argv, shared, rc, out) if shared and rc != 2 else None
    sys.stdout.buffer.write(out)
    sys.stdout.flush()
    sys.stderr.buffer.write(err)
    if why:
        sys.stderr.write("pyroscope_both.py: tests/tools/pyroscope_reader.py and %s disagree on %s:"
                         " %s\n" % (shared, " ".join(argv)[:200], why))
        return DISAGREE
    return rc


if __name__ == "__main__":
    sys.exit(main())
