// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Crafted processes of an unprivileged user against the real agent: JIT processes whose perf
 * maps never name their code (the agent must not re-read unchanged maps), and Python code
 * objects re-created at a freed one's address with a new qualified name (the agent must not
 * show the old name). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "agent_proc.h"
#include "fixture_build.h"
#include "hostile_fixture.h"
#include "metrics_scrape.h"
#include "profile_census.h"

static int setup(void **state)
{
	struct hostile_fixture *f;

	if (hostile_fixture_new("it-hostile-procs", &f))
		return -1;
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	hostile_fixture_free(*state);
	return 0;
}

#define JIT_PROCS 6
#define CPU_WINDOW_S 10.0

/* JIT_PROCS processes of the user run JIT code with a perf map of the given kind ("none", or
 * "big:N": N lines, none naming the code, so every sample misses); one agent profiles them.
 * Returns the agent's CPU seconds over CPU_WINDOW_S once it has read the maps. */
static double agent_cpu_with_perf_maps(struct hostile_fixture *f, const char *kind)
{
	char out[600], log[600], pids[JIT_PROCS][16], path[64];
	const char *argv[4 + 2 + 2 * JIT_PROCS + 1] = { "--output",	  out,
							"--interval",	  "1",
							"--metrics-addr", "127.0.0.1:0" };
	const char *jit[] = { f->workload, "jit", kind, "120", NULL };
	struct agent_proc agent;
	double c0, c1, end, skipped = 0;
	int i, port, counted = 0;

	snprintf(out, sizeof(out), "%s/out-%s", f->dir, kind);
	assert_int_equal(mkdir(out, 0755), 0);
	for (i = 0; i < JIT_PROCS; i++) {
		snprintf(log, sizeof(log), "jit%d.out", i);
		if (hostile_fixture_spawn(f, f->user.uid, "it-parsers-jit", log, jit, 60) < 0)
			fail_msg("JIT process %d never got ready", i);
		snprintf(pids[i], sizeof(pids[i]), "%d", (int)f->pids[i]);
		argv[6 + 2 * i] = "--pid";
		argv[7 + 2 * i] = pids[i];
	}
	assert_int_equal(hostile_fixture_start_agent(f, &agent, argv), 0);
	port = metrics_scrape_port(agent.log_path);
	assert_true(port > 0);
	/* Settled: every map read once and a later miss seen (an agent without that counter: a
	 * fixed 8 s), so what is measured is the steady cost. */
	for (end = hostile_now_s() + 60; hostile_now_s() < end; usleep(200000)) {
		counted = !metrics_scrape(
			port, "spanprof_input_guards_total{guard=\"perf_map_reread_skipped\"}",
			&skipped);
		if (!counted || !strcmp(kind, "none") || skipped >= JIT_PROCS)
			break;
	}
	/* The misses happened, and were not re-read: every map was read and then left alone. */
	if (counted && strcmp(kind, "none"))
		assert_true(skipped >= JIT_PROCS);
	for (end = hostile_now_s() + 8; hostile_now_s() < end;)
		usleep(100000);
	c0 = hostile_cpu_seconds(agent.pid);
	for (end = hostile_now_s() + CPU_WINDOW_S; hostile_now_s() < end;)
		usleep(100000);
	c1 = hostile_cpu_seconds(agent.pid);
	assert_int_equal(agent_proc_stop(&agent), 0);
	for (i = 0; i < f->npids; i++) {
		kill(f->pids[i], SIGKILL);
		waitpid(f->pids[i], NULL, 0);
		snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)f->pids[i]);
		unlink(path);
	}
	f->npids = 0;
	return c1 - c0;
}

/* Six JIT processes keep their sampled code outside a 16 MB, 262,144-line perf map: the agent
 * must not re-read the maps while they stay the same. Its CPU under the attack stays within
 * twice its cost with the same processes and no perf maps. */
static void test_perf_map_misses_do_not_reread_unchanged_maps(void **state)
{
	struct hostile_fixture *f = *state;
	double idle, attack;

	if (!f)
		skip();
	idle = agent_cpu_with_perf_maps(f, "none");
	attack = agent_cpu_with_perf_maps(f, "big:262144");
	printf("  agent CPU over %.0f s: %.2f s without perf maps, %.2f s with six 16 MB maps "
	       "that miss (%.1fx)\n",
	       CPU_WINDOW_S, idle, attack, idle > 0 ? attack / idle : 0);
	/* One clock tick of slack per second measured: idle can read as a few ticks. */
	assert_true(attack <= 2 * idle + CPU_WINDOW_S / sysconf(_SC_CLK_TCK));
}

#define CHURN_PHASES 6

/* Code objects re-created at a freed one's address with the same interned name and file and the
 * same first line, but a new qualified name: every phase's samples must carry its own name,
 * not the first one cached at that address. */
static void test_python_code_reused_with_new_qualname_is_renamed(void **state)
{
	struct hostile_fixture *f = *state;
	const char *python = "/usr/bin/python3.11"; /* 3.11+: co_qualname; runnable by the user */
	char out[600], script[600], gate[600], log[600], pid_arg[16], want[64],
		names[CHURN_PHASES][32];
	const char *argv[] = { "--output", out, "--interval", "1", "--pid", pid_arg, NULL };
	const char *work[] = { python, script, gate, "6", "1.5", NULL };
	struct agent_proc agent;
	struct census c = { 0 };
	char addrs[CHURN_PHASES][32], line[256];
	int i, j, reused = 0, n = 0;
	FILE *fp;

	if (!f)
		skip();
	if (access(python, X_OK)) {
		printf("  %s is absent: skipped\n", python);
		skip();
	}
	snprintf(out, sizeof(out), "%s/out", f->dir);
	assert_int_equal(mkdir(out, 0755), 0);
	snprintf(script, sizeof(script), "%s/py_qualname_churn.py", f->dir);
	snprintf(gate, sizeof(gate), "%s/go", f->dir);
	snprintf(log, sizeof(log), "%s/churn.out", f->dir);
	assert_int_equal(fixture_sh("cp '%s' '%s' && chmod 0644 '%s'",
				    build_path("../tests/workloads/py_qualname_churn.py"), script,
				    script),
			 0);
	assert_true(hostile_fixture_spawn(f, f->user.uid, "it-parsers-churn", "churn.out", work,
					  20) > 0);
	snprintf(pid_arg, sizeof(pid_arg), "%d", (int)f->pids[0]);
	assert_int_equal(hostile_fixture_start_agent(f, &agent, argv), 0);
	snprintf(want, sizeof(want), "pid %d: reading CPython", (int)f->pids[0]);
	if (!agent_proc_wait_log(&agent, want, 30))
		fail_msg("the agent never logged \"%s\"", want);
	close(open(gate, O_WRONLY | O_CREAT, 0644));
	assert_int_equal(workload_wait(f->pids[0], 120), 0);
	f->npids = 0;
	assert_int_equal(agent_proc_stop(&agent), 0);
	/* Which phases reused an earlier phase's code object address. */
	fp = fopen(log, "r");
	assert_non_null(fp);
	while (n < CHURN_PHASES && fgets(line, sizeof(line), fp))
		if (sscanf(line, "phase %*d %31s code %31s", names[n], addrs[n]) == 2)
			n++;
	fclose(fp);
	assert_int_equal(n, CHURN_PHASES);
	for (i = 0; i < n; i++)
		census_watch(&c, names[i], NULL);
	assert_true(census_read(&c, out, "it-parsers-churn") > 0);
	for (i = 0; i < n; i++) {
		int again = 0;

		for (j = 0; j < i; j++)
			again |= !strcmp(addrs[i], addrs[j]);
		reused += again;
		printf("  %s at %s%s: %llu samples\n", names[i], addrs[i], again ? " (reused)" : "",
		       (unsigned long long)census_get(&c, names[i])->samples);
	}
	assert_true(reused >= 2); /* the attack took place: addresses were reused */
	for (i = 0; i < n; i++)
		if (census_get(&c, names[i])->samples < 5)
			fail_msg("%s has %llu samples: shown under another phase's name", names[i],
				 (unsigned long long)census_get(&c, names[i])->samples);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_perf_map_misses_do_not_reread_unchanged_maps,
						setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_python_code_reused_with_new_qualname_is_renamed, setup, teardown),
	};

	/* HOSTILE_TEST=<name> runs one test; HOSTILE_KEEP=1 keeps the temp dirs (agent logs). */
	if (getenv("HOSTILE_TEST"))
		cmocka_set_test_filter(getenv("HOSTILE_TEST"));
	return cmocka_run_group_tests_name("hostile_procs", tests, NULL, NULL);
}
