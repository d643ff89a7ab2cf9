# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Stand-ins for the OpenTelemetry SDK objects a span processor receives, limited to what the SDK
documents (ReadableSpan.get_span_context(), .parent, .name, Span.set_attribute(); SpanContext
trace_id / span_id ints, is_remote, trace_flags.sampled), and a fake hook that records calls."""

import itertools
import threading

from spanprof import _native

_ids = itertools.count(0x5a5a000000000001)


class TraceFlags(int):
    @property
    def sampled(self):
        return bool(self & 1)


class SpanContext:
    def __init__(self, trace_id, span_id, is_remote=False, sampled=True):
        self.trace_id, self.span_id, self.is_remote = trace_id, span_id, is_remote
        self.trace_flags = TraceFlags(1 if sampled else 0)


class Span:
    def __init__(self, name, trace_id=0xab0000000000000000000000000000cd, parent=None,
                 sampled=True, span_id=None):
        self.name = name
        self._context = SpanContext(trace_id, span_id or next(_ids), sampled=sampled)
        self.parent = parent
        self.attributes = {}

    def get_span_context(self):
        return self._context

    def set_attribute(self, key, value):
        self.attributes[key] = value

    def child(self, name, sampled=None):
        ctx = self._context
        return Span(name, ctx.trace_id, parent=ctx,
                    sampled=ctx.trace_flags.sampled if sampled is None else sampled)


def remote_parent(trace_id=0xab0000000000000000000000000000cd, span_id=0x1111111111111111):
    return SpanContext(trace_id, span_id, is_remote=True)


class FakeHook:
    """Records what reaches spanprof_span_set(): ("set", thread, fields) or ("clear", thread)."""

    def __init__(self, active=True, loaded=True):
        self.is_active, self.loaded = active, loaded
        self.calls = []
        self.published = []  # each publish_context() call's attributes
        self._lock = threading.Lock()

    def active(self):
        return self.is_active

    def set(self, raw):
        abi, reserved, trace, span, root, name = _native.SPAN_STRUCT.unpack(raw)
        fields = {"abi": abi, "reserved": reserved, "trace_id": trace.hex(),
                  "span_id": span.hex(), "root_span_id": root.hex(),
                  "name": name.rstrip(b"\0").decode()}
        with self._lock:
            self.calls.append(("set", threading.get_ident(), fields))

    def clear(self):
        with self._lock:
            self.calls.append(("clear", threading.get_ident()))

    def publish_context(self, attributes):
        self.published.append(dict(attributes))
        return 0

    def take(self):
        """The calls so far, without thread ids: ("set", span_id, root_span_id, name) or
        ("clear",); forgets them."""
        with self._lock:
            calls, self.calls = self.calls, []
        return [("set", c[2]["span_id"], c[2]["root_span_id"], c[2]["name"])
                if c[0] == "set" else ("clear",) for c in calls]


def hexid(span):
    return "%016x" % span.get_span_context().span_id
