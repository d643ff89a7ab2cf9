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
  HZ = 100 # the agent's default sampling frequency

  def setup
    why = AgentRun.cannot_run
    skip why if why
    @tmp = Dir.mktmpdir("spanprof-rbhook-")
    @service = "spanprof-rbtest-#{Process.pid}"
  end

  def teardown
    FileUtils.rm_rf(@tmp) if @tmp
  end

  def run_workload(agent)
    env = { "OTEL_SERVICE_NAME" => @service, "SPANPROF_LIBRARY" => AgentRun::LIBRARY }
    script = File.join(__dir__, "workload_phases.rb")
    Open3.popen2(env, RbConfig.ruby, script) do |stdin, stdout, wait|
      attach = stdout.gets.to_s
      m = attach.match(/attached=(\d) after_s=([\d.]+)/)
      assert m, "workload said #{attach.inspect}"
      assert_equal "1", m[1], "the agent never attached to the library"
      # The agent finds a library mapped by dlopen at run time within 1 s.
      assert_operator m[2].to_f, :<, 1.0, attach
      warn format("\n  ruby: agent attached %.3f s after require", m[2].to_f)
      # spanprof_active() is shared by every agent on the machine; make sure it is ours.
      assert agent.wait_log("span hook attached", 3), agent.log
      stdin.puts "go"
      stdin.close
      out = Timeout.timeout(30) { stdout.read }
      assert wait.value.success?, "workload failed: #{out}"
      m = out.match(/ok=1 cpu_a=([\d.]+) cpu_b=([\d.]+) cpu_none=([\d.]+)/)
      assert m, "workload said #{out.inspect}"
      m.captures.map(&:to_f)
    end
  end

  def test_ruby_spans_label_their_samples_and_clearing_stops_it
    agent = AgentRun::Agent.new(@tmp)
    begin
      cpu_a, cpu_b, cpu_none = run_workload(agent)
    ensure
      status = agent.stop
    end
    assert_equal 0, status, agent.log

    counts, triples, files = AgentRun.span_census(agent.out, @service)
    refute_empty files, "no profile of service #{@service} in #{agent.out}"
    msg = format("samples per span_id %s; CPU a=%.2f b=%.2f none=%.2f s", counts, cpu_a, cpu_b, cpu_none)
    assert_equal [SPAN_A, SPAN_B], counts.keys.compact.sort, msg
    assert_equal [[SPAN_A, TRACE, "phase-a"], [SPAN_B, TRACE, "phase-b"]], triples.sort
    a = counts[SPAN_A]
    b = counts[SPAN_B]
    warn format("\n  ruby under the agent: samples A=%d B=%d none=%d (CPU s: %.2f %.2f %.2f)",
                a, b, counts[nil], cpu_a, cpu_b, cpu_none)
    # About 100 samples per CPU second, and A and B in about equal shares.
    assert_operator a, :>, 0.7 * HZ * cpu_a, msg
    assert_operator a, :<, 1.3 * HZ * cpu_a + 5, msg
    assert_operator b, :>, 0.7 * HZ * cpu_b, msg
    # Had clear_span not worked, B would also hold the cleared phase: ~1.5x A.
    assert_operator b, :<, 1.3 * HZ * cpu_b + 5, msg
    assert_operator (a - b).abs.to_f / [a, b].max, :<, 0.25, msg
    # The cleared phase's samples exist and carry no span.
    assert_operator counts[nil], :>, 0.6 * HZ * cpu_none, msg
  end
end
