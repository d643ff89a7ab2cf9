# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Python workload for the module-frame test: `GATE SECONDS` waits for the file GATE, then burns
SECONDS of its own CPU time in code at module level (no function: the frame is CPython's
"<module>") and prints the CPU seconds it used."""
import os
import sys
import time

gate, seconds = sys.argv[1], float(sys.argv[2])
while not os.path.exists(gate):
    time.sleep(0.01)
until = time.process_time() + seconds
n = 0
while time.process_time() < until:
    for i in range(2000):
        n += i * i
print("cpu %.3f" % time.process_time(), flush=True)
