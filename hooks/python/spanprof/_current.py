# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Which span the hook was last given, per context and per thread.

The span a piece of code runs in is kept in a ContextVar, as OpenTelemetry keeps its own: each
asyncio task runs in its own copy of the context and each greenlet in its own context, so the
value follows the task. What the hook last received is kept per thread, because the hook speaks
for the calling thread. At a task switch, switch_to() hands the hook the running task's span
unless the thread's hook already holds it."""

import contextvars
import threading

# The packed struct spanprof_span (bytes) of the running code's span, or None for no span.
span = contextvars.ContextVar("spanprof_span", default=None)


class _Thread(threading.local):
    published = None  # what this thread's hook holds: packed bytes, or None for no span


_thread = _Thread()


def published():
    """What the calling thread's hook holds: packed bytes, or None."""
    return _thread.published


def remember(raw):
    """Records that the hook was just given raw (None: cleared) by the running code."""
    span.set(raw)
    _thread.published = raw


def switch_to(hook, raw):
    """Gives the calling thread's hook raw (None: no span) unless it holds that already."""
    if raw is not _thread.published:
        _thread.published = raw
        if raw is None:
            hook.clear()
        else:
            hook.set(raw)
