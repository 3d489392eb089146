#!/usr/bin/env python3
"""Sources of a C library whose dwz'd DWARF has many partial units.

    dwz_shared_gen.py DIR K [UNITS [BULK [BALLAST]]]

writes DIR/shared.h, K small static inline (always_inline) functions, and
DIR/t0.c ... t<UNITS-1>.c (default 10), each with one function that calls
the inline functions of its own: function i is called from the units of the
i-th subset of them with at least two members (counting subsets as binary
numbers), so that every function is shared by its own set of units and dwz
moves its abstract DIE into a partial unit of its own, which names the line
table of the first unit of the set. t0.c also gets BULK lines of straight
code in functions of 50 lines (default 1500), which make its line table
large, and a struct type of BALLAST members (default 40000): DWARF that does
not depend on K. Used by tests/t_dwz_shared.sh and for the seeds of
tests/fuzz/corpus/dwarf_units.
"""
import os
import sys


def main(argv):
    if len(argv) < 2:
        sys.stderr.write(__doc__)
        return 2
    out, k = argv[0], int(argv[1])
    units = int(argv[2]) if len(argv) > 2 else 10
    bulk = int(argv[3]) if len(argv) > 3 else 1500
    ballast = int(argv[4]) if len(argv) > 4 else 40000
    subsets = [m for m in range(1, 1 << units) if bin(m).count("1") >= 2][:k]
    if len(subsets) < k:
        sys.stderr.write("%d units have only %d subsets of two or more\n" % (units, len(subsets)))
        return 2
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "shared.h"), "w") as h:
        h.write("#ifndef SHARED_H\n#define SHARED_H\n")
        for i in range(k):
            h.write("static inline __attribute__((always_inline)) int sh_%d(int x)\n{\n"
                    "\tint y = x * %d;\n\ty ^= y >> %d;\n\treturn y + %d;\n}\n"
                    % (i, i + 3, i % 7 + 1, i))
        h.write("#endif\n")
    for j in range(units):
        with open(os.path.join(out, "t%d.c" % j), "w") as f:
            f.write('#include "shared.h"\n\n__attribute__((noinline)) int tu%d_inl(int x)\n{\n' % j)
            for i in range(k):
                if subsets[i] >> j & 1:
                    f.write("\tx = sh_%d(x);\n" % i)
            f.write("\treturn x;\n}\n")
            if j:
                continue
            if ballast:
                f.write("\nstruct ballast {\n%s};\nstruct ballast ballast;\n"
                        % "".join("\tint member_%d;\n" % m for m in range(ballast)))
            for n in range(bulk // 50):
                f.write("\nvoid bulk%d(volatile int *p)\n{\n" % n)
                for r in range(50):
                    f.write("\tp[%d] += %d;\n" % (r % 64, n * 50 + r + 1))
                f.write("}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
