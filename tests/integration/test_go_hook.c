// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The pure-Go hook: the agent finds it inside a Go executable and attributes samples to the span
 * of the goroutine that was running, although goroutines move between threads. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "agent_proc.h"
#include "profile_census.h"
#include "text_file.h"
#include "tmpdir.h"

static int setup(void **state)
{
	return agent_proc_go_setup(state, "tests/workloads/go_spans", "it-go");
}

/* Profiles the go_spans workload built as `binary`: every goroutine function must be named and
 * carry its span in at least 90% of its samples, and min_right of all samples of the four span
 * functions must carry the right span. The workload starts its spans only once THIS agent
 * logged the attach of its executable (up to 2% of samples had carried no span when it started
 * on the agent's start-up line: spans set before the uprobe was on were never seen). */
static void check_go_spans(const char *dir, const char *binary, double min_right)
{
	/* 4 CPU seconds of work (the workload counts its CPU, not the clock): each of the 5
	 * functions gets its 20 samples however loaded the machine is. */
	char pid_arg[16], go_file[512];
	const char *argv[] = { "--output", dir,		 "--pid", pid_arg, "--interval",
			       "60",	   "--duration", "60",	  NULL };
	const char *work[] = { build_path(binary), "8", go_file, NULL };
	const char *env[] = { "OTEL_SERVICE_NAME=it-go", "GOMAXPROCS=2", NULL };
	static const char *const funcs[][2] = {
		{ "main.goWorkA", "5a5a000000000011" }, { "main.goWorkB", "5a5a000000000012" },
		{ "main.goWorkC", "5a5a000000000013" }, { "main.goWorkD", "5a5a000000000014" },
		{ "main.goWorkOutside", NULL },
	};
	static const char *const callers[] = { "main.spin", "main.worker", "main.main.func1" };
	uint64_t in_spans = 0, right = 0;
	struct census c = { 0 };
	struct agent_proc agent;
	pid_t pid;

	snprintf(go_file, sizeof(go_file), "%s/go", dir);
	pid = workload_start(work, env, "/dev/null");
	assert_true(pid > 0);
	assert_int_equal(workload_wait_exec(pid, work[0], 10), 0);
	snprintf(pid_arg, sizeof(pid_arg), "%d", (int)pid);
	assert_int_equal(agent_proc_start(&agent, dir, argv), 0);
	assert_true(agent_proc_wait_attach(&agent, work[0], pid, 30));
	text_file_write(go_file, ""); /* the workload polls for it before its spans */
	assert_int_equal(workload_wait(pid, 40), 0);
	/* The Go executable was the only file with this hook: gone with its process. */
	if (!agent_proc_wait_log(&agent, "span hook detached", 30)) {
		agent_proc_print_log(
			&agent); /* an exit event lost under load shows as a drop warning */
		fail_msg("no detach logged within 30 s of the workload's exit");
	}
	assert_int_equal(agent_proc_stop(&agent), 0); /* writes the last window */
	assert_true(agent_proc_log_contains(&agent, "Go, nop5 site") ||
		    agent_proc_log_contains(&agent, "Go, nop site"));
	for (size_t i = 0; i < sizeof(funcs) / sizeof(funcs[0]); i++)
		census_watch(&c, funcs[i][0], funcs[i][1]);
	for (size_t i = 0; i < sizeof(callers) / sizeof(callers[0]); i++)
		census_watch(&c, callers[i], NULL);
	assert_int_equal(census_read(&c, dir, "it-go"), 1);
	printf("  %s: %llu samples, %llu with an unknown leaf frame\n", binary,
	       (unsigned long long)c.total_samples, (unsigned long long)c.unknown_frames);
	/* Frames past runtime.mstart are a stale frame chain (sysmon), not the goroutine's: the
	 * census leaves them out; bounded, so a walk that often runs past thread roots still fails. */
	printf("  %llu samples showed a watched function only past runtime.mstart (not counted)\n",
	       (unsigned long long)c.past_thread_root);
	assert_true(c.past_thread_root <= 0.05 * c.total_samples);
	for (size_t i = 0; i < sizeof(funcs) / sizeof(funcs[0]); i++) {
		const struct census_func *f = census_get(&c, funcs[i][0]);

		printf("  %-20s %4llu samples, %4llu with the right span label\n", f->name,
		       (unsigned long long)f->samples, (unsigned long long)f->right_span);
		assert_true(f->samples >= 20);
		assert_true(f->right_span >= 0.90 * f->samples);
		if (funcs[i][1]) {
			in_spans += f->samples;
			right += f->right_span;
		}
	}
	printf("  %llu of %llu samples in spans with the right span\n", (unsigned long long)right,
	       (unsigned long long)in_spans);
	assert_true(right >= min_right * in_spans);
	/* Callers and callees are named too (from .gopclntab when there is no symbol table);
	 * the remaining unknown leaf frames are the vDSO's clock_gettime, as unstripped. */
	for (size_t i = 0; i < sizeof(callers) / sizeof(callers[0]); i++) {
		const struct census_func *f = census_get(&c, callers[i]);

		printf("  %-20s %4llu samples\n", f->name, (unsigned long long)f->samples);
		assert_true(f->samples >= 20);
	}
}

static void test_goroutines_keep_their_spans_across_threads(void **state)
{
	if (!*state)
		skip();
	check_go_spans(*state, "tests/workloads/go_spans", 0.99);
}

/* Built with -ldflags="-s -w": the hook is found through .gopclntab and its own code. */
static void test_stripped_go_binary_gets_the_same_spans_and_names(void **state)
{
	if (!*state)
		skip();
	check_go_spans(*state, "tests/workloads/go_spans_stripped", 0.99);
}

/* Stripped and position-independent (-buildmode=pie): file offsets differ from addresses. */
static void test_stripped_pie_go_binary_gets_its_spans(void **state)
{
	if (!*state)
		skip();
	check_go_spans(*state, "tests/workloads/go_spans_pie", 0.99);
}

/* With cgo (externally linked, C thread-locals in the executable's TLS block): g is read at
 * runtime.tlsg's offset from FS base, not at -8. */
static void test_cgo_go_binary_gets_its_spans(void **state)
{
	if (!*state)
		skip();
	check_go_spans(*state, "tests/workloads/go_spans_cgo", 0.99);
}

/* The same stripped: g's slot comes from the runtime's own g loads (runtime.morestack). */
static void test_stripped_cgo_go_binary_gets_its_spans(void **state)
{
	if (!*state)
		skip();
	check_go_spans(*state, "tests/workloads/go_spans_cgo_stripped", 0.99);
}

/* A cgo PIE: the same rule through runtime.tlsg; Go code is found as Go by its build info. */
static void test_cgo_pie_go_binary_gets_its_spans(void **state)
{
	if (!*state)
		skip();
	check_go_spans(*state, "tests/workloads/go_spans_cgo_pie", 0.99);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_goroutines_keep_their_spans_across_threads,
						setup, tmpdir_teardown),
		cmocka_unit_test_setup_teardown(
			test_stripped_go_binary_gets_the_same_spans_and_names, setup,
			tmpdir_teardown),
		cmocka_unit_test_setup_teardown(test_stripped_pie_go_binary_gets_its_spans, setup,
						tmpdir_teardown),
		cmocka_unit_test_setup_teardown(test_cgo_go_binary_gets_its_spans, setup,
						tmpdir_teardown),
		cmocka_unit_test_setup_teardown(test_stripped_cgo_go_binary_gets_its_spans, setup,
						tmpdir_teardown),
		cmocka_unit_test_setup_teardown(test_cgo_pie_go_binary_gets_its_spans, setup,
						tmpdir_teardown),
	};

	return cmocka_run_group_tests_name("go_hook", tests, NULL, NULL);
}
