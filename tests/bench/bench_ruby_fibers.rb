# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Benchmark: cost of one fiber switch with per-fiber spans (SpanProf::Fibers) against the same
# switch without them, side by side in one run: two fibers taking turns under a minimal fiber
# scheduler (each turn: the fiber to the scheduler's fiber and back). Columns, ns per turn:
# - plain: the runtime alone (the baseline);
# - on, no span: per-fiber spans on, fibers with no span (each switch costs the check only);
# - own spans, C call: each fiber in its own span, the hook's two calls per turn (hand over the
#   fiber's span, take it back) made, through Fiddle as the binding makes them, to an empty C
#   function (libc's labs) instead: what a hook without a kernel entry costs, near enough (a
#   copy of libspanprof.so would not do: an agent watching every process finds it by its note);
# - own spans, uprobe: the same with the library probed by an agent (as root; skipped otherwise).
# Prints a table; asserts nothing.
HOOKS_RB = File.expand_path("../../hooks/ruby", __dir__)
$LOAD_PATH.unshift(File.join(HOOKS_RB, "lib"))
require "fiddle"
require "tmpdir"
require "spanprof"
require File.join(HOOKS_RB, "test", "agent_run")
require File.join(HOOKS_RB, "test", "mini_scheduler")

N = 20_000 # turns per fiber and run
RUNS = 5
ROUNDS = 3 # the configurations interleaved, so that a busy moment of the machine hits them all

def now_ns
  Process.clock_gettime(Process::CLOCK_MONOTONIC, :nanosecond)
end

# A hook whose set/clear call an empty C function, as the binding calls the real one.
class EmptyCallHook
  def initialize
    @call = Fiddle::Function.new(Fiddle::Handle::DEFAULT["labs"], [Fiddle::TYPE_VOIDP], Fiddle::TYPE_VOID,
                                 need_gvl: true) # as the binding's (Fiddle 1.0.1+)
  end

  def set(raw)
    @call.call(raw)
  end

  def clear
    @call.call(nil)
  end
end

def packed(n)
  SpanProf::Native.pack_span("\x5a".b * 16, [n].pack("Q>"), "\0".b * 8, "bench".b)
end

# Best of RUNS: ns per turn of one fiber; hook nil: per-fiber spans off.
def ns_per_turn(hook, spans)
  RUNS.times.map do
    SpanProf::Fibers.install(hook) if hook
    t = now_ns
    Thread.new do
      Fiber.set_scheduler(MiniScheduler.new)
      spans.each do |span|
        Fiber.schedule do
          SpanProf::Fibers.remember(span) if span # what set_span records, agent or not
          N.times { sleep 0 }
          SpanProf::Fibers.remember(nil)
        end
      end
    end.join
    SpanProf::Fibers.uninstall
    (now_ns - t).to_f / (N * spans.size)
  end.min
end

unless SpanProf.available?
  puts "bench_ruby_fibers: libspanprof.so not found (set SPANPROF_LIBRARY); skipped"
  exit 0
end
unless SpanProf::Fibers.supported?
  puts "bench_ruby_fibers: Ruby #{RUBY_VERSION} has no :fiber_switch trace event; skipped"
  exit 0
end
spans = [packed(1), packed(2)]
row = nil
why = nil
Dir.mktmpdir("spanprof-bench-rbfibers-") do |tmp|
  empty = EmptyCallHook.new
  row = ROUNDS.times.map do
    [ns_per_turn(nil, [nil, nil]), ns_per_turn(empty, [nil, nil]), ns_per_turn(empty, spans)]
  end.transpose.map(&:min) + [nil]
  why = AgentRun.cannot_run
  unless why
    agent = AgentRun::Agent.new(tmp, Process.pid) # profiles this process only
    begin
      if agent.wait_hook_attached(5)
        row[3] = ROUNDS.times.map { ns_per_turn(SpanProf.hook, spans) }.min
      else
        why = "the agent did not attach within 5 s"
      end
    ensure
      agent.stop
    end
  end
end
plain = row[0]
puts format("ruby %s: one fiber turn (to the scheduler's fiber and back), ns, best of %d rounds x %d runs x %d turns",
            RUBY_VERSION, ROUNDS, RUNS, 2 * N)
puts format("%-8s %8s %18s %25s %20s", "", "plain", "on, no span", "own spans, C call", "own spans, uprobe")
puts format("%-8s %8.0f %10.0f (%+5.0f) %17.0f (%+5.0f) %s", "fibers", plain, row[1], row[1] - plain,
            row[2], row[2] - plain, row[3] ? format("%12.0f (%+5.0f)", row[3], row[3] - plain) : format("%20s", "skipped"))
puts "own spans, uprobe: skipped: #{why}" if why
