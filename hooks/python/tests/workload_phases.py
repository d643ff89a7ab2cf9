# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Test workload, run by test_agent_profile.py under its own agent (--pid): says "ready", waits
for "load" on stdin, imports spanprof (which loads libspanprof.so with dlopen) and says
"loaded", waits for "go" (the test saw its agent attach), then runs span A for ~1 s of CPU,
span B for ~1 s, no span for ~0.5 s, and prints each phase's CPU time."""

import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

TRACE_ID = 0x5a5a00000000000000000000000000aa
SPAN_A, SPAN_B = 0x5a5a000000000001, 0x5a5a000000000002


def busy(cpu_seconds):
    """Spins in Python for cpu_seconds of this thread's CPU time; returns the time it took."""
    start = time.thread_time()
    x = 0
    while time.thread_time() - start < cpu_seconds:
        for i in range(2000):
            x += i
    return time.thread_time() - start


def main():
    print("ready", flush=True)
    if sys.stdin.readline().strip() != "load":
        return 1
    import spanprof  # noqa: E402  (dlopen happens here)

    print("loaded", flush=True)
    if sys.stdin.readline().strip() != "go":
        return 1
    ok = spanprof.set_span(TRACE_ID, SPAN_A, 0, "phase-a")
    cpu_a = busy(1.0)
    ok &= spanprof.set_span(TRACE_ID, SPAN_B, 0, "phase-b")
    cpu_b = busy(1.0)
    ok &= spanprof.clear_span()
    cpu_none = busy(0.5)
    print("ok=%d cpu_a=%.3f cpu_b=%.3f cpu_none=%.3f" % (ok, cpu_a, cpu_b, cpu_none), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
