# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Test workload: code objects re-created at a freed one's address with the same interned name,
file name and first line but a new qualified name, as exec-generated code (dataclasses,
namedtuples) is. Usage: py_qualname_churn.py GATE PHASES SECONDS. Waits for the file GATE, then
runs PHASES classes Churn0..ChurnN-1 one after another, each spinning in its `spin` method for
SECONDS of CPU time, and prints each phase's qualified name and code object address."""
import gc
import os
import sys
import time

# One file-name object for every compile(): the code objects share it, as they share the
# interned method name.
FILE_NAME = "<churn>"
SOURCE = (
    "class Churn{i}:\n"
    "    def spin(self, end):\n"
    "        while now() < end:\n"
    "            pass\n"
)


def phase(i, seconds):
    ns = {"now": time.thread_time}  # CPU time: each phase gets its samples under load too
    exec(compile(SOURCE.format(i=i), FILE_NAME, "exec"), ns)
    cls = ns["Churn%d" % i]
    code = cls.spin.__code__
    print("phase %d %s code 0x%x" % (i, cls.spin.__qualname__, id(code)), flush=True)
    cls().spin(time.thread_time() + seconds)


def main():
    gate, phases, seconds = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
    print("ready", flush=True)
    while not os.path.exists(gate):
        time.sleep(0.02)
    for i in range(phases):
        phase(i, seconds)
        gc.collect()  # the class, its function and code object are freed here
    print("done", flush=True)


main()
