# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Ruby workload for the interpreter-frames test, after "go" on stdin, for SECONDS of CPU time:
# `spans SECONDS` alternates two spans on one thread, each running a named method that calls a
# hot method burning CPU in plain Ruby (handle_order -> parse_order, handle_cart -> price_cart);
# `threads SECONDS` runs two threads, each in its own span: thread_one -> parse_order in plain
# Ruby, thread_two -> checksum_cart in a C extension (Zlib.crc32, native code of libz).
# Prints cpu_s=.
$LOAD_PATH.unshift(ENV.fetch("SPANPROF_RUBY_LIB"))
require "spanprof"
require "zlib"

TRACE = "5a5a0000000000000000000000000001"
SPAN_1 = "5a5a000000000001"
SPAN_2 = "5a5a000000000002"

def now
  Process.clock_gettime(Process::CLOCK_THREAD_CPUTIME_ID) # per thread: load only slows it
end

def parse_order(until_t)
  n = 0
  while now < until_t
    i = 0
    while i < 2000
      n += i * i
      i += 1
    end
  end
  n
end

def price_cart(until_t)
  n = 0
  while now < until_t
    i = 0
    while i < 2000
      n += i + 1
      i += 1
    end
  end
  n
end

def checksum_cart(until_t, data)
  n = 0
  n ^= Zlib.crc32(data) while now < until_t
  n
end

def handle_order(seconds)
  parse_order(now + seconds)
end

def handle_cart(seconds)
  price_cart(now + seconds)
end

def in_span(span, name)
  SpanProf.set_span(trace_id: TRACE, span_id: span, name: name)
  yield
  SpanProf.clear_span
end

def thread_one(seconds)
  in_span(SPAN_1, "GET /order") { parse_order(now + seconds) }
end

def thread_two(seconds)
  data = "spanprof" * (1 << 17)
  in_span(SPAN_2, "GET /cart") { checksum_cart(now + seconds, data) }
end

exit 1 unless $stdin.gets&.strip == "go"
mode = ARGV.fetch(0)
seconds = Float(ARGV.fetch(1))
if mode == "threads"
  [Thread.new { thread_one(seconds) }, Thread.new { thread_two(seconds) }].each(&:join)
else
  finish = now + seconds
  while now < finish
    in_span(SPAN_1, "GET /order") { handle_order(0.01) }
    in_span(SPAN_2, "GET /cart") { handle_cart(0.01) }
  end
end
$stdout.puts format("cpu_s=%.3f", Process.clock_gettime(Process::CLOCK_PROCESS_CPUTIME_ID))
