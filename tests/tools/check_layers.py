#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""make check-layers: the tree reads as the pipeline, in the library and in
the command alike.

Every quoted #include of lib/ and cmd/lidiagen/ is resolved as the compiler
resolves it (the includer's own folder, then the -I folders in the Makefile's
order) and checked against LAYERS: a folder includes only from its own
layer and from the layers it lists, so no arrow points back up and folders
form no cycle. Units (a .c with the .h of the same name) form no include
cycle either (NAME_internal.h is NAME.c's too). libcurl's headers are included in cmd/lidiagen/publish/ only,
libdebuginfod's in cmd/lidiagen/util/ only (debuginfod.c loads it),
libelf's and libdw's nowhere in lib/format and lib/base.

  tests/tools/check_layers.py [--graph] [--root DIR]
      --graph: print the folder edges; --root: check another checkout
Exit 0 when all holds, 1 with one line per breach.
"""
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# Each folder, and the folders it may include from (besides itself).
LAYERS = {
    # The library: base under everything; format (the file format) under the
    # stages that make or read it; then identify (input), what every
    # extractor adds to (collect: symbols, functions, frames, names), the
    # extractors of DWARF and Go, extract (lidia_extract: the sources, best
    # first) over them all, and the store.
    "lib": [],
    "lib/base": ["lib"],
    "lib/format": ["lib/base", "lib"],
    "lib/input": ["lib/format", "lib/base", "lib"],
    "lib/collect": ["lib/input", "lib/format", "lib/base", "lib"],
    "lib/dwarf": ["lib/collect", "lib/input", "lib/format", "lib/base", "lib"],
    "lib/go": ["lib/collect", "lib/input", "lib/format", "lib/base", "lib"],
    "lib/extract": ["lib/dwarf", "lib/go", "lib/collect", "lib/input", "lib/format",
                    "lib/base", "lib"],
    "lib/store": ["lib/format", "lib/base", "lib"],
    # The command: cli/ (subcommands, options) over batch/ (the run) over
    # publish/ (trees and buckets) and index/ (the index and the state), all
    # over util/; the library under all of them.
    "cmd/lidiagen/util": ["lib"],
    "cmd/lidiagen/index": ["cmd/lidiagen/util", "lib"],
    "cmd/lidiagen/publish/s3": ["cmd/lidiagen/util", "lib"],
    "cmd/lidiagen/publish": ["cmd/lidiagen/publish/s3", "cmd/lidiagen/util", "lib"],
    "cmd/lidiagen/batch": ["cmd/lidiagen/publish", "cmd/lidiagen/publish/s3",
                           "cmd/lidiagen/index", "cmd/lidiagen/util", "lib"],
    "cmd/lidiagen/cli": ["cmd/lidiagen/batch", "cmd/lidiagen/publish",
                         "cmd/lidiagen/publish/s3", "cmd/lidiagen/index",
                         "cmd/lidiagen/util", "lib"],
}

INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^">]+)[">]', re.M)


def sources():
    for top in ("lib", "cmd/lidiagen"):
        for d, _, files in os.walk(os.path.join(ROOT, top)):
            for f in sorted(files):
                if f.endswith((".c", ".h", ".cc")):
                    yield os.path.relpath(os.path.join(d, f), ROOT)


def include_dirs():
    """The -I folders, in the Makefile's order: lib's, then the command's."""
    lib = sorted({os.path.dirname(p) for p in sources() if p.startswith("lib/")})
    cmd = sorted({os.path.dirname(p) for p in sources() if p.startswith("cmd/")})
    return lib + cmd


def resolve(includer, name, dirs):
    for d in [os.path.dirname(includer)] + dirs:
        p = os.path.normpath(os.path.join(d, name))
        if os.path.isfile(os.path.join(ROOT, p)):
            return p
    return None  # a system header


def unit(path):
    """A .c, its .h, and its NAME_internal.h (what its folder's files share of it)."""
    base = os.path.splitext(path)[0]
    return base[: -len("_internal")] if base.endswith("_internal") else base


def find_cycle(edges):
    """One cycle of the graph (a list of nodes), or None."""
    state, stack = {}, []

    def visit(n):
        state[n] = 1
        stack.append(n)
        for m in sorted(edges.get(n, ())):
            if state.get(m) == 1:
                return stack[stack.index(m):] + [m]
            if not state.get(m):
                c = visit(m)
                if c:
                    return c
        stack.pop()
        state[n] = 2
        return None

    for n in sorted(edges):
        if not state.get(n):
            c = visit(n)
            if c:
                return c
    return None


def main():
    global ROOT
    if "--root" in sys.argv:
        ROOT = os.path.abspath(sys.argv[sys.argv.index("--root") + 1])
    dirs = include_dirs()
    breaches, folder_edges, unit_edges = [], {}, {}
    for src in sources():
        here = os.path.dirname(src)
        if here not in LAYERS:
            breaches.append(f"{src}: its folder {here} has no layer in tests/tools/check_layers.py")
            continue
        text = open(os.path.join(ROOT, src), encoding="utf-8", errors="replace").read()
        for kind, name in INCLUDE.findall(text):
            if kind == "<":
                if name.startswith("curl/") and not here.startswith("cmd/lidiagen/publish"):
                    breaches.append(f"{src}: includes <{name}>: libcurl belongs to cmd/lidiagen/publish/")
                # Only --debuginfod fetches: the library never asks a server.
                if name == "elfutils/debuginfod.h" and here != "cmd/lidiagen/util":
                    breaches.append(f"{src}: includes <{name}>: libdebuginfod belongs to cmd/lidiagen/util/debuginfod.c")
                if here in ("lib/format", "lib/base") and re.match(
                        r"(libelf|gelf|dwarf|libdw|libdwfl)\.h$|elfutils/", name):
                    breaches.append(f"{src}: includes <{name}>: {here} needs no libelf or libdw")
                continue
            target = resolve(src, name, dirs)
            if not target:
                continue
            there = os.path.dirname(target)
            if there != here:
                folder_edges.setdefault(here, set()).add(there)
                if there not in LAYERS.get(here, []):
                    breaches.append(f"{src}: includes {target}: {here} may not include from {there}")
            if unit(target) != unit(src):
                unit_edges.setdefault(unit(src), set()).add(unit(target))
    cycle = find_cycle(folder_edges)
    if cycle:
        breaches.append("folders include each other: " + " -> ".join(cycle))
    cycle = find_cycle(unit_edges)
    if cycle:
        breaches.append("units include each other: " + " -> ".join(cycle))
    if "--graph" in sys.argv:
        for a in sorted(folder_edges):
            print(f"{a} -> {', '.join(sorted(folder_edges[a]))}")
    for b in breaches:
        print(b, file=sys.stderr)
    return 1 if breaches else 0


if __name__ == "__main__":
    sys.exit(main())
