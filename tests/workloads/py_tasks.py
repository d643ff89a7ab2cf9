# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Python workload for the per-task spans test: after "go" on stdin, two tasks take turns on
one thread, each in its own span (set once, at its start), each burning CPU in its own
function (task one: parse_order, task two: price_cart) in bursts of 3-12 ms of thread CPU time
and yielding to the other between bursts. `asyncio SECONDS`: asyncio tasks, yielding with
`await asyncio.sleep(0)`; `gevent SECONDS`: greenlets, with gevent.sleep(0). Each task runs until
its own bursts reached SECONDS of CPU time, so a loaded machine slows the run but not the split.
Prints each task's CPU time as the task measured it (task=1 cpu_ns=...) and cpu_s=."""
import os
import random
import sys
import time

import spanprof
import spanprof.tasks

TRACE = "5a5a0000000000000000000000000001"
SPANS = {1: ("5a5a000000000001", "GET /one"), 2: ("5a5a000000000002", "GET /two")}


def parse_order(until):
    n = 0
    while time.thread_time() < until:
        n += sum(i * i for i in range(400))
    return n


def price_cart(until):
    n = 0
    while time.thread_time() < until:
        n += sum(i + 1 for i in range(400))
    return n


BURNERS = {1: parse_order, 2: price_cart}


def burst(task):
    """One burst; returns the CPU time it took, by the thread's clock."""
    t0 = time.thread_time_ns()
    BURNERS[task](time.thread_time() + random.uniform(0.003, 0.012))
    return time.thread_time_ns() - t0


def report(task, cpu_ns):
    print("task=%d cpu_ns=%d" % (task, cpu_ns), flush=True)


async def asyncio_task(task, seconds, asyncio):
    spanprof.set_span(TRACE, SPANS[task][0], 0, SPANS[task][1])
    cpu = 0
    while cpu < seconds * 1e9:
        cpu += burst(task)
        await asyncio.sleep(0)
    spanprof.clear_span()
    report(task, cpu)


def run_asyncio(seconds):
    import asyncio

    async def main():
        await asyncio.gather(asyncio_task(1, seconds, asyncio), asyncio_task(2, seconds, asyncio))

    asyncio.run(main())


def greenlet_task(task, seconds, gevent):
    spanprof.set_span(TRACE, SPANS[task][0], 0, SPANS[task][1])
    cpu = 0
    while cpu < seconds * 1e9:
        cpu += burst(task)
        gevent.sleep(0)
    spanprof.clear_span()
    report(task, cpu)


def run_gevent(seconds):
    import gevent

    if "gevent" not in spanprof.tasks.install(asyncio=False, gevent=True):
        sys.exit("per-task spans for gevent did not turn on")
    gevent.joinall([gevent.spawn(greenlet_task, 1, seconds, gevent),
                    gevent.spawn(greenlet_task, 2, seconds, gevent)])


def main():
    mode, seconds = sys.argv[1], float(sys.argv[2])
    if sys.stdin.readline().strip() != "go":
        sys.exit(1)
    if mode == "asyncio":
        if "asyncio" not in spanprof.tasks.install(gevent=False):
            sys.exit("per-task spans for asyncio did not turn on")
        run_asyncio(seconds)
    else:
        run_gevent(seconds)
    print("cpu_s=%.3f" % time.process_time(), flush=True)


if __name__ == "__main__":
    main()
