# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""A stand-in for the parts of opentelemetry-sdk 1.44 the span processor meets, with the same
names and behaviours: TracerProvider(resource=, span_limits=, active_span_processor=, sampler=),
SynchronousMultiSpanProcessor (callbacks on the calling thread), ConcurrentMultiSpanProcessor
(callbacks submitted to a ThreadPoolExecutor and awaited), SpanLimits.max_span_attributes with
BoundedAttributes evicting the oldest attribute for a new key, Span.update_name() telling no
processor, and samplers whose RECORD_ONLY decision gives a recording, unsampled span.
load() returns the real SDK when it is importable, else this module."""

import collections
import concurrent.futures
import itertools
import threading
import types

_ids = itertools.count(0x5a5a000000000101)
_traces = itertools.count(0x5a5a00000000000000000000000000a1)


class Decision:
    DROP, RECORD_ONLY, RECORD_AND_SAMPLE = "DROP", "RECORD_ONLY", "RECORD_AND_SAMPLE"


class SamplingResult:
    def __init__(self, decision, attributes=None):
        self.decision, self.attributes = decision, attributes


class Sampler:
    def should_sample(self, parent_context, trace_id, name, kind=None, attributes=None,
                      links=None, trace_state=None):
        return SamplingResult(Decision.RECORD_AND_SAMPLE)

    def get_description(self):
        return "AlwaysOn"


class Resource:
    """Like the SDK's: create() adds the default service.name ("unknown_service") unless given
    (the real one reads OTEL_SERVICE_NAME too)."""

    def __init__(self, attributes):
        self.attributes = types.MappingProxyType(dict(attributes))

    @staticmethod
    def create(attributes=None):
        attrs = {"telemetry.sdk.language": "python", "service.name": "unknown_service"}
        attrs.update(attributes or {})
        return Resource(attrs)


class SpanLimits:
    def __init__(self, max_span_attributes=128):
        self.max_span_attributes = max_span_attributes


class BoundedAttributes(collections.abc.MutableMapping):
    """Like the SDK's: a new key beyond maxlen evicts the oldest one."""

    def __init__(self, maxlen, attributes=None):
        self.maxlen, self.dropped = maxlen, 0
        self._dict = collections.OrderedDict()
        for k, v in (attributes or {}).items():
            self[k] = v

    def __setitem__(self, key, value):
        if key in self._dict:
            del self._dict[key]
        elif self.maxlen is not None and len(self._dict) == self.maxlen:
            self._dict.popitem(last=False)
            self.dropped += 1
        self._dict[key] = value

    def __getitem__(self, key):
        return self._dict[key]

    def __delitem__(self, key):
        del self._dict[key]

    def __iter__(self):
        return iter(self._dict)

    def __len__(self):
        return len(self._dict)


class TraceFlags(int):
    @property
    def sampled(self):
        return bool(self & 1)


class SpanContext:
    def __init__(self, trace_id, span_id, is_remote=False, trace_flags=TraceFlags(1)):
        self.trace_id, self.span_id, self.is_remote = trace_id, span_id, is_remote
        self.trace_flags = TraceFlags(trace_flags)


class Span:
    def __init__(self, name, context, parent, processor, limits, attributes, resource):
        self._name, self._context, self._parent = name, context, parent
        self.resource = resource
        self._span_processor, self._limits = processor, limits
        self._attributes = BoundedAttributes(limits.max_span_attributes, attributes)
        self._lock = threading.Lock()
        self._ended = False

    name = property(lambda self: self._name)
    parent = property(lambda self: self._parent)
    attributes = property(lambda self: types.MappingProxyType(self._attributes))

    def get_span_context(self):
        return self._context

    def is_recording(self):
        return not self._ended

    def set_attribute(self, key, value):
        with self._lock:
            if not self._ended:
                self._attributes[key] = value

    def update_name(self, name):
        with self._lock:  # as in the SDK: no processor is told
            if not self._ended:
                self._name = name

    def end(self):
        with self._lock:
            if self._ended:
                return
            self._ended = True
        self._span_processor.on_end(self)


class NonRecordingSpan:
    def __init__(self, context):
        self._context = context

    def get_span_context(self):
        return self._context

    def is_recording(self):
        return False

    def end(self):
        pass


class SynchronousMultiSpanProcessor:
    def __init__(self):
        self._span_processors = ()

    def add_span_processor(self, sp):
        self._span_processors += (sp,)

    def on_start(self, span, parent_context=None):
        for sp in self._span_processors:
            sp.on_start(span, parent_context=parent_context)

    def on_end(self, span):
        for sp in self._span_processors:
            sp.on_end(span)


class ConcurrentMultiSpanProcessor(SynchronousMultiSpanProcessor):
    """As in the SDK: each processor's callback is submitted to a pool, then awaited."""

    def __init__(self, num_threads=2):
        super().__init__()
        self._executor = concurrent.futures.ThreadPoolExecutor(max_workers=num_threads)

    def _submit_and_await(self, func, *args, **kwargs):
        futures = [self._executor.submit(func(sp), *args, **kwargs)
                   for sp in self._span_processors]
        for f in futures:
            f.result()

    def on_start(self, span, parent_context=None):
        self._submit_and_await(lambda sp: sp.on_start, span, parent_context=parent_context)

    def on_end(self, span):
        self._submit_and_await(lambda sp: sp.on_end, span)


class Tracer:
    def __init__(self, provider):
        self._p = provider

    def start_span(self, name, context=None, attributes=None):
        parent = getattr(context, "span", None) if context is not None else None
        pctx = parent.get_span_context() if parent is not None else None
        trace_id = pctx.trace_id if pctx is not None else next(_traces)
        result = self._p.sampler.should_sample(context, trace_id, name, attributes=attributes)
        sampled = result.decision == Decision.RECORD_AND_SAMPLE
        ctx = SpanContext(trace_id, next(_ids), trace_flags=TraceFlags(1 if sampled else 0))
        if result.decision == Decision.DROP:
            return NonRecordingSpan(ctx)
        span = Span(name, ctx, pctx, self._p._active_span_processor, self._p._span_limits,
                    attributes, self._p.resource)
        self._p._active_span_processor.on_start(span, parent_context=context)
        return span


class TracerProvider:
    def __init__(self, sampler=None, resource=None, active_span_processor=None,
                 span_limits=None):
        self.resource = resource or Resource.create()
        self.sampler = sampler or Sampler()
        self._active_span_processor = active_span_processor or SynchronousMultiSpanProcessor()
        self._span_limits = span_limits or SpanLimits()

    def add_span_processor(self, sp):
        self._active_span_processor.add_span_processor(sp)

    def get_tracer(self, name):
        return Tracer(self)


def set_span_in_context(span):
    return types.SimpleNamespace(span=span)


def load():
    """(namespace of the SDK names the tests use, description): the real SDK if importable."""
    try:
        from opentelemetry.sdk.trace import (ConcurrentMultiSpanProcessor as CMSP, SpanLimits as SL,
                                             SynchronousMultiSpanProcessor as SMSP,
                                             TracerProvider as TP)
        from opentelemetry.sdk.trace.sampling import Decision as D, Sampler as S
        from opentelemetry.sdk.trace.sampling import SamplingResult as SR
        from opentelemetry.sdk.resources import Resource as R
        from opentelemetry.trace import set_span_in_context as sic
    except ImportError as e:
        return None, "opentelemetry-sdk is not importable (%s)" % e
    return types.SimpleNamespace(TracerProvider=TP, SpanLimits=SL, Sampler=S, Decision=D,
                                 Resource=R,
                                 SamplingResult=SR, ConcurrentMultiSpanProcessor=CMSP,
                                 SynchronousMultiSpanProcessor=SMSP,
                                 set_span_in_context=sic), "opentelemetry-sdk"


STAND_IN = types.SimpleNamespace(TracerProvider=TracerProvider, SpanLimits=SpanLimits,
                                 Resource=Resource,
                                 Sampler=Sampler, Decision=Decision, SamplingResult=SamplingResult,
                                 ConcurrentMultiSpanProcessor=ConcurrentMultiSpanProcessor,
                                 SynchronousMultiSpanProcessor=SynchronousMultiSpanProcessor,
                                 set_span_in_context=set_span_in_context)
