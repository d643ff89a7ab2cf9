# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Ruby workload for the per-fiber spans test: after "go" on stdin, two fibers take turns on one
# thread under a minimal fiber scheduler (hooks/ruby/test/mini_scheduler.rb), each in its own span
# (set once, at its start), each burning CPU in its own method (fiber one: parse_order, fiber two:
# price_cart) in bursts of 3-12 ms of thread CPU time and yielding to the other (sleep 0) between
# bursts, until its own bursts reached SECONDS of CPU time. Prints each fiber's CPU time as it
# measured it (task=1 cpu_ns=...) and cpu_s=.
$LOAD_PATH.unshift(ENV.fetch("SPANPROF_RUBY_LIB"))
require "spanprof"

TRACE = "5a5a0000000000000000000000000001"
SPANS = { 1 => ["5a5a000000000001", "GET /one"], 2 => ["5a5a000000000002", "GET /two"] }.freeze

# The hook tests' fiber scheduler (it knows sleeping only: enough for fibers that take turns).
require File.expand_path("../test/mini_scheduler", ENV.fetch("SPANPROF_RUBY_LIB"))

def now_ns
  Process.clock_gettime(Process::CLOCK_THREAD_CPUTIME_ID, :nanosecond)
end

def parse_order(until_ns)
  n = 0
  while now_ns < until_ns
    i = 0
    while i < 2000
      n += i * i
      i += 1
    end
  end
  n
end

def price_cart(until_ns)
  n = 0
  while now_ns < until_ns
    i = 0
    while i < 2000
      n += i + 1
      i += 1
    end
  end
  n
end

def burst(task)
  t0 = now_ns
  length = 3_000_000 + rand(9_000_000)
  task == 1 ? parse_order(t0 + length) : price_cart(t0 + length)
  now_ns - t0
end

def run_fiber(task, seconds)
  SpanProf.set_span(trace_id: TRACE, span_id: SPANS[task][0], name: SPANS[task][1])
  cpu = 0
  while cpu < seconds * 1e9
    cpu += burst(task)
    sleep 0
  end
  SpanProf.clear_span
  $stdout.puts "task=#{task} cpu_ns=#{cpu}"
end

exit 1 unless $stdin.gets&.strip == "go"
seconds = Float(ARGV.fetch(0))
abort "per-fiber spans did not turn on" unless SpanProf::Fibers.install
Thread.new do
  Fiber.set_scheduler(MiniScheduler.new)
  [1, 2].each { |task| Fiber.schedule { run_fiber(task, seconds) } }
end.join
$stdout.puts format("cpu_s=%.3f", Process.clock_gettime(Process::CLOCK_PROCESS_CPUTIME_ID))
