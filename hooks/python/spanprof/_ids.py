# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Trace and span ids in the three spellings callers have (int, bytes, hex text) -> the
big-endian bytes of struct spanprof_span, plus the span name's bounded UTF-8 form."""

NAME_MAX = 256  # SPANPROF_SPAN_NAME_MAX: 255 bytes of name and a NUL


def id_bytes(value, size, what, allow_zero=False):
    """Returns value as `size` big-endian bytes.

    value is an int (as OpenTelemetry's Python SDK keeps ids), bytes of exactly `size`, or a
    hex string of exactly 2 * size digits (either case). None, 0, b"" and "" mean "no id" and
    are accepted only with allow_zero (they give all-zero bytes). Raises ValueError or
    TypeError otherwise, naming `what`.
    """
    if value is None or (not isinstance(value, bool) and value in (0, b"", "")):
        if allow_zero:
            return bytes(size)
        raise ValueError("%s is empty or zero" % what)
    if isinstance(value, bool):
        raise TypeError("%s: expected int, bytes or hex str, got bool" % what)
    if isinstance(value, int):
        if value < 0 or value >> (8 * size):
            raise ValueError("%s does not fit in %d bytes: %r" % (what, size, value))
        return value.to_bytes(size, "big")
    if isinstance(value, (bytes, bytearray, memoryview)):
        raw = bytes(value)
        if len(raw) != size:
            raise ValueError("%s: expected %d bytes, got %d" % (what, size, len(raw)))
    elif isinstance(value, str):
        if len(value) != 2 * size:
            raise ValueError("%s: expected %d hex digits, got %r" % (what, 2 * size, value))
        try:
            # fromhex() would skip spaces; the length check above already rejects them,
            # and a space inside still raises here because the digit count is then odd.
            raw = bytes.fromhex(value)
        except ValueError:
            raise ValueError("%s: not hex: %r" % (what, value)) from None
        if len(raw) != size:
            raise ValueError("%s: not hex: %r" % (what, value))
    else:
        raise TypeError("%s: expected int, bytes or hex str, got %s" % (what, type(value).__name__))
    if not allow_zero and not any(raw):
        raise ValueError("%s is all zero" % what)
    return raw


def name_bytes(name):
    """The span name as UTF-8, cut to 255 bytes without splitting a character."""
    if not name:
        return b""
    if isinstance(name, bytes):
        raw = name
    else:
        raw = str(name).encode("utf-8", "replace")
    if len(raw) < NAME_MAX:
        return raw
    # decode("ignore") drops the partial character the cut may leave at the end.
    return raw[: NAME_MAX - 1].decode("utf-8", "ignore").encode("utf-8")
