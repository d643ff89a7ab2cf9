# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Python workload for the interpreter-frames test: `spans GATE SECONDS` alternates two busy
functions in two spans on one thread; `threads GATE SECONDS` runs one function per thread, each
in its own span; `gil GATE SECONDS` runs hash_blob() (hashlib on 4 MiB blocks: C code that
releases the GIL) in one thread's span beside price_cart() in another's. It starts once the file GATE exists and the agent's hook is attached and prints the
CPU seconds it used. Durations are the thread's own CPU time (time.thread_time), so a starved
run still gives each function its share of samples."""
import hashlib
import os
import random
import sys
import threading
import time

import spanprof

TRACE = "5a5a0000000000000000000000000001"
SPAN_1 = "5a5a000000000001"
SPAN_2 = "5a5a000000000002"


def parse_order(until):
    n = 0
    while time.thread_time() < until:
        n += sum(i * i for i in range(400))
    return n


def price_cart(until):
    n = 0
    while time.thread_time() < until:
        n += sum(i + 1 for i in range(400))
    return n


def hash_blob(until):
    blob = b"\x5a" * (4 << 20)
    n = 0
    while time.thread_time() < until:
        n += hashlib.sha256(blob).digest()[0]  # > 2 KiB: hashed with the GIL released
    return n


def in_span(span, name, func, seconds):
    spanprof.set_span(TRACE, span, 0, name)
    func(time.thread_time() + seconds)
    spanprof.clear_span()


def alternate(seconds):
    # Spans of 10-30 ms, drawn at random: spans of a fixed length that divides the 10 ms between
    # samples lock onto the sampling phase, and one span may then get nearly every sample. Samples
    # in the binding's set/clear calls belong to the span but not to its function: the longer the
    # span, the smaller their share (3-8 ms spans gave 1-2.5%).
    end = time.thread_time() + seconds
    while time.thread_time() < end:
        in_span(SPAN_1, "GET /one", parse_order, random.uniform(0.010, 0.030))
        in_span(SPAN_2, "GET /two", price_cart, random.uniform(0.010, 0.030))


def thread_one(seconds):
    in_span(SPAN_1, "GET /one", parse_order, seconds)


def thread_two(seconds):
    in_span(SPAN_2, "GET /two", price_cart, seconds)


def main():
    mode, gate, seconds = sys.argv[1], sys.argv[2], float(sys.argv[3])
    deadline = time.monotonic() + 60
    while not os.path.exists(gate) and time.monotonic() < deadline:
        time.sleep(0.01)
    while not spanprof.active() and time.monotonic() < deadline:  # the agent's uprobe is on
        time.sleep(0.01)
    if mode == "spans":
        alternate(seconds)
    else:
        first = thread_one
        if mode == "gil":
            def first(sec):
                in_span(SPAN_1, "GET /hash", hash_blob, sec)
        threads = [threading.Thread(target=first, args=(seconds,), name="one"),
                   threading.Thread(target=thread_two, args=(seconds,), name="two")]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    print("cpu %.3f" % time.process_time(), flush=True)


if __name__ == "__main__":
    main()
