# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Finds and loads libspanprof.so with ctypes and wraps its two functions; when the library is
missing, logs once and hands out a hook whose calls do nothing."""

import ctypes
import ctypes.util
import logging
import os
import struct

log = logging.getLogger("spanprof")

ABI_VERSION = 2  # SPANPROF_SPAN_ABI_VERSION
# struct spanprof_span: abi_version, reserved, trace_id[16], span_id[8], root_span_id[8], name[256]
SPAN_STRUCT = struct.Struct("<II16s8s8s256s")
assert SPAN_STRUCT.size == 296


def pack_span(trace_id, span_id, root_span_id, name):
    """The 296 bytes of a struct spanprof_span; ids are big-endian bytes, name UTF-8 (< 256)."""
    return SPAN_STRUCT.pack(ABI_VERSION, 0, trace_id, span_id, root_span_id, name)


def candidates(env=None, package_dir=None):
    """Where to look for the library, in order: $SPANPROF_LIBRARY, a copy next to this package
    (a wheel may bundle one), then the system's (ctypes.util.find_library, then the dynamic
    loader's own search by soname)."""
    env = os.environ if env is None else env
    package_dir = os.path.dirname(os.path.abspath(__file__)) if package_dir is None else package_dir
    paths = []
    if env.get("SPANPROF_LIBRARY"):
        paths.append(env["SPANPROF_LIBRARY"])
    paths.append(os.path.join(package_dir, "libspanprof.so"))
    found = ctypes.util.find_library("spanprof")
    if found:
        paths.append(found)
    paths.append("libspanprof.so")
    return paths


class Hook:
    """The loaded library, or nothing (path is None) when no candidate could be loaded.

    set(raw) passes 296 packed bytes to spanprof_span_set(); clear() passes NULL; active()
    tells whether an agent has the hook attached. None of them raise.
    """

    def __init__(self, paths):
        self.path = None
        self.error = None
        self._set = self._active = self._publish = None
        errors = []
        for path in paths:
            if os.sep in path and not os.path.exists(path):
                errors.append("%s: no such file" % path)
                continue
            try:
                # PyDLL keeps the GIL during the call: the hook is a few instructions (or one
                # uprobe hit), far cheaper than giving the GIL away and taking it back.
                lib = ctypes.PyDLL(path)
                span_set = lib.spanprof_span_set
                active = lib.spanprof_active
            except (OSError, AttributeError) as e:
                errors.append("%s: %s" % (path, e))
                continue
            span_set.argtypes = [ctypes.c_char_p]
            span_set.restype = None
            active.argtypes = []
            active.restype = ctypes.c_int
            self.path, self._set, self._active, self._lib = path, span_set, active, lib
            self._publish = getattr(lib, "spanprof_process_context_publish", None)
            if self._publish is not None:  # libraries built before it lack it
                self._publish.argtypes = [ctypes.POINTER(ctypes.c_char_p),
                                          ctypes.POINTER(ctypes.c_char_p), ctypes.c_size_t]
                self._publish.restype = ctypes.c_int
            return
        self.error = "; ".join(errors)

    @property
    def loaded(self):
        return self._set is not None

    def active(self):
        return self._active is not None and self._active() != 0

    def set(self, raw):
        if self._set is not None:
            self._set(raw)

    def clear(self):
        if self._set is not None:
            self._set(None)

    def publish_context(self, attributes):
        """Publishes {key: str} as OpenTelemetry process context (OTEP 4719), where the agent
        reads the service name. Returns 0 or a negative errno (-ENOSYS without the library)."""
        if self._publish is None:
            return -38
        items = [(str(k).encode("utf-8", "replace"), str(v).encode("utf-8", "replace"))
                 for k, v in attributes.items()]
        keys = (ctypes.c_char_p * max(len(items), 1))(*[k for k, _ in items])
        values = (ctypes.c_char_p * max(len(items), 1))(*[v for _, v in items])
        return self._publish(keys, values, len(items))


def load(paths=None):
    """Loads the hook from the first candidate that works; logs once when none does."""
    hook = Hook(candidates() if paths is None else paths)
    if hook.loaded:
        log.debug("spanprof: using %s", hook.path)
    else:
        log.warning("spanprof: libspanprof.so not found, span profiling is off (%s); set "
                    "SPANPROF_LIBRARY to its path", hook.error)
    return hook
