# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""The ctypes binding: id spellings, the library search order, a missing library, and
spanprof.set_span()/clear_span() over a recording hook and over the real library."""

import ctypes
import logging
import os
import tempfile
import unittest
from unittest import mock

import spanprof
from spanprof import _ids, _native
from tests.fakes import FakeHook

TRACE_HEX = "4bf92f3577b34da6a3ce929d0e0e4736"
SPAN_HEX = "00f067aa0ba902b7"


class IdsTest(unittest.TestCase):
    def test_int_bytes_and_hex_spell_the_same_id(self):
        want = bytes.fromhex(TRACE_HEX)
        self.assertEqual(_ids.id_bytes(int(TRACE_HEX, 16), 16, "t"), want)
        self.assertEqual(_ids.id_bytes(want, 16, "t"), want)
        self.assertEqual(_ids.id_bytes(bytearray(want), 16, "t"), want)
        self.assertEqual(_ids.id_bytes(TRACE_HEX, 16, "t"), want)
        self.assertEqual(_ids.id_bytes(TRACE_HEX.upper(), 16, "t"), want)
        self.assertEqual(_ids.id_bytes(0xf067aa0ba902b7, 8, "s"), bytes.fromhex(SPAN_HEX))

    def test_malformed_ids_raise(self):
        bad = [
            ("00f067aa0ba902b", ValueError),     # 15 digits
            ("00f067aa0ba902b7a", ValueError),   # 17
            ("00f067aa0ba902bg", ValueError),    # not hex
            (" 00f067aa0ba902b", ValueError),    # a space fromhex() would skip
            ("0x00f067aa0ba902", ValueError),    # prefix
            (b"\x01" * 7, ValueError),           # 7 bytes
            (-1, ValueError),
            (1 << 64, ValueError),               # 9 bytes
            (1.5, TypeError),
            (True, TypeError),
            (0, ValueError),                     # zero is OpenTelemetry's invalid id
            ("0" * 16, ValueError),
            (None, ValueError),
        ]
        for value, err in bad:
            with self.subTest(value=value), self.assertRaises(err):
                _ids.id_bytes(value, 8, "span_id")

    def test_zero_root_means_own_root(self):
        for value in (0, None, "", b""):
            self.assertEqual(_ids.id_bytes(value, 8, "root", allow_zero=True), bytes(8))

    def test_name_is_cut_on_a_character_boundary(self):
        self.assertEqual(_ids.name_bytes("GET /a"), b"GET /a")
        self.assertEqual(_ids.name_bytes(None), b"")
        self.assertEqual(_ids.name_bytes("a" * 254 + "€tail"), b"a" * 254)
        self.assertEqual(_ids.name_bytes("b" * 253 + "étail"), b"b" * 253 + "é".encode())
        self.assertEqual(len(_ids.name_bytes("c" * 300)), 255)
        self.assertEqual(_ids.name_bytes("d" * 100), b"d" * 100)  # ABI v1 cut this at 63


class LibrarySearchTest(unittest.TestCase):
    def test_search_order_is_env_then_package_then_system(self):
        paths = _native.candidates(env={"SPANPROF_LIBRARY": "/opt/x/libspanprof.so"},
                                   package_dir="/pkg")
        self.assertEqual(paths[0], "/opt/x/libspanprof.so")
        self.assertEqual(paths[1], "/pkg/libspanprof.so")
        self.assertEqual(paths[-1], "libspanprof.so")
        self.assertEqual(_native.candidates(env={}, package_dir="/pkg")[0], "/pkg/libspanprof.so")

    def test_missing_library_logs_once_and_no_ops(self):
        with tempfile.TemporaryDirectory() as d:
            not_a_lib = os.path.join(d, "libspanprof.so")
            with open(not_a_lib, "w") as f:
                f.write("not an ELF file")
            with self.assertLogs("spanprof", level=logging.WARNING) as logs:
                hook = _native.load([os.path.join(d, "missing.so"), not_a_lib])
        self.assertEqual(len(logs.records), 1)
        self.assertIn("not found", logs.output[0])
        self.assertFalse(hook.loaded)
        self.assertIsNone(hook.path)
        self.assertFalse(hook.active())
        hook.set(b"\0" * 296)
        hook.clear()

    def test_set_span_without_library_returns_false(self):
        with mock.patch.object(spanprof, "_hook", _native.Hook([])):
            self.assertFalse(spanprof.available())
            self.assertFalse(spanprof.set_span(TRACE_HEX, SPAN_HEX))
            self.assertFalse(spanprof.clear_span())
            self.assertIsNone(spanprof.library_path())


class SetSpanTest(unittest.TestCase):
    def setUp(self):
        self.hook = FakeHook()
        patcher = mock.patch.object(spanprof, "_hook", self.hook)
        patcher.start()
        self.addCleanup(patcher.stop)
        patcher = mock.patch.object(spanprof, "_bad_input_logged", False)
        patcher.start()
        self.addCleanup(patcher.stop)

    def test_set_span_passes_the_struct(self):
        self.assertTrue(spanprof.set_span(TRACE_HEX, int(SPAN_HEX, 16), b"\xa1" * 8, "GET /a"))
        self.assertTrue(spanprof.clear_span())
        (kind, _, fields), clear = self.hook.calls
        self.assertEqual(kind, "set")
        self.assertEqual(fields, {"abi": 2, "reserved": 0, "trace_id": TRACE_HEX,
                                  "span_id": SPAN_HEX, "root_span_id": "a1" * 8,
                                  "name": "GET /a"})
        self.assertEqual(clear[0], "clear")

    def test_no_agent_means_nothing_is_built_or_passed(self):
        self.hook.is_active = False
        with mock.patch.object(_native, "pack_span", side_effect=AssertionError("built")):
            self.assertFalse(spanprof.set_span(TRACE_HEX, SPAN_HEX))
        self.assertFalse(spanprof.clear_span())
        self.assertEqual(self.hook.calls, [])

    def test_malformed_ids_are_logged_once_and_never_raise(self):
        with self.assertLogs("spanprof", level=logging.WARNING) as logs:
            self.assertFalse(spanprof.set_span("nothex", SPAN_HEX))
            self.assertFalse(spanprof.set_span(TRACE_HEX, 0))
            self.assertFalse(spanprof.set_span(TRACE_HEX, SPAN_HEX, root_span_id=3.5))
        self.assertEqual(len(logs.records), 1)
        self.assertIn("trace_id", logs.output[0])
        self.assertEqual(self.hook.calls, [])


class RealLibraryTest(unittest.TestCase):
    """The library this run built (SPANPROF_LIBRARY, set by `make hook-tests`)."""

    def setUp(self):
        path = os.environ.get("SPANPROF_LIBRARY")
        if not path or not os.path.exists(path):
            self.skipTest("SPANPROF_LIBRARY does not name a built libspanprof.so (run `make`)")
        self.path = path

    def test_package_loaded_the_library_named_by_the_environment(self):
        self.assertTrue(spanprof.available())
        self.assertEqual(spanprof.library_path(), self.path)

    def test_real_calls_do_not_fail_with_or_without_an_agent(self):
        hook = _native.Hook([self.path])
        self.assertTrue(hook.loaded)
        self.assertIn(hook.active(), (True, False))
        # Whether or not an agent listens, the hook accepts a span and NULL.
        hook.set(_native.pack_span(bytes.fromhex(TRACE_HEX), bytes.fromhex(SPAN_HEX), bytes(8),
                                   b"x"))
        hook.clear()
        self.assertIn(spanprof.set_span(TRACE_HEX, SPAN_HEX), (True, False))
        spanprof.clear_span()

    def test_resource_is_published_as_process_context(self):
        hook = _native.Hook([self.path])
        self.assertEqual(hook.publish_context({"service.name": "py-in-code",
                                               "service.namespace": "shop"}), 0)
        with open("/proc/self/maps") as f:
            lines = [line for line in f if "OTEL_CTX" in line]
        self.assertEqual(len(lines), 1, "one OTEL_CTX mapping (OTEP 4719: a singleton)")
        start = int(lines[0].split("-")[0], 16)
        header = ctypes.string_at(start, 32)
        self.assertEqual(header[:8], b"OTEL_CTX")
        size, ptr = int.from_bytes(header[12:16], "little"), int.from_bytes(header[24:], "little")
        payload = ctypes.string_at(ptr, size)
        self.assertIn(b"\x0a\x0cservice.name\x12\x0c\x0a\x0apy-in-code", payload)


if __name__ == "__main__":
    unittest.main()
