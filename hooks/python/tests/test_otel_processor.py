# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""spanprof.otel.SpanProcessor against stand-ins for the SDK's documented span interface: which
span each thread's hook sees, the pyroscope.profile.id attribute, scopes, threads, failures."""

import logging
import threading
import unittest

from spanprof import otel
from tests.fakes import FakeHook, Span, hexid, remote_parent

ZERO = "0" * 16
PROFILE_ID = "pyroscope.profile.id"


class ProcessorTest(unittest.TestCase):
    def setUp(self):
        self.hook = FakeHook()
        self.p = otel.SpanProcessor(hook=self.hook)

    def test_root_span_sets_its_own_id_and_profile_id_then_clears(self):
        root = Span("GET /cart")
        self.p.on_start(root, parent_context=None)
        self.assertEqual(self.hook.take(), [("set", hexid(root), ZERO, "GET /cart")])
        self.assertEqual(root.attributes, {PROFILE_ID: hexid(root)})
        self.assertRegex(root.attributes[PROFILE_ID], "^[0-9a-f]{16}$")
        self.p.on_end(root)
        self.assertEqual(self.hook.take(), [("clear",)])

    def test_struct_carries_abi_version_and_trace_id(self):
        root = Span("r", trace_id=0x4bf92f3577b34da6a3ce929d0e0e4736)
        self.p.on_start(root)
        _, _, fields = self.hook.calls[0]
        self.assertEqual(fields["abi"], 2)
        self.assertEqual(fields["reserved"], 0)
        self.assertEqual(fields["trace_id"], "4bf92f3577b34da6a3ce929d0e0e4736")

    def test_child_carries_root_id_and_name_and_end_restores_the_parent(self):
        root = Span("GET /cart")
        child = root.child("SELECT carts")
        grandchild = child.child("parse row")
        self.p.on_start(root)
        self.p.on_start(child)
        self.p.on_start(grandchild)
        self.p.on_end(grandchild)
        self.p.on_end(child)
        self.p.on_end(root)
        r = hexid(root)
        self.assertEqual(self.hook.take(), [
            ("set", r, ZERO, "GET /cart"),
            ("set", hexid(child), r, "GET /cart"),
            ("set", hexid(grandchild), r, "GET /cart"),
            ("set", hexid(child), r, "GET /cart"),
            ("set", r, ZERO, "GET /cart"),
            ("clear",),
        ])
        self.assertNotIn(PROFILE_ID, child.attributes)
        self.assertNotIn(PROFILE_ID, grandchild.attributes)

    def test_remote_parent_makes_a_local_root(self):
        span = Span("consume order", parent=remote_parent())
        self.p.on_start(span)
        self.assertEqual(self.hook.take(), [("set", hexid(span), ZERO, "consume order")])
        self.assertEqual(span.attributes[PROFILE_ID], hexid(span))

    def test_recording_unsampled_spans_are_labelled_like_sampled_ones(self):
        # The SDK hands processors recording spans only; Pyroscope's processor labels them
        # whatever their sampled flag, and so does this one.
        root = Span("r", sampled=False)
        self.p.on_start(root)
        child = root.child("c")
        self.p.on_start(child)
        self.p.on_end(child)
        self.p.on_end(root)
        r = hexid(root)
        self.assertEqual(self.hook.take(), [("set", r, ZERO, "r"), ("set", hexid(child), r, "r"),
                                            ("set", r, ZERO, "r"), ("clear",)])
        self.assertEqual(root.attributes, {PROFILE_ID: r})

    def test_child_of_a_parent_never_seen_gets_nothing(self):
        orphan = Span("SELECT", parent=Span("started before the agent").get_span_context())
        self.p.on_start(orphan)
        self.p.on_end(orphan)
        self.assertEqual(self.hook.take(), [])
        self.assertEqual(orphan.attributes, {})

    def test_all_spans_scope_gives_every_span_its_own_profile_id(self):
        p = otel.SpanProcessor(root_span_only=False, hook=self.hook)
        root = Span("GET /cart")
        child = root.child("SELECT carts")
        p.on_start(root)
        p.on_start(child)
        p.on_end(child)
        p.on_end(root)
        self.assertEqual(self.hook.take(), [
            ("set", hexid(root), ZERO, "GET /cart"),
            ("set", hexid(child), ZERO, "SELECT carts"),
            ("set", hexid(root), ZERO, "GET /cart"),
            ("clear",),
        ])
        self.assertEqual(child.attributes[PROFILE_ID], hexid(child))
        self.assertEqual(root.attributes[PROFILE_ID], hexid(root))

    def test_add_span_name_false_passes_no_name(self):
        p = otel.SpanProcessor(add_span_name=False, hook=self.hook)
        root = Span("GET /users/12345")
        p.on_start(root)
        p.on_start(root.child("c"))
        self.assertEqual([c[3] for c in self.hook.take()], ["", ""])

    def test_long_names_are_cut_to_255_bytes(self):
        self.p.on_start(Span("/api/v1/" + "x" * 100))  # ABI v1 cut this at 63 bytes
        self.assertEqual(self.hook.take()[0][3], "/api/v1/" + "x" * 100)
        root = Span("é" * 140)  # 280 bytes of UTF-8
        self.p.on_start(root)
        self.assertEqual(self.hook.take()[0][3], "é" * 127)

    def test_no_agent_means_no_hook_calls_and_no_bookkeeping(self):
        self.hook.is_active = False
        root = Span("r")
        child = root.child("c")
        self.p.on_start(root)
        self.p.on_start(child)
        self.assertEqual(self.hook.take(), [])
        self.assertEqual(root.attributes, {})  # no agent, no profile to link to
        # The agent attaches mid-request: spans started before stay invisible (as with any
        # uprobe-based hook); the next span is tracked as usual.
        self.hook.is_active = True
        self.p.on_end(child)
        self.p.on_end(root)
        self.assertEqual(self.hook.take(), [])
        later = Span("later")
        self.p.on_start(later)
        self.p.on_end(later)
        self.assertEqual(self.hook.take(), [("set", hexid(later), ZERO, "later"), ("clear",)])
        self.assertEqual(later.attributes[PROFILE_ID], hexid(later))

    def test_missing_library_makes_the_processor_a_no_op(self):
        hook = FakeHook(loaded=False)
        p = otel.SpanProcessor(hook=hook)
        root = Span("r")
        p.on_start(root)
        p.on_end(root)
        self.assertEqual(hook.take(), [])
        self.assertEqual(root.attributes, {})

    def test_threads_have_separate_stacks(self):
        a_started, b_done = threading.Event(), threading.Event()
        root_a, root_b = Span("a"), Span("b")

        def other():
            a_started.wait()
            self.p.on_start(root_b)
            self.p.on_end(root_b)
            b_done.set()

        t = threading.Thread(target=other)
        t.start()
        self.p.on_start(root_a)
        a_started.set()
        b_done.wait()
        t.join()
        main = threading.get_ident()
        per_thread = [(c[0], c[1] == main, c[2]["span_id"] if c[0] == "set" else None)
                      for c in self.hook.calls]
        self.assertEqual(per_thread, [("set", True, hexid(root_a)),
                                      ("set", False, hexid(root_b)),
                                      ("clear", False, None)])
        self.hook.calls.clear()
        # Thread b's end did not disturb this thread: ending a clears it here.
        self.p.on_end(root_a)
        self.assertEqual(self.hook.take(), [("clear",)])

    def test_a_child_started_on_another_thread_carries_the_root(self):
        root = Span("GET /report")
        self.p.on_start(root)
        self.hook.take()
        child = root.child("render")
        t = threading.Thread(target=lambda: (self.p.on_start(child), self.p.on_end(child)))
        t.start()
        t.join()
        self.assertEqual(self.hook.take(), [("set", hexid(child), hexid(root), "GET /report"),
                                            ("clear",)])

    def test_span_ended_on_another_thread_is_dropped_by_its_owner(self):
        root = Span("handed off")
        self.p.on_start(root)
        self.hook.take()
        t = threading.Thread(target=self.p.on_end, args=(root,))
        t.start()
        t.join()
        self.assertEqual(self.hook.take(), [])  # the hook only speaks for its own thread
        nxt = Span("next")
        self.p.on_start(nxt)
        self.p.on_end(nxt)
        self.assertEqual(self.hook.take(), [("set", hexid(nxt), ZERO, "next"), ("clear",)])
        self.assertEqual(self.p._stack(), [])

    def test_parent_ending_before_its_child_keeps_the_child_active(self):
        root = Span("r")
        child = root.child("c")
        self.p.on_start(root)
        self.p.on_start(child)
        self.hook.take()
        self.p.on_end(root)
        self.assertEqual(self.hook.take(), [])
        self.p.on_end(child)
        self.assertEqual(self.hook.take(), [("clear",)])

    def test_spans_that_never_end_do_not_grow_the_stack_forever(self):
        for i in range(otel.MAX_DEPTH * 3):
            self.p.on_start(Span("leak %d" % i))
        self.assertEqual(len(self.p._stack()), otel.MAX_DEPTH)
        self.assertEqual(len(self.p._live), otel.MAX_DEPTH)

    def test_errors_never_reach_the_application_and_are_logged_once(self):
        class Broken:
            name = "broken"

            def get_span_context(self):
                raise RuntimeError("boom")

        with self.assertLogs("spanprof", level=logging.WARNING) as logs:
            self.p.on_start(Broken())
            self.p.on_end(Broken())
            self.p.on_start(Broken())
        self.assertEqual(len(logs.records), 1)
        self.assertIn("on_start", logs.output[0])
        root = Span("still works")
        self.p.on_start(root)
        self.assertEqual(self.hook.take(), [("set", hexid(root), ZERO, "still works")])

    def test_shutdown_clears_this_thread_and_stops(self):
        root = Span("r")
        self.p.on_start(root)
        self.hook.take()
        self.p.shutdown()
        self.assertEqual(self.hook.take(), [("clear",)])
        self.p.on_start(Span("after"))
        self.assertEqual(self.hook.take(), [])
        self.assertTrue(self.p.force_flush())
        self.assertTrue(self.p.force_flush(timeout_millis=10))

    def test_has_the_sdk_span_processor_methods(self):
        for name in ("on_start", "on_end", "shutdown", "force_flush", "_on_ending"):
            self.assertTrue(callable(getattr(self.p, name)), name)
        self.p._on_ending(Span("x"))


if __name__ == "__main__":
    unittest.main()
