# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""spanprof quickstart for Python: two kinds of request, each in its own span, through the
binding in hooks/python (no OpenTelemetry SDK needed here; with one, use
spanprof.otel.install(provider) instead of set_span/clear_span). Run it under the agent and
open one span's profile with go tool pprof (README, "Quickstart: Python")."""
import time

import spanprof

TRACE = "b1000000000000000000000000000001"


def parse_order(seconds):
    end, n = time.monotonic() + seconds, 0
    while time.monotonic() < end:
        n += sum(i * i for i in range(100))
    return n


def price_cart(seconds):
    end, n = time.monotonic() + seconds, 0
    while time.monotonic() < end:
        n += sum(i + 1 for i in range(100))
    return n


def handle(span_id, name, work):
    spanprof.set_span(TRACE, span_id, 0, name)  # this span is now active on this thread
    try:
        work(0.02)
    finally:
        spanprof.clear_span()  # no span active any more


def main():
    end = time.monotonic() + 120  # until stopped: two minutes at most
    while time.monotonic() < end:
        handle("b100000000000001", "POST /order", parse_order)
        handle("b100000000000002", "GET /cart", price_cart)


if __name__ == "__main__":
    main()
