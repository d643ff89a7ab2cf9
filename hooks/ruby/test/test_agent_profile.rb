# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# The binding for real: the agent attaches to the libspanprof.so a Ruby process loads on
# require, and the profiles of that service carry span A and B in the shares the process spent
# in each, and no span while it ran with the span cleared. Needs root; skips otherwise.
require_relative "test_helper"
require_relative "agent_run"
require "fileutils"
require "open3"
require "rbconfig"
require "timeout"
require "tmpdir"

class AgentProfileTest < Minitest::Test
  SPAN_A = "5a5a000000000001"
  SPAN_B = "5a5a000000000002"
  TRACE = "5a5a00000000000000000000000000aa"

  def setup
    why = AgentRun.cannot_run
    skip why if why
    @tmp = Dir.mktmpdir("spanprof-rbhook-")
    @service = "spanprof-rbtest-#{Process.pid}"
  end

  def teardown
    FileUtils.rm_rf(@tmp) if @tmp
  end

  def now
    Process.clock_gettime(Process::CLOCK_MONOTONIC)
  end

  # Runs the workload under its own agent; returns the agent and the phases' CPU seconds.
  def run_workload
    env = { "OTEL_SERVICE_NAME" => @service, "SPANPROF_LIBRARY" => AgentRun::LIBRARY }
    script = File.join(__dir__, "workload_phases.rb")
    agent = nil
    status = nil
    out = nil
    Open3.popen2(env, RbConfig.ruby, script) do |stdin, stdout, wait|
      begin
        assert_equal "ready\n", stdout.gets
        agent = AgentRun::Agent.new(@tmp, wait.pid)
        stdin.puts "load"
        stdin.flush
        assert_equal "loaded\n", stdout.gets
        start = now
        # The agent finds a library mapped by dlopen at run time within 1 s.
        assert agent.wait_hook_attached(5), agent.log
        after = now - start
        warn format("\n  ruby: agent attached %.3f s after require", after)
        assert_operator after, :<, 1.0, agent.log
        stdin.puts "go"
        stdin.close
        out = Timeout.timeout(60) { stdout.read }
        assert wait.value.success?, "workload failed: #{out}"
      ensure
        Process.kill("KILL", wait.pid) if wait.alive?
        status = agent&.stop
      end
    end
    assert_equal 0, status, agent.log
    m = out.match(/ok=1 cpu_a=([\d.]+) cpu_b=([\d.]+) cpu_none=([\d.]+)/)
    assert m, "workload said #{out.inspect}"
    [agent, m.captures.map(&:to_f)]
  end

  def test_ruby_spans_label_their_samples_and_clearing_stops_it
    agent, (cpu_a, cpu_b, cpu_none) = run_workload
    counts, triples, files = AgentRun.span_census(agent.out, @service)
    refute_empty files, "no profile of service #{@service} in #{agent.out}"
    msg = format("samples per span_id %s; CPU a=%.2f b=%.2f none=%.2f s", counts, cpu_a, cpu_b, cpu_none)
    assert_equal [SPAN_A, SPAN_B], counts.keys.compact.sort, msg
    assert_equal [[SPAN_A, TRACE, "phase-a"], [SPAN_B, TRACE, "phase-b"]], triples.sort
    a = counts[SPAN_A]
    b = counts[SPAN_B]
    none = counts[nil]
    warn format("\n  ruby under the agent: samples A=%d B=%d none=%d (CPU s: %.2f %.2f %.2f)",
                a, b, none, cpu_a, cpu_b, cpu_none)
    # Samples per CPU second within the band, for each phase.
    [[a, cpu_a], [b, cpu_b], [none, cpu_none]].each do |n, cpu|
      assert_operator n, :>=, AgentRun::RATE_MIN * AgentRun::HZ * cpu, msg
      assert_operator n, :<=, AgentRun::RATE_MAX * AgentRun::HZ * cpu + 5, msg
    end
    # A and B at the same rate per CPU second: had clear_span not worked, B would also hold the
    # cleared phase (1.5x A's rate).
    rate_a = a / cpu_a
    rate_b = b / cpu_b
    assert_operator (rate_a - rate_b).abs / [rate_a, rate_b].max, :<, 0.25, msg
  end
end
