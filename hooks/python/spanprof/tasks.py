# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Per-task spans: asyncio tasks and gevent greenlets that take turns on one thread each get
their own span in the profiles.

The hook speaks for a thread, and a task switch changes no thread. So the span each task set
(set_span(), or the span processor) is kept in the task's own context (spanprof._current), and
at every switch the hook is handed the span of the code about to run:

- asyncio: a task factory wraps each task's coroutine; before each step of the task the hook gets
  the task's span, after it the span the thread had before (normally none: the event loop's own
  work belongs to no task). install() sets the factory on every event loop the policy makes from
  then on, on every loop an asyncio.Runner makes with its loop_factory (3.11+: asyncio.run(...,
  loop_factory=...), uvloop.run()), and on the running loop.
- gevent: a greenlet trace function (greenlet.settrace, per thread) hands the hook the span of
  the greenlet switched to; the hub has none.

A switch to code whose span the thread's hook already holds costs no hook call, and without an
agent attached no span is recorded, so switches cost only the check. An asyncio task in a span
still costs two calls per step (its span before the step, the loop's none after it), even alone.
SPANPROF_TASKS=off in the environment makes install() do nothing.
"""

import collections.abc
import logging
import os
import sys

from . import _current

ENV_SWITCH = "SPANPROF_TASKS"

_log = logging.getLogger("spanprof")
_span = _current.span
_thread = _current._thread  # read in every step: a module global is the cheapest lookup
_installed = {}  # what install() changed, to undo it: "seam", "policy", "runner", "greenlet"


class _Seam:
    """Whether the seams one install() set are on. uninstall() turns them off where it cannot
    take them out: loops that keep their factory, greenlet tracers of other threads. Then their
    tasks run without hook calls, so spans from before never come back."""

    __slots__ = ("on",)

    def __init__(self):
        self.on = True


_ALWAYS = _Seam()  # for factories made by hand (task_factory(), instrument_loop())


def enabled(env=None):
    """False when SPANPROF_TASKS is off, false, no or 0."""
    env = os.environ if env is None else env
    return env.get(ENV_SWITCH, "").strip().lower() not in ("0", "off", "false", "no")


def _default_hook():
    from . import _hook
    return _hook


class _Steps(collections.abc.Coroutine):
    """A task's coroutine, run one step at a time by the task: each step runs with the task's
    span in the hook (read from the task's context, which the task enters around each step),
    and the thread's span from before the step is put back after it."""

    __slots__ = ("_coro", "_hook", "_seam")

    def __init__(self, coro, hook, seam=_ALWAYS):
        self._coro, self._hook, self._seam = coro, hook, seam

    def send(self, value):
        if not self._seam.on:
            return self._coro.send(value)
        before = self._enter()
        try:
            return self._coro.send(value)
        finally:
            if _thread.published is not before:
                self._give(before)

    def throw(self, *args):
        if not self._seam.on:
            return self._coro.throw(*args)
        before = self._enter()
        try:
            return self._coro.throw(*args)
        finally:
            if _thread.published is not before:
                self._give(before)

    def _enter(self):
        """Hands the hook the task's span; returns what the thread's hook held before."""
        before = _thread.published
        raw = _span.get()
        if raw is not before:
            self._give(raw)
        return before

    def _give(self, raw):
        _thread.published = raw
        if raw is None:
            self._hook.clear()
        else:
            self._hook.set(raw)

    def close(self):
        return self._coro.close()

    def __await__(self):
        return self._coro.__await__()

    def __getattr__(self, name):  # cr_frame, cr_code, __qualname__ ... of the real coroutine
        return getattr(self._coro, name)

    def __repr__(self):
        return repr(self._coro)


def task_factory(hook=None, inner=None, _seam=_ALWAYS):
    """A task factory for loop.set_task_factory() giving each task its own span; inner is a
    factory already set on the loop, which then makes the tasks (of the wrapped coroutines)."""
    import asyncio

    hook = _default_hook() if hook is None else hook
    is_coroutine = asyncio.iscoroutine

    def factory(loop, coro, **kwargs):
        if is_coroutine(coro) and not isinstance(coro, _Steps):
            coro = _Steps(coro, hook, _seam)
        if inner is not None:
            return inner(loop, coro, **kwargs)
        return asyncio.Task(coro, loop=loop, **kwargs)

    factory.spanprof = True
    factory.seam, factory.inner = _seam, inner
    return factory


def instrument_loop(loop, hook=None, _seam=_ALWAYS):
    """Sets the per-task span factory on loop, around a factory it has already. Idempotent."""
    current = loop.get_task_factory()
    if getattr(current, "spanprof", False):
        if current.seam.on:
            return
        current = current.inner  # uninstall() turned it off: replace it
    loop.set_task_factory(task_factory(hook, current, _seam))


def _greenlet_tracer(hook, previous, seam):
    def trace(event, args):
        # Called in the greenlet switched to: its context holds its span.
        if seam.on and event in ("switch", "throw"):
            _current.switch_to(hook, _span.get())
        if previous is not None:
            previous(event, args)

    trace.spanprof = True
    trace.seam, trace.previous = seam, previous
    return trace


def install(hook=None, asyncio=True, gevent=None):
    """Turns per-task spans on: asyncio (when asyncio is True) for the running event loop and
    every loop the event loop policy or an asyncio.Runner makes from now on; gevent (when gevent
    is True, or None and gevent is imported) for the calling thread's greenlets. Returns what it
    turned on, a set of "asyncio" and "gevent"; nothing when SPANPROF_TASKS is off."""
    if not enabled():
        _log.info("spanprof: per-task spans are off (%s)", ENV_SWITCH)
        return set()
    hook = _default_hook() if hook is None else hook
    seam = _installed.setdefault("seam", _Seam())
    done = set()
    if asyncio:
        if _install_asyncio(hook, seam):
            done.add("asyncio")
    if gevent or (gevent is None and "gevent" in sys.modules):
        if _install_greenlet(hook, seam):
            done.add("gevent")
    return done


def _install_asyncio(hook, seam):
    import asyncio
    import asyncio.events as events

    # Every event loop asyncio.run(), asyncio.new_event_loop() and uvloop make comes from the
    # policy's new_event_loop() (the class is private from Python 3.14 on).
    policy = getattr(events, "BaseDefaultEventLoopPolicy", None) or \
        getattr(events, "_BaseDefaultEventLoopPolicy", None)
    if policy is None or not hasattr(policy, "new_event_loop"):
        _log.warning("spanprof: per-task spans for asyncio: this Python's asyncio has no event "
                     "loop policy to instrument; use loop.set_task_factory("
                     "spanprof.tasks.task_factory())")
        return False
    if "policy" not in _installed:
        new_event_loop = policy.new_event_loop

        def instrumented_new_event_loop(self):
            loop = new_event_loop(self)
            instrument_loop(loop, hook, seam)
            return loop

        _installed["policy"] = (policy, new_event_loop)
        policy.new_event_loop = instrumented_new_event_loop
    _install_runner(hook, seam)
    try:
        instrument_loop(asyncio.get_running_loop(), hook, seam)
    except RuntimeError:
        pass  # no loop running in this thread
    return True


def _install_runner(hook, seam):
    """asyncio.Runner (3.11+) makes its loop with loop_factory, bypassing the policy: that is
    asyncio.run(..., loop_factory=...) (3.12+) and uvloop.run(). Its loop is instrumented once
    made, before the Runner creates the main task."""
    runner = getattr(__import__("asyncio.runners").runners, "Runner", None)
    lazy_init = getattr(runner, "_lazy_init", None)
    if lazy_init is None or "runner" in _installed:
        return

    def instrumented_lazy_init(self):
        lazy_init(self)
        loop = getattr(self, "_loop", None)
        if loop is not None:
            instrument_loop(loop, hook, seam)

    _installed["runner"] = (runner, lazy_init)
    runner._lazy_init = instrumented_lazy_init


def _install_greenlet(hook, seam):
    try:
        import greenlet
    except ImportError:
        _log.warning("spanprof: gevent per-task spans need greenlet, which is not importable")
        return False
    previous = greenlet.gettrace()
    if getattr(previous, "spanprof", False):
        if previous.seam.on:
            return True
        previous = previous.previous  # uninstall() turned it off: replace it
    greenlet.settrace(_greenlet_tracer(hook, previous, seam))
    _installed["greenlet"] = previous
    return True


def uninstall():
    """Undoes install(): loops made from now on get no factory, the calling thread's greenlets
    no tracer; loops made meanwhile and other threads keep theirs, turned off (no hook call)."""
    seam = _installed.pop("seam", None)
    if seam is not None:
        seam.on = False
    patched = _installed.pop("policy", None)
    if patched is not None:
        patched[0].new_event_loop = patched[1]
    patched = _installed.pop("runner", None)
    if patched is not None:
        patched[0]._lazy_init = patched[1]
    if "greenlet" in _installed:
        import greenlet

        previous = _installed.pop("greenlet")
        if getattr(greenlet.gettrace(), "spanprof", False):
            greenlet.settrace(previous)  # the trace function found at install()
