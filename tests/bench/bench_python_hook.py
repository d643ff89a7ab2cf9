# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Benchmark: cost of one span start+end through spanprof.otel.SpanProcessor against a no-op
processor, with no agent and with the agent attached (as root; skipped otherwise). Spans are
stand-ins with the SDK's documented interface, so the figures are the processor's own cost on
top of whatever the SDK spends creating a span. Prints a table; asserts nothing."""

import os
import sys
import tempfile
import time

HOOKS_PY = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "hooks", "python")
sys.path.insert(0, HOOKS_PY)

import spanprof  # noqa: E402  (loads libspanprof.so)
from spanprof import _native, otel  # noqa: E402
from tests import agent_run  # noqa: E402
from tests.fakes import Span  # noqa: E402

N = 20000


class NoopProcessor:
    def on_start(self, span, parent_context=None):
        pass

    def on_end(self, span):
        pass


def ns_per_span(processor, spans):
    """Best of 5 runs of N start+end pairs (each pair of spans: parent started first)."""
    best = float("inf")
    on_start, on_end = processor.on_start, processor.on_end
    for _ in range(5):
        t = time.perf_counter_ns()
        for _ in range(N):
            for s in spans:
                on_start(s)
            for s in reversed(spans):
                on_end(s)
        best = min(best, (time.perf_counter_ns() - t) / (N * len(spans)))
    return best


def measure():
    root = Span("GET /cart")
    child = root.child("SELECT carts")
    rows = [("no-op processor (baseline)", ns_per_span(NoopProcessor(), [root]))]
    rows.append(("SpanProcessor, root span", ns_per_span(otel.SpanProcessor(), [root])))
    rows.append(("SpanProcessor, root + child (per span)",
                 ns_per_span(otel.SpanProcessor(), [root, child])))
    rows.append(("SpanProcessor, all-spans scope",
                 ns_per_span(otel.SpanProcessor(root_span_only=False), [root, child])))
    missing = otel.SpanProcessor(hook=_native.Hook([]))
    rows.append(("SpanProcessor, library missing", ns_per_span(missing, [root])))
    return rows


def main():
    if not spanprof.available():
        print("bench_python_hook: libspanprof.so not found (set SPANPROF_LIBRARY); skipped")
        return 0
    if spanprof.active():
        print("note: another agent is attached already; the 'no agent' column includes it")
    idle = measure()
    attached, why = None, agent_run.cannot_run()
    if not why:
        with tempfile.TemporaryDirectory(prefix="spanprof-bench-py-") as tmp:
            agent = agent_run.Agent(tmp, os.getpid())  # profiles this process only
            try:
                if agent.wait_hook_attached(5):
                    attached = measure()
                else:
                    why = "the agent did not attach within 5 s"
            finally:
                agent.stop()
    base_idle = idle[0][1]
    base_att = attached[0][1] if attached else None
    print("python %s: one span start+end through the processor, ns (best of 5 x %d)"
          % (sys.version.split()[0], N))
    print("%-40s %16s %22s" % ("", "no agent", "agent attached"))
    for i, (name, ns) in enumerate(idle):
        left = "%7.0f (%+6.0f)" % (ns, ns - base_idle) if i else "%7.0f         " % ns
        if attached:
            a = attached[i][1]
            right = "%7.0f (%+6.0f)" % (a, a - base_att) if i else "%7.0f         " % a
        else:
            right = "skipped"
        print("%-40s %16s %22s" % (name, left, right))
    if why:
        print("agent attached: skipped: %s" % why)
    return 0


if __name__ == "__main__":
    sys.exit(main())
