# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Test-only: runs the real spanprof agent (build/spanprof) and reads the profiles it writes with
# the Go toolchain's pprof (`go tool pprof -raw`), counting samples per span_id label.
require "open3"
require "timeout"

module AgentRun
  REPO = File.expand_path("../../..", __dir__)
  AGENT = ENV.fetch("SPANPROF_AGENT", File.join(REPO, "build", "spanprof"))
  LIBRARY = ENV.fetch("SPANPROF_LIBRARY", File.join(REPO, "build", "libspanprof.so"))

  module_function

  # Why the real-agent tests cannot run here, or nil.
  def cannot_run
    return "needs root (CAP_BPF, CAP_PERFMON) to run the agent" unless Process.euid.zero?
    return "no kernel BTF at /sys/kernel/btf/vmlinux" unless File.exist?("/sys/kernel/btf/vmlinux")

    [AGENT, LIBRARY].each { |p| return "#{p} is not built (run `make`)" unless File.readable?(p) }
    return "`go` (golang-go) is not on PATH; its pprof reads the profiles" unless system("command -v go >/dev/null")

    nil
  end

  # Samples per CPU second at the agent's default 100 Hz lie in this band: with every CPU of the
  # 2-CPU test VM busy, cpu-clock sampling gave one task 0.45 to 1.3 times the nominal rate (see
  # tests/helpers/profiled_run.h); an idle machine gives about 1.0.
  HZ = 100
  RATE_MIN = 0.4
  RATE_MAX = 1.6

  # build/spanprof --pid PID --output DIR --interval 1, logging to DIR/agent.log: one agent for
  # the test's own workload, so other agents on the machine cannot disturb it.
  class Agent
    attr_reader :out, :log_path

    def initialize(workdir, target)
      @target = target
      @out = File.join(workdir, "profiles")
      @log_path = File.join(workdir, "agent.log")
      @pid = Process.spawn(AGENT, "--pid", target.to_s, "--output", @out, "--interval", "1",
                           %i[out err] => [@log_path, "w"])
      return if wait_log("profiling ", 60)

      stop
      raise "agent did not start:\n#{log}"
    end

    def log
      File.exist?(@log_path) ? File.read(@log_path) : ""
    end

    def wait_log(text, timeout)
      deadline = Process.clock_gettime(Process::CLOCK_MONOTONIC) + timeout
      while Process.clock_gettime(Process::CLOCK_MONOTONIC) < deadline
        return true if log.include?(text)
        return false if Process.waitpid(@pid, Process::WNOHANG)

        sleep 0.02
      end
      false
    rescue Errno::ECHILD
      false
    end

    # Waits for THIS agent's attach of LIBRARY in the workload (SpanProf.active? cannot tell:
    # any agent on the machine raises it).
    def wait_hook_attached(timeout)
      wait_log("span hook attached: #{File.realpath(LIBRARY)} (pid #{@target},", timeout)
    end

    # SIGINT (the agent writes its last, partial window), then waits; returns its exit status.
    def stop
      Process.kill("INT", @pid)
      status = Timeout.timeout(20) { Process.wait2(@pid)[1] }
      status.exitstatus
    rescue Errno::ESRCH, Errno::ECHILD
      nil
    rescue Timeout::Error
      Process.kill("KILL", @pid)
      Process.wait(@pid)
      nil
    end
  end

  # [[count, {label => value}]] of one profile file, from `go tool pprof -raw` text.
  def read_raw(path)
    text, err, status = Open3.capture3("go", "tool", "pprof", "-raw", "-symbolize=none", path)
    raise "go tool pprof #{path}: #{err}" unless status.success?

    period = text[/^Period: (\d+)$/, 1].to_i
    samples = []
    in_samples = false
    text.each_line(chomp: true) do |line|
      if line.start_with?("Samples:")
        in_samples = true
      elsif in_samples && !line.empty? && line !~ /\A\s/ && line != "cpu/nanoseconds"
        break # the Locations section
      elsif in_samples && (m = line.match(/\A\s+(\d+): [\d ]*\z/))
        samples << [m[1].to_i / period, {}]
      elsif in_samples && !samples.empty? && line.include?("span_id:[")
        samples.last[1] = line.scan(/(\w+):\[([^\]]*)\]/).to_h
      end
    end
    samples
  end

  # Samples of one service across all its files: {span_id or nil => count}, the set of
  # [span_id, trace_id, span_name] label triples seen, and the files.
  def span_census(out_dir, service)
    counts = Hash.new(0)
    triples = {}
    files = Dir[File.join(out_dir, "*-#{service}.pb.gz")].sort
    files.each do |path|
      read_raw(path).each do |count, labels|
        span = labels["span_id"]
        counts[span] += count
        triples[[span, labels["trace_id"], labels["span_name"]]] = true if span
      end
    end
    [counts, triples.keys, files]
  end
end
