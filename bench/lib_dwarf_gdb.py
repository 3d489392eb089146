# SPDX-License-Identifier: Apache-2.0
"""gdb as a symbolizer oracle (for dwz files that llvm-symbolizer 16 cannot read).

Run inside gdb, with the debug file loaded:

    gdb -nx -batch -ex 'python ADDRS="addrs.txt"; OUT="out.jsonl"' \
        -x bench/lib_dwarf_gdb.py DEBUGFILE

For every address (hex, one per line) in ADDRS, writes one JSON line to OUT:
    {"address": "0x...", "frames": [{"function", "file", "line"}...],
     "dwarf_outer": NAME, "symbol": NAME}
innermost first, like `lidiagen lookup --json`. The chain is gdb's block tree
(gdb.block_for_pc, then superblocks that have a function): an inlined block's
symbol carries DW_AT_call_file/DW_AT_call_line as its symtab and line, so
frame k>0 gets its line from the call site of frame k-1, as llvm-symbolizer
does. The innermost line is gdb.find_pc_line. The outermost name is replaced
by the ELF symbol that covers the address (gdb's minimal symbol, `info
symbol`), which is what llvm-symbolizer (and lidiagen) print for the outermost
frame; the DWARF name is kept in "dwarf_outer".
"""
import json
import re

import gdb  # noqa: E402  (only inside gdb)

INFO_SYM_RE = re.compile(r"^(.*?)(?: \+ (\d+))? in section (\S+)")


def fullname(symtab):
    if symtab is None:
        return ""
    try:
        return symtab.fullname()
    except Exception:  # noqa: BLE001
        return symtab.filename


def msymbol(pc):
    try:
        s = gdb.execute("info symbol 0x%x" % pc, to_string=True).strip()
    except gdb.error:
        return ""
    m = INFO_SYM_RE.match(s)
    return m.group(1) if m else ""


def frames_at(pc):
    try:
        b = gdb.block_for_pc(pc)
    except RuntimeError:
        b = None
    fblocks = []
    while b is not None:
        if b.function is not None:
            fblocks.append(b)
        b = b.superblock
    if not fblocks:
        return [], "", msymbol(pc)
    sal = gdb.find_pc_line(pc)
    frames = [{"function": fblocks[0].function.print_name,
               "file": fullname(sal.symtab), "line": sal.line}]
    for inner, outer in zip(fblocks, fblocks[1:]):
        s = inner.function  # an inlined block: symtab/line = the call site
        frames.append({"function": outer.function.print_name,
                       "file": fullname(s.symtab), "line": s.line})
    dwarf_outer = frames[-1]["function"]
    sym = msymbol(pc)
    if sym:
        frames[-1]["function"] = sym
    return frames, dwarf_outer, sym


def main():
    gdb.execute("set pagination off")
    gdb.execute("set print demangle on")
    gdb.execute("set print asm-demangle on")
    with open(ADDRS) as f, open(OUT, "w") as out:  # noqa: F821 (set by -ex)
        for line in f:
            line = line.strip()
            if not line:
                continue
            pc = int(line, 16)
            frames, dwarf_outer, sym = frames_at(pc)
            out.write(json.dumps({"address": "0x%x" % pc, "frames": frames,
                                  "dwarf_outer": dwarf_outer, "symbol": sym}) + "\n")


main()
