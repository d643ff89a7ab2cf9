# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Benchmark: cost of one span start+finish through SpanProf::Otel::SpanProcessor against a
# no-op processor, with no agent and with the agent attached (as root; skipped otherwise).
# Spans are stand-ins with the SDK's documented interface, so the figures are the processor's
# own cost on top of whatever the SDK spends creating a span. Prints a table; asserts nothing.
HOOKS_RB = File.expand_path("../../hooks/ruby", __dir__)
$LOAD_PATH.unshift(File.join(HOOKS_RB, "lib"))
require "tmpdir"
require "spanprof"
require "spanprof/otel"
require File.join(HOOKS_RB, "test", "agent_run")

N = 20_000

# The smallest SDK-shaped span: context ids, flags, parent id, name, attributes.
BenchFlags = Struct.new(:sampled) do
  def sampled?
    sampled
  end
end
BenchContext = Struct.new(:trace_id, :span_id, :trace_flags)
BenchSpan = Struct.new(:name, :context, :parent_span_id, :attributes) do
  def set_attribute(key, value)
    attributes[key] = value
    self
  end
end

class NoopProcessor
  def on_start(_span, _parent_context); end

  def on_finish(_span); end
end

def bench_span(name, span_id, parent = nil)
  trace = ["4bf92f3577b34da6a3ce929d0e0e4736"].pack("H*")
  BenchSpan.new(name, BenchContext.new(trace, [span_id].pack("Q>"), BenchFlags.new(true)),
                parent ? parent.context.span_id : ("\0" * 8).b, {})
end

def now_ns
  Process.clock_gettime(Process::CLOCK_MONOTONIC, :nanosecond)
end

# Best of 5 runs of N start+finish rounds over spans (parents first), in ns per span.
def ns_per_span(processor, spans)
  reversed = spans.reverse
  5.times.map do
    t = now_ns
    N.times do
      spans.each { |s| processor.on_start(s, nil) }
      reversed.each { |s| processor.on_finish(s) }
    end
    (now_ns - t).to_f / (N * spans.size)
  end.min
end

def measure
  root = bench_span("GET /cart", 0x5a5a000000000001)
  child = bench_span("SELECT carts", 0x5a5a000000000002, root)
  missing = SpanProf::Otel::SpanProcessor.new(hook: SpanProf::Native::Hook.new([]))
  [["no-op processor (baseline)", ns_per_span(NoopProcessor.new, [root])],
   ["SpanProcessor, root span", ns_per_span(SpanProf::Otel::SpanProcessor.new, [root])],
   ["SpanProcessor, root + child (per span)", ns_per_span(SpanProf::Otel::SpanProcessor.new, [root, child])],
   ["SpanProcessor, all-spans scope", ns_per_span(SpanProf::Otel::SpanProcessor.new(root_span_only: false), [root, child])],
   ["SpanProcessor, library missing", ns_per_span(missing, [root])]]
end

def cell(rows, i)
  return "skipped" unless rows

  ns = rows[i][1]
  i.zero? ? format("%7.0f         ", ns) : format("%7.0f (%+6.0f)", ns, ns - rows[0][1])
end

unless SpanProf.available?
  puts "bench_ruby_hook: libspanprof.so not found (set SPANPROF_LIBRARY); skipped"
  exit 0
end
puts "note: another agent is attached already; the 'no agent' column includes it" if SpanProf.active?
idle = measure
attached = nil
why = AgentRun.cannot_run
unless why
  Dir.mktmpdir("spanprof-bench-rb-") do |tmp|
    agent = AgentRun::Agent.new(tmp, Process.pid) # profiles this process only
    begin
      if agent.wait_hook_attached(5)
        attached = measure
      else
        why = "the agent did not attach within 5 s"
      end
    ensure
      agent.stop
    end
  end
end
puts format("ruby %s: one span start+finish through the processor, ns (best of 5 x %d); active? via %s",
            RUBY_VERSION, N, SpanProf.hook.active_check)
puts format("%-40s %16s %22s", "", "no agent", "agent attached")
idle.each_index { |i| puts format("%-40s %16s %22s", idle[i][0], cell(idle, i), cell(attached, i)) }
puts "agent attached: skipped: #{why}" if why
