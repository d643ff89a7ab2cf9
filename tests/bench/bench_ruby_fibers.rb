# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Benchmark: cost of one fiber switch with per-fiber spans (SpanProf::Fibers) against the same
# switch without them, side by side in one run: two fibers taking turns under a minimal fiber
# scheduler (each turn: the fiber to the scheduler's fiber and back). Columns, ns per turn:
# - plain: the runtime alone (the baseline);
# - on, no span: per-fiber spans on, fibers with no span (each switch costs the check only);
# - own spans, plain call: each fiber in its own span, the hook a copy of libspanprof.so that no
#   agent probes (uprobes go by file): each turn is two plain calls of the hook function, what a
#   hook without a kernel entry costs;
# - own spans, uprobe: the same with the library probed by an agent (as root; skipped otherwise).
# Prints a table; asserts nothing.
HOOKS_RB = File.expand_path("../../hooks/ruby", __dir__)
$LOAD_PATH.unshift(File.join(HOOKS_RB, "lib"))
require "fileutils"
require "tmpdir"
require "spanprof"
require File.join(HOOKS_RB, "test", "agent_run")
require File.join(HOOKS_RB, "test", "mini_scheduler")

N = 20_000 # turns per fiber and run
RUNS = 5

def now_ns
  Process.clock_gettime(Process::CLOCK_MONOTONIC, :nanosecond)
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
  copy = File.join(tmp, "libspanprof-unprobed.so")
  FileUtils.cp(SpanProf.library_path, copy)
  plain_hook = SpanProf::Native::Hook.new([copy])
  row = [ns_per_turn(nil, [nil, nil]), ns_per_turn(plain_hook, [nil, nil]), ns_per_turn(plain_hook, spans), nil]
  why = AgentRun.cannot_run
  unless why
    agent = AgentRun::Agent.new(tmp, Process.pid) # profiles this process only
    begin
      if agent.wait_hook_attached(5)
        row[3] = ns_per_turn(SpanProf.hook, spans)
      else
        why = "the agent did not attach within 5 s"
      end
    ensure
      agent.stop
    end
  end
end
plain = row[0]
puts format("ruby %s: one fiber turn (to the scheduler's fiber and back), ns, best of %d x %d turns",
            RUBY_VERSION, RUNS, 2 * N)
puts format("%-8s %8s %18s %25s %20s", "", "plain", "on, no span", "own spans, plain call", "own spans, uprobe")
puts format("%-8s %8.0f %10.0f (%+5.0f) %17.0f (%+5.0f) %s", "fibers", plain, row[1], row[1] - plain,
            row[2], row[2] - plain, row[3] ? format("%12.0f (%+5.0f)", row[3], row[3] - plain) : format("%20s", "skipped"))
puts "own spans, uprobe: skipped: #{why}" if why
