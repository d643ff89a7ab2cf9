# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Test-only: runs the real spanprof agent (build/spanprof) and reads the profiles it writes
with the Go toolchain's pprof (`go tool pprof -raw`), counting samples per span_id label."""

import collections
import glob
import os
import re
import shutil
import signal
import subprocess
import time

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
AGENT = os.environ.get("SPANPROF_AGENT", os.path.join(REPO, "build", "spanprof"))
LIBRARY = os.environ.get("SPANPROF_LIBRARY", os.path.join(REPO, "build", "libspanprof.so"))


def cannot_run():
    """Why the real-agent tests cannot run here, or None."""
    if os.geteuid() != 0:
        return "needs root (CAP_BPF, CAP_PERFMON) to run the agent"
    if not os.path.exists("/sys/kernel/btf/vmlinux"):
        return "no kernel BTF at /sys/kernel/btf/vmlinux"
    for path in (AGENT, LIBRARY):
        if not os.access(path, os.R_OK):
            return "%s is not built (run `make`)" % path
    if not shutil.which("go"):
        return "`go` (golang-go) is not on PATH; its pprof reads the profiles"
    return None


# Samples per CPU second at the agent's default 100 Hz lie in this band: with every CPU of the
# 2-CPU test VM busy, cpu-clock sampling gave one task 0.45 to 1.3 times the nominal rate (see
# tests/helpers/profiled_run.h); an idle machine gives about 1.0.
HZ = 100
RATE_MIN, RATE_MAX = 0.4, 1.6


class Agent:
    """build/spanprof --pid PID --output DIR --interval 1, logging to DIR/agent.log: one agent for
    the test's own workload, so other agents on the machine cannot disturb it."""

    def __init__(self, workdir, pid):
        self.pid = pid
        self.out = os.path.join(workdir, "profiles")
        self.log_path = os.path.join(workdir, "agent.log")
        self._log = open(self.log_path, "w")
        self.proc = subprocess.Popen([AGENT, "--pid", str(pid), "--output", self.out,
                                      "--interval", "1"],
                                     stdout=self._log, stderr=subprocess.STDOUT)
        if not self.wait_log("profiling ", 60):
            self.stop()
            raise AssertionError("agent did not start:\n" + self.log())

    def log(self):
        with open(self.log_path) as f:
            return f.read()

    def wait_log(self, text, timeout):
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if text in self.log():
                return True
            if self.proc.poll() is not None:
                return False
            time.sleep(0.02)
        return False

    def wait_hook_attached(self, timeout):
        """Waits for THIS agent's attach of LIBRARY in the workload (spanprof_active() cannot
        tell: any agent on the machine raises it)."""
        text = "span hook attached: %s (pid %d," % (os.path.realpath(LIBRARY), self.pid)
        return self.wait_log(text, timeout)

    def stop(self):
        """SIGINT (the agent writes its last, partial window), then waits; returns its status."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self._log.close()
        return self.proc.returncode


_SAMPLE = re.compile(r"^\s+(\d+): [\d ]*$")
_LABEL = re.compile(r"(\w+):\[([^\]]*)\]")


def read_raw(path):
    """[(count, {label: value})] of one profile file, from `go tool pprof -raw` text."""
    text = subprocess.run(["go", "tool", "pprof", "-raw", "-symbolize=none", path],
                          check=True, capture_output=True, text=True, timeout=60).stdout
    period = int(re.search(r"^Period: (\d+)$", text, re.M).group(1))
    samples, in_samples = [], False
    for line in text.splitlines():
        if line.startswith("Samples:"):
            in_samples = True
            continue
        if in_samples and line and not line[0].isspace() and line != "cpu/nanoseconds":
            break  # the Locations section
        m = _SAMPLE.match(line)
        if in_samples and m:
            samples.append([int(m.group(1)) // period, {}])
        elif in_samples and samples and "span_id:[" in line:
            samples[-1][1] = dict(_LABEL.findall(line))
    return [tuple(s) for s in samples]


def span_census(out_dir, service):
    """Samples of one service across all its files: {span_id or None: count}, and the set of
    (span_id, trace_id, span_name) label triples seen."""
    counts, triples = collections.Counter(), set()
    files = sorted(glob.glob(os.path.join(out_dir, "*-%s.pb.gz" % service)))
    for path in files:
        for count, labels in read_raw(path):
            span = labels.get("span_id")
            counts[span] += count
            if span:
                triples.add((span, labels.get("trace_id"), labels.get("span_name")))
    return counts, triples, files
