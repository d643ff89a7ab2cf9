# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""The binding for real: the agent attaches to the libspanprof.so a Python process loads at
import, and the profiles of that service carry span A and B in the shares the process spent in
each, and no span while it ran with the span cleared. Needs root; skips otherwise."""

import os
import re
import subprocess
import sys
import tempfile
import time
import unittest

from tests import agent_run

SPAN_A, SPAN_B = "5a5a000000000001", "5a5a000000000002"
TRACE = "5a5a00000000000000000000000000aa"


class AgentProfileTest(unittest.TestCase):
    def setUp(self):
        why = agent_run.cannot_run()
        if why:
            self.skipTest(why)
        self.tmp = tempfile.TemporaryDirectory(prefix="spanprof-pyhook-")
        self.addCleanup(self.tmp.cleanup)
        self.service = "spanprof-pytest-%d" % os.getpid()

    def run_workload(self):
        """Runs the workload under its own agent; returns the agent and the phases' CPU s."""
        env = dict(os.environ, OTEL_SERVICE_NAME=self.service,
                   SPANPROF_LIBRARY=agent_run.LIBRARY, PYTHONDONTWRITEBYTECODE="1")
        script = os.path.join(os.path.dirname(__file__), "workload_phases.py")
        proc = subprocess.Popen([sys.executable, script], stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, text=True, env=env)
        agent = None
        try:
            self.assertEqual(proc.stdout.readline(), "ready\n")
            agent = agent_run.Agent(self.tmp.name, proc.pid)
            proc.stdin.write("load\n")
            proc.stdin.flush()
            self.assertEqual(proc.stdout.readline(), "loaded\n")
            start = time.monotonic()
            # The agent finds a library mapped by dlopen at run time within 1 s.
            self.assertTrue(agent.wait_hook_attached(5), agent.log())
            after = time.monotonic() - start
            sys.stderr.write("\n  python: agent attached %.3f s after import " % after)
            self.assertLess(after, 1.0, agent.log())
            out, _ = proc.communicate("go\n", timeout=60)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
            status = agent.stop() if agent else None
        self.assertEqual(status, 0, agent.log())
        self.assertEqual(proc.returncode, 0)
        m = re.search(r"ok=1 cpu_a=([\d.]+) cpu_b=([\d.]+) cpu_none=([\d.]+)", out)
        self.assertTrue(m, "workload said %r" % out)
        return agent, [float(x) for x in m.groups()]

    def test_python_spans_label_their_samples_and_clearing_stops_it(self):
        agent, (cpu_a, cpu_b, cpu_none) = self.run_workload()
        counts, triples, files = agent_run.span_census(agent.out, self.service)
        self.assertTrue(files, "no profile of service %s in %s" % (self.service, agent.out))
        msg = "samples per span_id %s; CPU a=%.2f b=%.2f none=%.2f s" % (
            dict(counts), cpu_a, cpu_b, cpu_none)
        self.assertEqual(set(counts) - {None}, {SPAN_A, SPAN_B}, msg)
        self.assertEqual(triples, {(SPAN_A, TRACE, "phase-a"), (SPAN_B, TRACE, "phase-b")})
        a, b, none = counts[SPAN_A], counts[SPAN_B], counts[None]
        sys.stderr.write("\n  python under the agent: samples A=%d B=%d none=%d "
                         "(CPU s: %.2f %.2f %.2f) " % (a, b, none, cpu_a, cpu_b, cpu_none))
        lo, hi, hz = agent_run.RATE_MIN, agent_run.RATE_MAX, agent_run.HZ
        # Samples per CPU second within the band, for each phase.
        for n, cpu in ((a, cpu_a), (b, cpu_b), (none, cpu_none)):
            self.assertGreaterEqual(n, lo * hz * cpu, msg)
            self.assertLessEqual(n, hi * hz * cpu + 5, msg)
        # A and B at the same rate per CPU second: had clear_span() not worked, B would also
        # hold the cleared phase (1.5x A's rate).
        rate_a, rate_b = a / cpu_a, b / cpu_b
        self.assertLess(abs(rate_a - rate_b) / max(rate_a, rate_b), 0.25, msg)


if __name__ == "__main__":
    unittest.main()
