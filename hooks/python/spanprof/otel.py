# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""An OpenTelemetry SDK span processor that tells spanprof which span is active on each thread,
following Pyroscope's span-profile conventions (local root span, pyroscope.profile.id).

    from opentelemetry.sdk.trace import TracerProvider
    from spanprof.otel import SpanProcessor

    provider = TracerProvider()
    provider.add_span_processor(SpanProcessor())
"""

import contextvars
import logging
import os
import sys

from . import _current, _ids, _native, tasks

try:  # Subclass the SDK's base when it is there, so hooks added to it later stay no-ops.
    from opentelemetry.sdk.trace import SpanProcessor as _SDKSpanProcessor
except Exception:  # the SDK is optional: the interface is duck-typed
    _SDKSpanProcessor = object

PROFILE_ID_ATTRIBUTE = "pyroscope.profile.id"
MAX_DEPTH = 64  # spans a thread or task may have open at once before the oldest is forgotten

_log = logging.getLogger("spanprof")


class _Entry:
    """One started span on a thread's stack. root is the entry of its local root (itself for a
    root); raw is the packed struct, rebuilt when the root's name changed since it was packed."""

    __slots__ = ("trace_id", "span_id", "root", "span", "name", "name_raw", "raw", "raw_name",
                 "ended")

    def __init__(self, trace_id, span_id, root=None, span=None, name_raw=b""):
        self.trace_id, self.span_id = trace_id, span_id
        self.root = self if root is None else root
        # Only a root keeps its span and name: renames are followed through it.
        self.span, self.name = span, (span.name if span is not None else None)
        self.name_raw = name_raw
        self.raw = self.raw_name = None
        self.ended = False

    def pack(self):
        root = self.root
        name_raw = root.name_raw
        if self.raw is None or self.raw_name is not name_raw:
            root_id = 0 if root is self else root.span_id
            self.raw = _native.pack_span(self.trace_id.to_bytes(16, "big"),
                                         self.span_id.to_bytes(8, "big"),
                                         root_id.to_bytes(8, "big"), name_raw)
            self.raw_name = name_raw
        return self.raw


def _called_from_pool():
    """True when the SDK runs this callback on a worker of a concurrent.futures thread pool, as
    ConcurrentMultiSpanProcessor does: the calling thread is then not the span's thread."""
    caller = sys._getframe(2).f_code.co_filename
    return caller.endswith(_POOL_FILE)


_POOL_FILE = os.path.join("concurrent", "futures", "thread.py")


class SpanProcessor(_SDKSpanProcessor):
    """Calls spanprof's hook when a span starts (it becomes the thread's active span) and when
    it ends (the thread's previous span, normally its parent, is active again; or none).

    root_span_only (default True): Pyroscope's convention. Only local root spans (no parent,
        or a remote parent) get the pyroscope.profile.id attribute, and samples taken in their
        child spans carry the root's id and name. False: every span gets the attribute, and
        its samples carry its own id and name.
    add_span_name (default True): pass the (root) span's name, which the agent turns into the
        span_name label. Turn it off when span names are high-cardinality.

    Like Pyroscope's own processor, every span the SDK hands over is considered: the SDK only
    calls processors for recording spans, sampled or not. The processor never raises into the
    application: an unexpected error is logged once and the span is skipped. Without
    libspanprof.so it does nothing at all, and with no agent attached it only checks for one.
    """

    def __init__(self, root_span_only=True, add_span_name=True, hook=None):
        if hook is None:
            from . import _hook as hook  # the library loaded when the package was imported
        self._hook = hook
        self._root_span_only = bool(root_span_only)
        self._add_span_name = bool(add_span_name)
        self._enabled = hook.loaded
        # The started spans of the running thread or task, oldest first: a tuple in a
        # ContextVar, so that each asyncio task and greenlet (each runs in its own context) has
        # its own, and a task started inside a span inherits it without sharing it.
        self._stack_var = contextvars.ContextVar("spanprof_stack", default=())
        # span_id -> entry. Single dict operations are atomic under the GIL (and internally
        # locked in free-threaded builds), so no lock is needed.
        self._live = {}
        self._logged = set()  # what was already logged once
        self._owns_tasks = False  # install() turned per-task spans on for it: shutdown() undoes
        self._published = False  # the SDK's resource went out as process context
        self._names = {}  # span name -> its bounded UTF-8 bytes; names are few, encode once

    # --- the SDK's SpanProcessor interface -----------------------------------------------
    def on_start(self, span, parent_context=None):
        if not self._published and self._enabled:
            self.publish_resource(getattr(span, "resource", None))
        # Without an agent nothing is tracked: the processor costs one hook check per span.
        if not self._enabled or not self._hook.active():
            return
        try:
            if _called_from_pool():
                self._log_once("pool", "spanprof: span callbacks run on a thread pool (the "
                               "SDK's ConcurrentMultiSpanProcessor?); the hook labels the "
                               "calling thread only, so these spans get no profile id. Use "
                               "the default (synchronous) span processor.")
                return
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
        """Stops the processor; the calling thread is left with no span, and the per-task seams
        install() turned on are undone (tasks.uninstall())."""
        if not self._enabled:
            return
        self._enabled = False
        try:
            if self._owns_tasks:
                self._owns_tasks = False
                tasks.uninstall()  # the seams would hand the hook this processor's spans
            if self._stack_var.get():
                self._stack_var.set(())
                if self._hook.active():
                    self._hook.clear()
                    _current.remember(None)
            self._live.clear()
        except Exception:
            self._log_error("shutdown")

    def force_flush(self, timeout_millis=30000):
        return True  # nothing is buffered

    def publish_resource(self, resource):
        """Publishes the SDK resource's string attributes (service.name, service.namespace, ...)
        as OpenTelemetry process context (OTEP 4719), so the agent names this process's
        profiles as its traces are named. Done once, from the first span, unless called first
        (install() does). Returns True when published."""
        attrs = getattr(resource, "attributes", None)
        if attrs is None:
            return False
        self._published = True
        try:
            err = self._hook.publish_context(
                {k: v for k, v in attrs.items() if isinstance(v, str)})
        except Exception:
            self._log_error("publish_resource")
            return False
        if err:
            self._log_once("publish", "spanprof: could not publish the resource as process "
                           "context (%s); the agent names the service from the environment" %
                           os.strerror(-err))
        return err == 0

    # --- internals -----------------------------------------------------------------------
    def _stack(self):
        """The running thread's or task's started spans, oldest first (a copy)."""
        return list(self._stack_var.get())

    def _start(self, span):
        ctx = span.get_span_context()
        parent = span.parent
        if self._root_span_only and parent is not None and not parent.is_remote:
            found = self._live.get(parent.span_id)
            if found is None:
                # A local parent this processor never saw: it started before the agent
                # attached (or before the processor was added). Pyroscope's processor gives
                # such a span nothing, and so do we: it is not a local root.
                return
            # A child: its samples belong to the local root (its own id goes along, for
            # agents run with --span-scope all).
            entry = _Entry(ctx.trace_id, ctx.span_id, root=found.root)
        else:
            # A local root, or any span in all-spans scope.
            entry = _Entry(ctx.trace_id, ctx.span_id, span=span,
                           name_raw=self._name_bytes(span.name) if self._add_span_name else b"")
            self._annotate(span, ctx)

        stack = self._stack_var.get()
        top = len(stack)
        while top and stack[top - 1].ended:  # spans another thread or task ended meanwhile
            top -= 1
        first = 0
        if top >= MAX_DEPTH:  # spans that never end must not grow the stack forever
            first = top - MAX_DEPTH + 1
            for old in stack[:first]:
                self._live.pop(old.span_id, None)
        self._stack_var.set(stack[first:top] + (entry,))
        self._live[ctx.span_id] = entry
        self._activate(entry)

    def _annotate(self, span, ctx):
        """Sets pyroscope.profile.id unless the span's attribute limit is reached: the SDK would
        then evict the oldest user attribute to make room, and user data comes first."""
        if not _has_attribute_room(span):
            self._log_once("limit", "spanprof: a span reached its attribute limit "
                           "(OTEL_SPAN_ATTRIBUTE_COUNT_LIMIT); pyroscope.profile.id is not set "
                           "rather than evicting one of its attributes (logged once)")
            return
        span.set_attribute(PROFILE_ID_ATTRIBUTE, "%016x" % ctx.span_id)

    def _end(self, span):
        entry = self._live.pop(span.get_span_context().span_id, None)
        if entry is None:
            return  # never seen
        entry.ended = True
        stack = self._stack_var.get()
        if entry not in stack:
            # Ended on another thread or in another task: the hook only speaks for the
            # calling thread, so the owner drops the entry at its next span start or end.
            return
        top = len(stack)
        while top and stack[top - 1].ended:
            top -= 1
        if top == len(stack):
            # ended out of order: the active span stays as it is
            self._stack_var.set(tuple(e for e in stack if e is not entry))
            return
        self._stack_var.set(stack[:top])
        self._activate(stack[top - 1] if top else None)

    def _name_bytes(self, name):
        raw = self._names.get(name)
        if raw is None:
            raw = _ids.name_bytes(name)
            if len(self._names) < 256:  # high-cardinality names are encoded every time
                self._names[name] = raw
        return raw

    def _follow_rename(self, root):
        """The SDK tells processors nothing when update_name() renames a span, so the root's
        current name is compared with the one packed at each hook call of its trace."""
        span = root.span
        if span is None or not self._add_span_name:
            return
        name = span.name
        if name is not root.name and name != root.name:
            root.name, root.name_raw = name, self._name_bytes(name)

    def _activate(self, entry):
        if not self._hook.active():
            return  # nobody listens: do not build the struct
        if entry is None:
            self._hook.clear()
            _current.remember(None)
        else:
            self._follow_rename(entry.root)
            raw = entry.pack()
            self._hook.set(raw)
            _current.remember(raw)  # the running task's span, for spanprof.tasks

    def _log_once(self, what, message):
        if what not in self._logged:
            self._logged.add(what)
            _log.warning(message)

    def _log_error(self, where):
        if "error" not in self._logged:  # one for all callbacks: errors tend to repeat
            self._logged.add("error")
            _log.warning("spanprof: SpanProcessor.%s failed; span skipped (logged once)", where,
                         exc_info=True)


def install(provider, per_task=True, **options):
    """Adds a SpanProcessor(**options) to the SDK's TracerProvider and publishes its resource as
    process context at once (before any span); returns the processor. per_task (default True)
    also gives asyncio tasks and gevent greenlets their own spans (spanprof.tasks.install(),
    which SPANPROF_TASKS=off turns off)."""
    processor = SpanProcessor(**options)
    provider.add_span_processor(processor)
    processor.publish_resource(getattr(provider, "resource", None))
    if per_task and processor._enabled:
        processor._owns_tasks = bool(tasks.install(processor._hook))
    return processor


def _has_attribute_room(span):
    """False when one more attribute would make the SDK evict one (SpanLimits'
    max_span_attributes, default 128). Spans that do not say are assumed to have room."""
    limits = getattr(span, "_limits", None)
    limit = getattr(limits, "max_span_attributes", None)
    if limit is None:
        limit = getattr(getattr(span, "_attributes", None), "maxlen", None)
    if limit is None:
        return True
    attrs = span.attributes
    return attrs is None or len(attrs) < limit or PROFILE_ID_ATTRIBUTE in attrs
