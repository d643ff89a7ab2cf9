# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Benchmark: cost of one task switch with per-task spans (spanprof.tasks) against the same
switch without them, side by side in one run: two asyncio tasks (and, when gevent is importable,
two greenlets) taking turns on one thread. Columns, in ns per switch (one step of a task):

- plain: the runtime alone (the baseline);
- on, no span: per-task spans on, tasks with no span (a switch costs the check only);
- own spans, plain call: each task in its own span, the hook a copy of libspanprof.so that no
  agent probes (uprobes go by file), so each switch is two plain calls of the hook function
  (hand over the task's span, take it back): what a hook without a kernel entry costs;
- own spans, uprobe: the same with the library probed by an agent (as root; skipped otherwise).

Prints a table; asserts nothing."""

import asyncio
import os
import shutil
import sys
import tempfile
import time

HOOKS_PY = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "hooks", "python")
sys.path.insert(0, HOOKS_PY)

import spanprof  # noqa: E402  (loads libspanprof.so)
from spanprof import _current, _native, tasks  # noqa: E402
from tests import agent_run  # noqa: E402

N = 20000  # turns per task and run
RUNS = 5

try:
    import gevent
except ImportError:
    gevent = None


def packed(n):
    return _native.pack_span(b"\x5a" * 16, n.to_bytes(8, "big"), bytes(8), b"bench")


async def turns(span):
    if span is not None:
        _current.remember(span)  # what set_span() records, agent or not
    for _ in range(N):
        await asyncio.sleep(0)
    _current.remember(None)


async def two_tasks(spans):
    await asyncio.gather(turns(spans[0]), turns(spans[1]))


def asyncio_ns(hook, spans):
    """Best of RUNS: ns per task step; hook None: the plain loop."""
    best = float("inf")
    for _ in range(RUNS):
        loop = asyncio.new_event_loop()
        if hook is not None:
            tasks.instrument_loop(loop, hook)
        t = time.perf_counter_ns()
        loop.run_until_complete(two_tasks(spans))
        best = min(best, (time.perf_counter_ns() - t) / (2 * N))
        loop.close()
    return best


def greenlet_turns(span):
    if span is not None:
        _current.remember(span)
    for _ in range(N):
        gevent.sleep(0)
    _current.remember(None)


def gevent_ns(hook, spans):
    best = float("inf")
    for _ in range(RUNS):
        if hook is not None:
            tasks.install(hook, asyncio=False, gevent=True)
        t = time.perf_counter_ns()
        gevent.joinall([gevent.spawn(greenlet_turns, spans[0]),
                        gevent.spawn(greenlet_turns, spans[1])])
        best = min(best, (time.perf_counter_ns() - t) / (2 * N))
        tasks.uninstall()
    return best


RUNTIMES = [("asyncio", asyncio_ns)] + ([("gevent", gevent_ns)] if gevent else [])
SPANS = (packed(1), packed(2))
NONE = (None, None)


def main():
    if not spanprof.available():
        print("bench_python_tasks: libspanprof.so not found (set SPANPROF_LIBRARY); skipped")
        return 0
    rows = {}
    with tempfile.TemporaryDirectory(prefix="spanprof-bench-pytasks-") as tmp:
        copy = os.path.join(tmp, "libspanprof-unprobed.so")
        shutil.copyfile(spanprof.library_path(), copy)
        plain_hook = _native.Hook([copy])
        for name, fn in RUNTIMES:
            rows[name] = [fn(None, NONE), fn(plain_hook, NONE), fn(plain_hook, SPANS), None]
        why = agent_run.cannot_run()
        if not why:
            agent = agent_run.Agent(tmp, os.getpid())  # profiles this process only
            try:
                if agent.wait_hook_attached(5):
                    for name, fn in RUNTIMES:
                        rows[name][3] = fn(spanprof._hook, SPANS)
                else:
                    why = "the agent did not attach within 5 s"
            finally:
                agent.stop()
    print("python %s: one task switch (one step of a task), ns, best of %d x %d steps"
          % (sys.version.split()[0], RUNS, 2 * N))
    print("%-8s %8s %18s %25s %20s" % ("", "plain", "on, no span", "own spans, plain call",
                                       "own spans, uprobe"))
    for name, (plain, on, own, probed) in rows.items():
        print("%-8s %8.0f %10.0f (%+5.0f) %17.0f (%+5.0f) %s" % (
            name, plain, on, on - plain, own, own - plain,
            "%12.0f (%+5.0f)" % (probed, probed - plain) if probed else "%20s" % "skipped"))
    if not gevent:
        print("gevent: skipped: not importable (Debian: python3-gevent)")
    if why:
        print("own spans, uprobe: skipped: %s" % why)
    return 0


if __name__ == "__main__":
    sys.exit(main())
