# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""The binding for real: the agent attaches to the libspanprof.so a Python process loads at
import, and the profiles of that service carry span A and B in the shares the process spent in
each, and no span while it ran with the span cleared. Needs root; skips otherwise."""

import os
import re
import subprocess
import sys
import tempfile
import unittest

from tests import agent_run

SPAN_A, SPAN_B = "5a5a000000000001", "5a5a000000000002"
TRACE = "5a5a00000000000000000000000000aa"
HZ = 100  # the agent's default sampling frequency


class AgentProfileTest(unittest.TestCase):
    def setUp(self):
        why = agent_run.cannot_run()
        if why:
            self.skipTest(why)
        self.tmp = tempfile.TemporaryDirectory(prefix="spanprof-pyhook-")
        self.addCleanup(self.tmp.cleanup)
        self.service = "spanprof-pytest-%d" % os.getpid()

    def run_workload(self, agent):
        env = dict(os.environ, OTEL_SERVICE_NAME=self.service,
                   SPANPROF_LIBRARY=agent_run.LIBRARY, PYTHONDONTWRITEBYTECODE="1")
        script = os.path.join(os.path.dirname(__file__), "workload_phases.py")
        proc = subprocess.Popen([sys.executable, script], stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, text=True, env=env)
        try:
            attach = proc.stdout.readline()
            m = re.match(r"attached=(\d) after_s=([\d.]+)", attach)
            self.assertTrue(m, "workload said %r" % attach)
            self.assertEqual(m.group(1), "1", "the agent never attached to the library")
            # The agent finds a library mapped by dlopen at run time within 1 s.
            self.assertLess(float(m.group(2)), 1.0, attach)
            sys.stderr.write("\n  python: agent attached %.3f s after import " % float(m.group(2)))
            # spanprof_active() is shared by every agent on the machine; make sure it is ours.
            self.assertTrue(agent.wait_log("span hook attached", 3), agent.log())
            out, _ = proc.communicate("go\n", timeout=30)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        self.assertEqual(proc.returncode, 0)
        m = re.search(r"ok=1 cpu_a=([\d.]+) cpu_b=([\d.]+) cpu_none=([\d.]+)", out)
        self.assertTrue(m, "workload said %r" % out)
        return [float(x) for x in m.groups()]

    def test_python_spans_label_their_samples_and_clearing_stops_it(self):
        agent = agent_run.Agent(self.tmp.name)
        try:
            cpu_a, cpu_b, cpu_none = self.run_workload(agent)
        finally:
            status = agent.stop()
        self.assertEqual(status, 0, agent.log())

        counts, triples, files = agent_run.span_census(agent.out, self.service)
        self.assertTrue(files, "no profile of service %s in %s" % (self.service, agent.out))
        msg = "samples per span_id %s; CPU a=%.2f b=%.2f none=%.2f s" % (
            dict(counts), cpu_a, cpu_b, cpu_none)
        self.assertEqual(set(counts) - {None}, {SPAN_A, SPAN_B}, msg)
        self.assertEqual(triples, {(SPAN_A, TRACE, "phase-a"), (SPAN_B, TRACE, "phase-b")})
        a, b = counts[SPAN_A], counts[SPAN_B]
        sys.stderr.write("\n  python under the agent: samples A=%d B=%d none=%d "
                         "(CPU s: %.2f %.2f %.2f) " % (a, b, counts[None], cpu_a, cpu_b, cpu_none))
        # About 100 samples per CPU second, and A and B in about equal shares.
        self.assertGreater(a, 0.7 * HZ * cpu_a, msg)
        self.assertLess(a, 1.3 * HZ * cpu_a + 5, msg)
        self.assertGreater(b, 0.7 * HZ * cpu_b, msg)
        # Had clear_span() not worked, B would also hold the cleared phase: ~1.5x A.
        self.assertLess(b, 1.3 * HZ * cpu_b + 5, msg)
        self.assertLess(abs(a - b) / max(a, b), 0.25, msg)
        # The cleared phase's samples exist and carry no span.
        self.assertGreater(counts[None], 0.6 * HZ * cpu_none, msg)


if __name__ == "__main__":
    unittest.main()
