# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# spanprof quickstart for Ruby: two kinds of request, each in its own span, through the binding
# in hooks/ruby (no OpenTelemetry SDK needed here; with one, add SpanProf::Otel::SpanProcessor
# instead of calling set_span/clear_span). Run it under the agent and open one span's profile
# with go tool pprof (README, "Quickstart: Ruby").
require "spanprof"

TRACE = "c1000000000000000000000000000001"

def now
  Process.clock_gettime(Process::CLOCK_MONOTONIC)
end

def parse_order(seconds)
  finish = now + seconds
  n = 0
  n += (1..100).sum { |i| i * i } while now < finish
  n
end

def price_cart(seconds)
  finish = now + seconds
  n = 0
  n += (1..100).sum { |i| i + 1 } while now < finish
  n
end

def handle(span_id, name, work)
  SpanProf.set_span(trace_id: TRACE, span_id: span_id, name: name) # active on this thread
  method(work).call(0.02)
ensure
  SpanProf.clear_span # no span active any more
end

finish = now + 120 # until stopped: two minutes at most
while now < finish
  handle("c100000000000001", "POST /order", :parse_order)
  handle("c100000000000002", "GET /cart", :price_cart)
end
