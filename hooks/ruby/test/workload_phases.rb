# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Test workload, run by test_agent_profile.rb under its own agent (--pid): says "ready", waits
# for "load" on stdin, requires spanprof (which loads libspanprof.so with dlopen) and says
# "loaded", waits for "go" (the test saw its agent attach), then runs span A for ~1 s of CPU,
# span B for ~1 s, no span for ~0.5 s, and prints each phase's CPU time.
$LOAD_PATH.unshift(File.expand_path("../lib", __dir__))

TRACE_ID = "5a5a00000000000000000000000000aa"
SPAN_A = "5a5a000000000001"
SPAN_B = "5a5a000000000002"

def thread_cpu
  Process.clock_gettime(Process::CLOCK_THREAD_CPUTIME_ID)
end

# Spins in Ruby for cpu_seconds of this thread's CPU time; returns the time it took.
def busy(cpu_seconds)
  start = thread_cpu
  x = 0
  while thread_cpu - start < cpu_seconds
    2000.times { |i| x += i }
  end
  thread_cpu - start
end

$stdout.sync = true
$stdout.puts "ready"
exit 1 unless $stdin.gets&.strip == "load"
require "spanprof" # dlopen happens here
$stdout.puts "loaded"
exit 1 unless $stdin.gets&.strip == "go"

ok = SpanProf.set_span(trace_id: TRACE_ID, span_id: SPAN_A, name: "phase-a")
cpu_a = busy(1.0)
ok &= SpanProf.set_span(trace_id: TRACE_ID, span_id: SPAN_B, name: "phase-b")
cpu_b = busy(1.0)
ok &= SpanProf.clear_span
cpu_none = busy(0.5)
$stdout.puts format("ok=%d cpu_a=%.3f cpu_b=%.3f cpu_none=%.3f", ok ? 1 : 0, cpu_a, cpu_b, cpu_none)
