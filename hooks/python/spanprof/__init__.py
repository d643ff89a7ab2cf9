# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""spanprof for Python: tells the spanprof agent which OpenTelemetry span is active on the
calling thread, so its CPU samples carry that span's id.

    import spanprof
    spanprof.set_span(trace_id, span_id, root_span_id, "GET /cart")   # this thread is in the span
    ...
    spanprof.clear_span()                                              # ... and no longer

Most applications use spanprof.otel.SpanProcessor instead, which does this for every span.
The library (libspanprof.so) is loaded when this package is imported; a running agent notices
within about a second and only sees spans set after that.
"""

import logging

from . import _current, _ids, _native

__version__ = "0.1.0"
__all__ = ["set_span", "clear_span", "active", "available", "library_path"]

_log = logging.getLogger("spanprof")
_hook = _native.load()
_bad_input_logged = False


def set_span(trace_id, span_id, root_span_id=0, name=""):
    """Marks the span as active on the calling thread, until the next set_span() or clear_span().

    trace_id (16 bytes) and span_id (8 bytes) are each an int (as the OpenTelemetry SDK keeps
    them), big-endian bytes, or hex text ("4bf92f3577b34da6a3ce929d0e0e4736"), and not zero.
    root_span_id is the id of the span's local root (the first span of the trace in this
    process) in the same spellings; 0 / None / "" mean the span is its own local root.
    name is the local root span's name (str or UTF-8 bytes), cut to 255 bytes.

    Returns True when the span was handed to an attached agent, False when nobody listens
    (no agent, no library) or the ids were malformed (logged once). Never raises.
    """
    if not _hook.active():
        return False  # nobody listens: do not even build the struct
    try:
        raw = _native.pack_span(_ids.id_bytes(trace_id, 16, "trace_id"),
                                _ids.id_bytes(span_id, 8, "span_id"),
                                _ids.id_bytes(root_span_id, 8, "root_span_id", allow_zero=True),
                                _ids.name_bytes(name))
    except (TypeError, ValueError) as e:
        _log_bad_input(e)
        return False
    _hook.set(raw)
    _current.remember(raw)  # the running task's span (spanprof.tasks)
    return True


def clear_span():
    """No span is active on the calling thread any more. Returns True if an agent listened."""
    if not _hook.active():
        return False
    _hook.clear()
    _current.remember(None)
    return True


def active():
    """True while a spanprof agent has the hook attached in this process."""
    return _hook.active()


def available():
    """True when libspanprof.so was loaded (spans can reach an agent once one attaches)."""
    return _hook.loaded


def library_path():
    """The path libspanprof.so was loaded from, or None."""
    return _hook.path


def _log_bad_input(err):
    global _bad_input_logged
    if not _bad_input_logged:
        _bad_input_logged = True
        _log.warning("spanprof: span ignored: %s (further malformed ids are not logged)", err)
