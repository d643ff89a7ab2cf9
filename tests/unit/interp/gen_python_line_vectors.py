# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Prints one C initializer of line-table test vectors for the running CPython: a sample
# function's raw line table, first line, and the line CPython itself gives each instruction.
# Run with each interpreter and paste into python_line_vectors.h (see that file).
import dis
import sys


def sample(items, limit):
    total = 0
    for x in items:
        if x > limit:
            total += x * 2
        else:
            try:
                total -= int(x)
            except ValueError:
                pass
    return (total +
            len(items))


def expected(co):
    minor = sys.version_info[1]
    code_len = len(co.co_code)
    if minor <= 9:
        starts = list(dis.findlinestarts(co))
        out = []
        for off in range(0, code_len, 2):
            line = 0
            for s, ln in starts:
                if s <= off:
                    line = ln
            out.append((off, line))
        return out
    out = []
    for start, end, line in co.co_lines():
        for off in range(start, end, 2):
            out.append((off // 2, line or 0))
    return out


co = sample.__code__
minor = sys.version_info[1]
tab = co.co_lnotab if minor <= 9 else co.co_linetable
pairs = expected(co)
print("\t{ %d, %d, %d, \"%s\"," % (minor, co.co_firstlineno, len(tab),
                                   "".join("\\x%02x" % b for b in tab)))
print("\t  %d, {" % len(pairs), end="")
print(", ".join("{ %d, %d }" % p for p in pairs), end="")
print(" } },")
