# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Python workload for the interpreter-cache budget test: `COUNT LINES CPU_SECONDS GATE` makes
COUNT functions (budget_fn_0 ...), each its own code object with a LINES-line body and so a long
line table, waits for the file GATE, then calls them in turn until the process has used
CPU_SECONDS of CPU. It prints the smallest line table's length in bytes ("table N"), then the
CPU seconds and calls it measured ("done cpu=S calls=N"), and waits for the file GATE.end (at
most two minutes) so that its code objects stay readable until the agent has written its last
profile."""
import os
import sys
import time
import types

count, lines, cpu_s, gate = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3]), sys.argv[4]

# One template compiled once; each function is a copy of its code object under its own name and
# first line: a distinct code object the agent must read and cache on its own.
body = "\n".join(["def template(x):"] + ["    x = x + 1"] * lines + ["    return x"])
space = {}
exec(compile(body, "budget_fns.py", "exec"), space)
template = space["template"].__code__
functions = []
for i in range(count):
    name = "budget_fn_%d" % i
    code = template.replace(co_name=name, co_firstlineno=1 + i * (lines + 2))
    if hasattr(code, "co_qualname"):
        code = code.replace(co_qualname=name)
    functions.append(types.FunctionType(code, space, name))
table = getattr(template, "co_linetable", None) or template.co_lnotab
print("table %d" % len(table), flush=True)

while not os.path.exists(gate):
    time.sleep(0.01)
start = time.process_time()
calls = 0
while time.process_time() - start < cpu_s:
    for f in functions:
        f(0)
    calls += count
print("done cpu=%.3f calls=%d" % (time.process_time() - start, calls), flush=True)
end = time.monotonic() + 120
while not os.path.exists(gate + ".end") and time.monotonic() < end:
    time.sleep(0.05)
