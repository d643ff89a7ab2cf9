# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Python workload for the off-CPU interpreter test: `py_waits.py GATE ITERATIONS`. Once the file
GATE exists, one thread runs ITERATIONS spans ("GET /wait"); each waits in two functions of its
own: wait_for_db() sleeps 10 ms (time.sleep), wait_for_lock() waits on a threading.Event that a
helper thread sets about 20 ms after it was asked. It prints the time it spent off the CPU in
each ("off_cpu_ns wait_for_db N": wall minus thread CPU time) and how much of that it was
runnable, waiting for a CPU ("run_delay_ns wait_for_db N": the kernel's run-queue time of the
thread, /proc/thread-self/schedstat), then stays until GATE.end exists, so the agent reads its
stacks while it lives."""
import os
import sys
import threading
import time

import spanprof

TRACE = "3c3c0000000000000000000000000002"
SPAN = "7777000000000002"


def wait_for_db():
    time.sleep(0.010)


def wait_for_lock(event):
    if not event.wait(5.0):
        raise SystemExit("the helper thread never set the event")
    event.clear()


def helper(requests, event):
    while os.read(requests, 1):
        time.sleep(0.020)
        event.set()


def run_delay_ns():
    """The thread's time on a run queue so far: the second field of its schedstat."""
    with open("/proc/thread-self/schedstat") as f:
        return int(f.read().split()[1])


def off_cpu_of(func, *args):
    """(off-CPU time, run-queue time) of func(*args): the second is part of the first."""
    delay = run_delay_ns()
    wall, cpu = time.monotonic_ns(), time.thread_time_ns()
    func(*args)
    off = (time.monotonic_ns() - wall) - (time.thread_time_ns() - cpu)
    return off, run_delay_ns() - delay


def wait_file(path):
    deadline = time.monotonic() + 60
    while not os.path.exists(path):
        if time.monotonic() > deadline:
            raise SystemExit("no %s within 60 s" % path)
        time.sleep(0.01)


def main():
    gate, iterations = sys.argv[1], int(sys.argv[2])
    wait_file(gate)
    event = threading.Event()
    requests, ask = os.pipe()
    threading.Thread(target=helper, args=(requests, event), daemon=True).start()
    db, lock = [0, 0], [0, 0]
    for _ in range(iterations):
        spanprof.set_span(TRACE, SPAN, 0, "GET /wait")
        db = [a + b for a, b in zip(db, off_cpu_of(wait_for_db))]
        os.write(ask, b"x")
        lock = [a + b for a, b in zip(lock, off_cpu_of(wait_for_lock, event))]
        spanprof.clear_span()
    os.close(ask)
    print("run_delay_ns wait_for_db %d" % db[1])
    print("run_delay_ns wait_for_lock %d" % lock[1])
    print("off_cpu_ns wait_for_db %d" % db[0])
    print("off_cpu_ns wait_for_lock %d" % lock[0], flush=True)
    wait_file(gate + ".end")


if __name__ == "__main__":
    main()
