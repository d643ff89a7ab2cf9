// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The pure-Go hook: the agent finds it inside a Go executable and attributes samples to the span
 * of the goroutine that was running, although goroutines move between threads. */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "agent_proc.h"
#include "profile_census.h"
#include "tmpdir.h"

static int setup(void **state)
{
	if (!agent_proc_can_run()) {
		*state = NULL;
		return 0;
	}
	if (access(build_path("tests/workloads/go_spans"), X_OK)) {
		printf("SKIP: build/tests/workloads/go_spans missing (is golang-go installed?)\n");
		*state = NULL;
		return 0;
	}
	*state = tmpdir_new("it-go");
	return *state ? 0 : -1;
}

static int teardown(void **state)
{
	tmpdir_remove(*state);
	return 0;
}

static void test_goroutines_keep_their_spans_across_threads(void **state)
{
	const char *dir = *state;
	const char *argv[] = { "--output", dir, "--interval", "60", "--duration", "6", NULL };
	const char *work[] = { build_path("tests/workloads/go_spans"), "3", NULL };
	const char *env[] = { "OTEL_SERVICE_NAME=it-go", "GOMAXPROCS=2", NULL };
	static const char *const funcs[][2] = {
		{ "main.goWorkA", "5a5a000000000011" }, { "main.goWorkB", "5a5a000000000012" },
		{ "main.goWorkC", "5a5a000000000013" }, { "main.goWorkD", "5a5a000000000014" },
		{ "main.goWorkOutside", NULL },
	};
	struct census c = { 0 };
	struct agent_proc agent;
	pid_t pid;

	if (!dir)
		skip();
	assert_int_equal(agent_proc_start(&agent, dir, argv), 0);
	pid = workload_start(work, env, "/dev/null");
	assert_int_equal(workload_wait(pid, 30), 0);
	assert_int_equal(workload_wait(agent.pid, 30), 0);
	/* The Go executable was the only file with this hook: gone with its process. */
	assert_true(agent_proc_log_contains(&agent, "span hook detached"));
	assert_true(agent_proc_log_contains(&agent, "Go, nop5 site") ||
		    agent_proc_log_contains(&agent, "Go, nop site"));
	for (size_t i = 0; i < sizeof(funcs) / sizeof(funcs[0]); i++)
		census_watch(&c, funcs[i][0], funcs[i][1]);
	assert_int_equal(census_read(&c, dir, "it-go"), 1);
	for (int i = 0; i < c.nfuncs; i++) {
		const struct census_func *f = &c.funcs[i];

		printf("  %-20s %4llu samples, %4llu with the right span label\n", f->name,
		       (unsigned long long)f->samples, (unsigned long long)f->right_span);
		assert_true(f->samples >= 20);
		assert_true(f->right_span >= 0.95 * f->samples);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_goroutines_keep_their_spans_across_threads,
						setup, teardown),
	};

	return cmocka_run_group_tests_name("go_hook", tests, NULL, NULL);
}
