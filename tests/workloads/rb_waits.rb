# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Ruby workload for the off-CPU interpreter test: `rb_waits.rb GATE ITERATIONS`. Once the file
# GATE exists, one thread runs ITERATIONS spans ("GET /wait"); each waits in two methods of its
# own: wait_for_db sleeps 10 ms (Kernel#sleep), wait_for_lock waits on a ConditionVariable that a
# helper thread signals about 20 ms after it was asked. It prints the time it spent off the CPU
# in each ("off_cpu_ns wait_for_db N": wall minus thread CPU time) and how much of that it was
# runnable, waiting for a CPU ("run_delay_ns wait_for_db N": the kernel's run-queue time of the
# thread, /proc/thread-self/schedstat), then stays until GATE.end exists, so the agent reads its
# stacks while it lives. Ruby 3.1 yields the CPU (sched_yield) before the sleep in wait_for_db:
# on a busy machine that alone keeps the thread runnable, off the CPU, for tens of milliseconds.
$LOAD_PATH.unshift(ENV.fetch("SPANPROF_RUBY_LIB"))
require "spanprof"

TRACE = "3c3c0000000000000000000000000003"
SPAN = "7777000000000003"

def wait_for_db
  sleep(0.010)
end

def wait_for_lock(lock, cond, state)
  lock.synchronize do
    deadline = Process.clock_gettime(Process::CLOCK_MONOTONIC) + 5
    until state[:ready]
      left = deadline - Process.clock_gettime(Process::CLOCK_MONOTONIC)
      abort("the helper thread never signalled") if left <= 0
      cond.wait(lock, left)
    end
    state[:ready] = false
  end
end

def clock_ns(id)
  Process.clock_gettime(id, :nanosecond)
end

# The thread's time on a run queue so far: the second field of its schedstat.
def run_delay_ns
  Integer(File.read("/proc/thread-self/schedstat").split[1])
end

# [off-CPU time, run-queue time] of the block: the second is part of the first.
def off_cpu_of
  delay = run_delay_ns
  wall = clock_ns(Process::CLOCK_MONOTONIC)
  cpu = clock_ns(Process::CLOCK_THREAD_CPUTIME_ID)
  yield
  off = (clock_ns(Process::CLOCK_MONOTONIC) - wall) - (clock_ns(Process::CLOCK_THREAD_CPUTIME_ID) - cpu)
  [off, run_delay_ns - delay]
end

def wait_file(path)
  deadline = Process.clock_gettime(Process::CLOCK_MONOTONIC) + 60
  until File.exist?(path)
    abort("no #{path} within 60 s") if Process.clock_gettime(Process::CLOCK_MONOTONIC) > deadline
    sleep(0.01)
  end
end

gate = ARGV.fetch(0)
iterations = Integer(ARGV.fetch(1))
wait_file(gate)
lock = Mutex.new
cond = ConditionVariable.new
state = { ready: false }
requests = Queue.new
Thread.new do
  while requests.pop
    sleep(0.020)
    lock.synchronize do
      state[:ready] = true
      cond.signal
    end
  end
end
off = { db: [0, 0], lock: [0, 0] }
add = ->(kind, pair) { off[kind] = off[kind].zip(pair).map(&:sum) }
iterations.times do
  SpanProf.set_span(trace_id: TRACE, span_id: SPAN, name: "GET /wait")
  add.call(:db, off_cpu_of { wait_for_db })
  requests.push(true)
  add.call(:lock, off_cpu_of { wait_for_lock(lock, cond, state) })
  SpanProf.clear_span
end
requests.push(nil)
$stdout.puts "run_delay_ns wait_for_db #{off[:db][1]}"
$stdout.puts "run_delay_ns wait_for_lock #{off[:lock][1]}"
$stdout.puts "off_cpu_ns wait_for_db #{off[:db][0]}"
$stdout.puts "off_cpu_ns wait_for_lock #{off[:lock][0]}"
$stdout.flush
wait_file("#{gate}.end")
