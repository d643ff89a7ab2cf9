# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""spanprof.tasks: asyncio tasks and gevent greenlets taking turns on one thread each hand the
hook their own span at every switch, through set_span() and through the span processor."""

import asyncio
import contextvars
import unittest

import spanprof
from spanprof import _current, otel, tasks
from tests.fakes import FakeHook, Span, hexid

TRACE = "5a5a0000000000000000000000000001"
ONE, TWO = "5a5a000000000001", "5a5a000000000002"


def spans_of(calls):
    """The span ids the hook got, in order, None for a clear."""
    return [c[1] if c[0] == "set" else None for c in calls]


class AsyncioTest(unittest.TestCase):
    def setUp(self):
        self.hook = FakeHook()
        self.saved_hook, spanprof._hook = spanprof._hook, self.hook
        _current.remember(None)

    def tearDown(self):
        spanprof._hook = self.saved_hook
        _current.remember(None)

    def run_loop(self, main):
        loop = asyncio.new_event_loop()
        try:
            tasks.instrument_loop(loop, self.hook)
            return loop.run_until_complete(loop.create_task(main()))
        finally:
            loop.close()

    def test_each_step_runs_in_its_tasks_span_and_the_loop_in_none(self):
        async def work(span):
            spanprof.set_span(TRACE, span, 0, "t")
            for _ in range(2):
                await asyncio.sleep(0)
            spanprof.clear_span()

        async def main():
            await asyncio.gather(work(ONE), work(TWO))

        self.run_loop(main)
        # set in the task, put back to none after the step; then each resumed step hands the
        # hook its task's span, and takes it back after.
        self.assertEqual(spans_of(self.hook.take()),
                         [ONE, None, TWO, None, ONE, None, TWO, None, ONE, None, TWO, None])

    def test_a_task_started_in_a_span_inherits_it(self):
        seen = []

        async def child():
            await asyncio.sleep(0)
            seen.append(spans_of(self.hook.take()))

        async def main():
            spanprof.set_span(TRACE, ONE, 0, "parent")
            await asyncio.get_running_loop().create_task(child())

        self.run_loop(main)
        # the parent's step, then each of the child's steps, run in the parent's span; the
        # loop between them in none
        self.assertEqual(seen, [[ONE, None, ONE, None, ONE]])

    def test_no_step_costs_a_call_when_no_task_has_a_span(self):
        async def main():
            for _ in range(5):
                await asyncio.sleep(0)

        self.run_loop(main)
        self.assertEqual(self.hook.take(), [])

    def test_a_lone_task_in_a_span_costs_two_hook_calls_per_step(self):
        # docs/task-spans.md: the loop's work between two steps belongs to no task, so even the
        # only task on the loop hands its span over before each step and takes it back after.
        async def main():
            spanprof.set_span(TRACE, ONE, 0, "t")
            self.hook.take()
            for _ in range(10):
                await asyncio.sleep(0)
            spanprof.clear_span()

        self.run_loop(main)
        self.assertEqual(spans_of(self.hook.take()), [None] + [ONE, None] * 10)

    def test_cancellation_goes_through_and_restores(self):
        async def work():
            spanprof.set_span(TRACE, ONE, 0, "t")
            await asyncio.sleep(10)

        async def main():
            t = asyncio.get_running_loop().create_task(work())
            await asyncio.sleep(0)
            t.cancel()
            with self.assertRaises(asyncio.CancelledError):
                await t
            return _current.published()

        self.assertIsNone(self.run_loop(main))
        self.assertEqual(spans_of(self.hook.take()), [ONE, None, ONE, None])

    def test_a_factory_already_set_makes_the_tasks(self):
        made = []

        def inner(loop, coro, **kwargs):
            made.append(coro)
            return asyncio.Task(coro, loop=loop, **kwargs)

        async def main():
            spanprof.set_span(TRACE, ONE, 0, "t")
            await asyncio.sleep(0)
            return main.__name__

        loop = asyncio.new_event_loop()
        try:
            loop.set_task_factory(inner)
            tasks.instrument_loop(loop, self.hook)
            tasks.instrument_loop(loop, self.hook)  # idempotent
            self.assertEqual(loop.run_until_complete(loop.create_task(main())), "main")
        finally:
            loop.close()
        self.assertEqual(len(made), 1)
        self.assertIsInstance(made[0], tasks._Steps)
        self.assertEqual(made[0].__qualname__, main.__qualname__)  # the wrapped coroutine's
        self.assertEqual(spans_of(self.hook.take()), [ONE, None, ONE, None])

    def test_processor_spans_follow_their_tasks(self):
        p = otel.SpanProcessor(hook=self.hook)
        roots = {}

        async def request(name):
            root = roots[name] = Span(name)
            p.on_start(root)
            child = root.child("db")
            p.on_start(child)
            await asyncio.sleep(0)
            p.on_end(child)
            await asyncio.sleep(0)
            p.on_end(root)

        async def main():
            await asyncio.gather(request("GET /a"), request("GET /b"))

        self.run_loop(main)
        a, b = hexid(roots["GET /a"]), hexid(roots["GET /b"])
        calls = self.hook.take()
        # each task's steps carry its own root's id; its child span and its end stay its own
        names = [(c[1], c[2], c[3]) if c[0] == "set" else None for c in calls]
        for got in names:
            self.assertTrue(got is None or got[0] == a or got[1] == a or got[0] == b or
                            got[1] == b)
        self.assertEqual(p._stack(), [])
        self.assertEqual(p._live, {})
        seq = [c for c in spans_of(calls) if c is not None]
        # a's child, a's step, then b's; after each child ends, its own root comes back
        self.assertIn(a, seq)
        self.assertIn(b, seq)
        last_a = max(i for i, c in enumerate(names) if c and a in (c[0], c[1]))
        self.assertEqual(names[last_a][0], a)  # a's last step runs in its root, not b's

    def test_after_uninstall_a_stale_task_makes_no_hook_call(self):
        async def stale():
            spanprof.set_span(TRACE, ONE, 0, "t")
            await asyncio.sleep(0)
            tasks.uninstall()  # as the processor's shutdown() does, from any task
            for _ in range(3):
                await asyncio.sleep(0)

        tasks.install(self.hook, gevent=False)
        loop = asyncio.new_event_loop()  # instrumented by install()
        try:
            loop.run_until_complete(loop.create_task(stale()))
            # the step that uninstalled still puts back what it found; the later ones call nothing
            self.assertEqual(spans_of(self.hook.take()), [ONE, None, ONE, None])
            tasks.instrument_loop(loop, self.hook)  # replaces the factory turned off
            loop.run_until_complete(loop.create_task(stale()))
            self.assertEqual(spans_of(self.hook.take()), [ONE, None] * 5)
        finally:
            tasks.uninstall()
            loop.close()

    def test_processor_shutdown_undoes_what_install_turned_on(self):
        from tests.mini_sdk import TracerProvider

        processor = otel.install(TracerProvider(), hook=self.hook)
        self.addCleanup(tasks.uninstall)
        loop = asyncio.new_event_loop()
        self.addCleanup(loop.close)
        factory = loop.get_task_factory()
        self.assertTrue(getattr(factory, "spanprof", False))
        processor.shutdown()
        self.assertFalse(factory.seam.on)
        fresh = asyncio.new_event_loop()
        self.addCleanup(fresh.close)
        self.assertIsNone(fresh.get_task_factory())

    def test_off_switch(self):
        self.assertFalse(tasks.enabled({"SPANPROF_TASKS": "off"}))
        self.assertFalse(tasks.enabled({"SPANPROF_TASKS": "0"}))
        self.assertTrue(tasks.enabled({}))
        self.assertTrue(tasks.enabled({"SPANPROF_TASKS": "on"}))

    def test_install_instruments_new_loops_and_uninstall_stops(self):
        try:
            self.assertIn("asyncio", tasks.install(self.hook, gevent=False))
            loop = asyncio.new_event_loop()
            self.assertTrue(getattr(loop.get_task_factory(), "spanprof", False))
            loop.close()
        finally:
            tasks.uninstall()
        loop = asyncio.new_event_loop()
        self.assertIsNone(loop.get_task_factory())
        loop.close()

    @unittest.skipIf(not hasattr(asyncio, "Runner"),
                     "asyncio.Runner(loop_factory=...) is new in Python 3.11")
    def test_install_instruments_a_runners_loop_factory(self):
        seen = []

        async def main():
            seen.append(asyncio.get_running_loop().get_task_factory())
            spanprof.set_span(TRACE, ONE, 0, "t")
            await asyncio.sleep(0)
            spanprof.clear_span()

        try:
            tasks.install(self.hook, gevent=False)
            with asyncio.Runner(loop_factory=asyncio.SelectorEventLoop) as runner:
                runner.run(main())
        finally:
            tasks.uninstall()
        self.assertTrue(getattr(seen[0], "spanprof", False))
        self.assertEqual(spans_of(self.hook.take()), [ONE, None, ONE, None])
        with asyncio.Runner(loop_factory=asyncio.SelectorEventLoop) as runner:
            self.assertIsNone(runner.get_loop().get_task_factory())


try:
    import gevent
except ImportError:
    gevent = None


@unittest.skipIf(gevent is None, "gevent is not importable (Debian: python3-gevent)")
class GeventTest(unittest.TestCase):
    def setUp(self):
        self.hook = FakeHook()
        self.saved_hook, spanprof._hook = spanprof._hook, self.hook
        _current.remember(None)
        self.assertIn("gevent", tasks.install(self.hook, asyncio=False, gevent=True))

    def tearDown(self):
        tasks.uninstall()
        spanprof._hook = self.saved_hook
        _current.remember(None)

    def test_each_greenlet_runs_in_its_span_and_the_hub_in_none(self):
        def work(span):
            spanprof.set_span(TRACE, span, 0, "g")
            for _ in range(2):
                gevent.sleep(0)
            spanprof.clear_span()

        gevent.joinall([gevent.spawn(work, ONE), gevent.spawn(work, TWO)])
        seq = spans_of(self.hook.take())
        # no two spans follow each other without the hub (none) between them
        self.assertEqual([s for s in seq if s is not None], [ONE, TWO] * 3)
        for i in range(1, len(seq)):
            self.assertFalse(seq[i] is not None and seq[i - 1] is not None)


if __name__ == "__main__":
    unittest.main()
