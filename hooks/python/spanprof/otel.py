# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""An OpenTelemetry SDK span processor that tells spanprof which span is active on each thread,
following Pyroscope's span-profile conventions (local root span, pyroscope.profile.id).

    from opentelemetry.sdk.trace import TracerProvider
    from spanprof.otel import SpanProcessor

    provider = TracerProvider()
    provider.add_span_processor(SpanProcessor())
"""

import logging
import threading

from . import _ids, _native

try:  # Subclass the SDK's base when it is there, so hooks added to it later stay no-ops.
    from opentelemetry.sdk.trace import SpanProcessor as _SDKSpanProcessor
except Exception:  # the SDK is optional: the interface is duck-typed
    _SDKSpanProcessor = object

PROFILE_ID_ATTRIBUTE = "pyroscope.profile.id"
MAX_DEPTH = 64  # spans a thread may have open at once before the oldest is forgotten

_log = logging.getLogger("spanprof")


class _Entry:
    """One started, sampled span on a thread's stack; raw is its packed struct, built lazily."""

    __slots__ = ("trace_id", "span_id", "root_id", "root_name", "raw", "ended")

    def __init__(self, trace_id, span_id, root_id, root_name):
        self.trace_id, self.span_id = trace_id, span_id
        self.root_id, self.root_name = root_id, root_name
        self.raw = None
        self.ended = False

    def pack(self):
        if self.raw is None:
            self.raw = _native.pack_span(self.trace_id.to_bytes(16, "big"),
                                         self.span_id.to_bytes(8, "big"),
                                         self.root_id.to_bytes(8, "big"), self.root_name)
        return self.raw


class SpanProcessor(_SDKSpanProcessor):
    """Calls spanprof's hook when a sampled span starts (it becomes the thread's active span)
    and when it ends (the thread's previous span, normally its parent, is active again; or
    none).

    root_span_only (default True): Pyroscope's convention. Only local root spans (no parent,
        or a remote parent) get the pyroscope.profile.id attribute, and samples taken in their
        child spans carry the root's id and name. False: every span gets the attribute, and
        its samples carry its own id and name.
    add_span_name (default True): pass the (root) span's name, which the agent turns into the
        span_name label. Turn it off when span names are high-cardinality.

    Only sampled spans are considered. The processor never raises into the application: an
    unexpected error is logged once and the span is skipped. Without libspanprof.so it does
    nothing at all, and with no agent attached it only keeps its per-thread bookkeeping.
    """

    def __init__(self, root_span_only=True, add_span_name=True, hook=None):
        if hook is None:
            from . import _hook as hook  # the library loaded when the package was imported
        self._hook = hook
        self._root_span_only = bool(root_span_only)
        self._add_span_name = bool(add_span_name)
        self._enabled = hook.loaded
        self._local = threading.local()  # .stack: this thread's started, sampled spans
        # span_id -> (entry, owning thread's stack). Single dict operations are atomic under
        # the GIL (and internally locked in free-threaded builds), so no lock is needed.
        self._live = {}
        self._error_logged = False
        self._names = {}  # span name -> its bounded UTF-8 bytes; names are few, encode once

    # --- the SDK's SpanProcessor interface -----------------------------------------------
    def on_start(self, span, parent_context=None):
        # Without an agent nothing is tracked: the processor costs one hook check per span.
        if not self._enabled or not self._hook.active():
            return
        try:
            self._start(span)
        except Exception:
            self._log_error("on_start")

    def _on_ending(self, span):
        """Newer SDKs call this just before on_end; nothing to do here."""

    def on_end(self, span):
        if not self._enabled:
            return
        try:
            self._end(span)
        except Exception:
            self._log_error("on_end")

    def shutdown(self):
        """Stops the processor; the calling thread is left with no span."""
        if not self._enabled:
            return
        self._enabled = False
        try:
            if getattr(self._local, "stack", None):
                self._local.stack.clear()
                if self._hook.active():
                    self._hook.clear()
            self._live.clear()
        except Exception:
            self._log_error("shutdown")

    def force_flush(self, timeout_millis=30000):
        return True  # nothing is buffered

    # --- internals -----------------------------------------------------------------------
    def _stack(self):
        try:
            return self._local.stack
        except AttributeError:
            self._local.stack = []
            return self._local.stack

    def _start(self, span):
        ctx = span.get_span_context()
        if not ctx.trace_flags.sampled:
            return
        parent = span.parent
        root = None
        if self._root_span_only and parent is not None and not parent.is_remote:
            found = self._live.get(parent.span_id)
            if found is not None:
                root = found[0]
        if root is not None:
            # A child: its samples belong to the local root (its own id goes along, for
            # agents run with --span-scope all).
            entry = _Entry(ctx.trace_id, ctx.span_id, root.root_id or root.span_id,
                           root.root_name)
        else:
            # A local root, or any span in all-spans scope. A local parent this processor
            # never saw (started before it was added, or unsampled) also lands here, so the
            # span still gets a profile id Grafana can find.
            entry = _Entry(ctx.trace_id, ctx.span_id, 0,
                           self._name_bytes(span.name) if self._add_span_name else b"")
            span.set_attribute(PROFILE_ID_ATTRIBUTE, "%016x" % ctx.span_id)

        try:
            stack = self._local.stack
        except AttributeError:
            stack = self._local.stack = []
        while stack and stack[-1].ended:  # spans another thread ended meanwhile
            stack.pop()
        if len(stack) >= MAX_DEPTH:  # spans that never end must not grow the stack forever
            self._live.pop(stack.pop(0).span_id, None)
        stack.append(entry)
        self._live[ctx.span_id] = (entry, stack)
        self._activate(entry)

    def _end(self, span):
        found = self._live.pop(span.get_span_context().span_id, None)
        if found is None:
            return  # unsampled, or never seen
        entry, stack = found
        entry.ended = True
        if stack is not getattr(self._local, "stack", None):
            # Ended on another thread: the hook only speaks for the calling thread, so the
            # owner drops the entry at its next span start or end.
            return
        popped = False
        while stack and stack[-1].ended:
            stack.pop()
            popped = True
        if not popped:
            if entry in stack:
                stack.remove(entry)  # ended out of order: the active span stays as it is
            return
        self._activate(stack[-1] if stack else None)

    def _name_bytes(self, name):
        raw = self._names.get(name)
        if raw is None:
            raw = _ids.name_bytes(name)
            if len(self._names) < 256:  # high-cardinality names are encoded every time
                self._names[name] = raw
        return raw

    def _activate(self, entry):
        if not self._hook.active():
            return  # nobody listens: do not build the struct
        if entry is None:
            self._hook.clear()
        else:
            self._hook.set(entry.pack())

    def _log_error(self, where):
        if not self._error_logged:
            self._error_logged = True
            _log.warning("spanprof: SpanProcessor.%s failed; span skipped (logged once)", where,
                         exc_info=True)
