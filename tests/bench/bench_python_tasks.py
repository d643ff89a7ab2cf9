# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Benchmark: cost of one task switch with per-task spans (spanprof.tasks) against the same
switch without them, side by side in one run: two asyncio tasks (and, when gevent is importable,
two greenlets) taking turns on one thread. Columns, in ns per switch (one step of a task):

- plain: the runtime alone (the baseline);
- on, no span: per-task spans on, tasks with no span (a switch costs the check only);
- own spans, C call: each task in its own span, the hook's two calls per switch (hand over the
  task's span, take it back) made, through ctypes as the binding makes them, to an empty C
  function (libc's labs) instead: what a hook without a kernel entry costs, near enough (a copy
  of libspanprof.so would not do: an agent watching every process finds it by its note);
- own spans, uprobe: the same with the library probed by an agent (as root; skipped otherwise).

Prints a table; asserts nothing."""

import asyncio
import ctypes
import os
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
ROUNDS = 3  # the configurations interleaved, so that a busy moment of the machine hits them all

try:
    import gevent
except ImportError:
    gevent = None


class EmptyCallHook:
    """A hook whose set/clear call an empty C function, as the binding calls the real one."""

    def __init__(self):
        self._call = ctypes.PyDLL(None).labs
        self._call.argtypes = [ctypes.c_char_p]
        self._call.restype = None

    def set(self, raw):
        self._call(raw)

    def clear(self):
        self._call(None)


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
    empty = EmptyCallHook()
    with tempfile.TemporaryDirectory(prefix="spanprof-bench-pytasks-") as tmp:
        for _ in range(ROUNDS):
            for name, fn in RUNTIMES:
                got = [fn(None, NONE), fn(empty, NONE), fn(empty, SPANS)]
                best = rows.get(name, got)
                rows[name] = [min(a, b) for a, b in zip(best, got)] + [None]
        why = agent_run.cannot_run()
        if not why:
            agent = agent_run.Agent(tmp, os.getpid())  # profiles this process only
            try:
                if agent.wait_hook_attached(5):
                    for name, fn in RUNTIMES:
                        rows[name][3] = min(fn(spanprof._hook, SPANS) for _ in range(ROUNDS))
                else:
                    why = "the agent did not attach within 5 s"
            finally:
                agent.stop()
    print("python %s: one task switch (one step of a task), ns, best of %d rounds x %d runs x "
          "%d steps" % (sys.version.split()[0], ROUNDS, RUNS, 2 * N))
    print("%-8s %8s %18s %25s %20s" % ("", "plain", "on, no span", "own spans, C call",
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
