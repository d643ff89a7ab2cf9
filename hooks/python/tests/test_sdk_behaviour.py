# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""The processor inside a tracer provider, as users run it: pool-thread callbacks
(ConcurrentMultiSpanProcessor), renames (update_name), a child of a request already running
when the agent attached, recording-but-unsampled spans, and the attribute limit. Each test runs
against the stand-in SDK (tests/mini_sdk.py) and, when it is importable, the real one."""

import logging
import threading
import unittest

from spanprof import otel, tasks
from tests import mini_sdk
from tests.fakes import FakeHook

ZERO = "0" * 16
PROFILE_ID = otel.PROFILE_ID_ATTRIBUTE
REAL_SDK, REAL_WHY = mini_sdk.load()


def hexid(span):
    return "%016x" % span.get_span_context().span_id


class SDKBehaviour:
    sdk = None  # set by the concrete classes below

    def provider(self, concurrent=False, limit=None, sampler=None):
        kw = {}
        if concurrent:
            kw["active_span_processor"] = self.sdk.ConcurrentMultiSpanProcessor(2)
        if limit is not None:
            kw["span_limits"] = self.sdk.SpanLimits(max_span_attributes=limit)
        if sampler is not None:
            kw["sampler"] = sampler
        provider = self.sdk.TracerProvider(**kw)
        self.hook = FakeHook()
        self.processor = otel.SpanProcessor(hook=self.hook)
        provider.add_span_processor(self.processor)
        return provider.get_tracer("spanprof-test")

    def child_of(self, tracer, parent, name):
        return tracer.start_span(name, context=self.sdk.set_span_in_context(parent))

    def test_pool_thread_callbacks_set_no_profile_id_and_log_once(self):
        tracer = self.provider(concurrent=True)
        with self.assertLogs("spanprof", level=logging.WARNING) as logs:
            for _ in range(3):
                root = tracer.start_span("GET /cart")
                self.child_of(tracer, root, "SELECT").end()
                root.end()
        self.assertEqual(len(logs.records), 1)
        self.assertIn("ConcurrentMultiSpanProcessor", logs.output[0])
        self.assertEqual(self.hook.take(), [])
        self.assertNotIn(PROFILE_ID, root.attributes)

    def test_synchronous_callbacks_run_on_the_span_thread(self):
        tracer = self.provider()
        root = tracer.start_span("GET /cart")
        me = threading.get_ident()
        self.assertEqual([c[1] for c in self.hook.calls], [me])
        self.assertEqual(root.attributes[PROFILE_ID], hexid(root))
        root.end()

    def test_rename_of_the_root_reaches_the_next_hook_call(self):
        tracer = self.provider()
        root = tracer.start_span("HTTP GET")
        root.update_name("GET /cart/{id}")
        child = self.child_of(tracer, root, "SELECT carts")
        child.end()
        root.end()
        r = hexid(root)
        self.assertEqual(self.hook.take(), [
            ("set", r, ZERO, "HTTP GET"),  # nothing tells a processor about the rename...
            ("set", hexid(child), r, "GET /cart/{id}"),  # ...the next call carries it
            ("set", r, ZERO, "GET /cart/{id}"),
            ("clear",),
        ])

    def test_child_of_a_request_running_before_the_agent_attached_gets_nothing(self):
        tracer = self.provider()
        self.hook.is_active = False
        root = tracer.start_span("GET /slow")  # in flight when the agent attaches
        self.hook.is_active = True
        child = self.child_of(tracer, root, "SELECT")
        grandchild = self.child_of(tracer, child, "parse")
        for s in (grandchild, child, root):
            s.end()
        self.assertEqual(self.hook.take(), [])
        for s in (root, child, grandchild):
            self.assertNotIn(PROFILE_ID, s.attributes)
        later = tracer.start_span("GET /next")  # the next request is profiled as usual
        self.assertEqual(later.attributes[PROFILE_ID], hexid(later))
        later.end()

    def test_recording_but_unsampled_spans_are_labelled_as_upstream_does(self):
        sdk = self.sdk

        class RecordOnly(sdk.Sampler):
            def should_sample(self, parent_context, trace_id, name, kind=None, attributes=None,
                              links=None, trace_state=None):
                return sdk.SamplingResult(sdk.Decision.RECORD_ONLY)

            def get_description(self):
                return "RecordOnly"

        tracer = self.provider(sampler=RecordOnly())
        root = tracer.start_span("batch job")
        self.assertFalse(root.get_span_context().trace_flags.sampled)
        self.assertEqual(root.attributes[PROFILE_ID], hexid(root))
        root.end()
        self.assertEqual(self.hook.take(), [("set", hexid(root), ZERO, "batch job"), ("clear",)])

    def test_at_the_attribute_limit_no_user_attribute_is_evicted(self):
        tracer = self.provider(limit=2)
        full = tracer.start_span("full", attributes={"a": 1, "b": 2})
        self.assertEqual(dict(full.attributes), {"a": 1, "b": 2})
        full.end()
        room = tracer.start_span("room", attributes={"a": 1})
        self.assertEqual(dict(room.attributes), {"a": 1, PROFILE_ID: hexid(room)})
        room.end()
        # The span is still profiled: its samples carry its id and name.
        self.assertEqual(self.hook.take()[0], ("set", hexid(full), ZERO, "full"))


    def test_the_resource_set_in_code_is_published_once(self):
        provider = self.sdk.TracerProvider(resource=self.sdk.Resource.create(
            {"service.name": "checkout", "service.namespace": "shop", "replicas": 3}))
        hook = FakeHook(active=False)  # published whether or not an agent is attached yet
        provider.add_span_processor(otel.SpanProcessor(hook=hook))
        tracer = provider.get_tracer("t")
        for _ in range(3):
            tracer.start_span("GET /cart").end()
        self.assertEqual(len(hook.published), 1)
        self.assertEqual(hook.published[0]["service.name"], "checkout")
        self.assertEqual(hook.published[0]["service.namespace"], "shop")
        self.assertNotIn("replicas", hook.published[0])  # string attributes only

    def test_install_publishes_before_any_span(self):
        provider = self.sdk.TracerProvider(resource=self.sdk.Resource.create(
            {"service.name": "billing"}))
        hook = FakeHook()
        processor = otel.install(provider, hook=hook)
        self.addCleanup(tasks.uninstall)  # install() also turned per-task spans on
        self.assertEqual([p["service.name"] for p in hook.published], ["billing"])
        provider.get_tracer("t").start_span("x").end()
        self.assertEqual(len(hook.published), 1)
        self.assertIsInstance(processor, otel.SpanProcessor)


class StandInSDKTest(SDKBehaviour, unittest.TestCase):
    sdk = mini_sdk.STAND_IN


@unittest.skipIf(REAL_SDK is None, "real SDK not installed, stand-in only: %s" % REAL_WHY)
class RealSDKTest(SDKBehaviour, unittest.TestCase):
    sdk = REAL_SDK


if __name__ == "__main__":
    unittest.main()
