// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Hook libraries at paths that /proc/PID/maps cannot show plainly: a newline (printed as \012)
 * and a literal backslash sequence that reads the same. The real library, copied there and
 * dlopen()ed by a workload, must be attached, and the log must show the path escaped. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "agent_proc.h"
#include "fixture_build.h"
#include "tmpdir.h"

static int group_setup(void **state)
{
	static struct agent_group fx;
	const char *argv[] = { "--output", NULL, "--interval", "1", NULL };

	*state = &fx;
	return agent_group_start(&fx, "hookpaths", argv);
}

static int group_teardown(void **state)
{
	struct agent_group *fx = *state;

	return agent_group_stop(fx);
}

/* 1 when this agent's log says it attached lib, the path escaped as the log escapes it (a
 * newline as \n, a backslash as \\): other agents on the machine may attach it too. */
static int agent_attached(const struct agent_group *fx, const char *lib)
{
	char want[2300], *o = want + sprintf(want, "span hook attached: ");

	for (; *lib; lib++) {
		if (*lib == '\n' || *lib == '\\')
			*o++ = '\\';
		*o++ = *lib == '\n' ? 'n' : *lib;
	}
	*o = '\0';
	return agent_proc_log_contains(&fx->agent, want);
}

/* Copies the hook library into dir/<sub>/libspanprof.so and runs a workload that dlopen()s it
 * and exits 0 only once an agent attached (within 10 s), then runs 3 s (other agents on the
 * machine may attach first); this agent must attach it too, logging <sub> as <shown>. */
static void run_from(struct agent_group *fx, const char *sub, const char *shown, const char *tag)
{
	char dir[1024], lib[1100], out[1100], service[64], env_service[96];
	const char *argv[] = {
		build_path("tests/workloads/span_workload_dl"), "dlopen", "1", "3", lib, NULL
	};
	const char *env[] = { env_service, NULL };
	pid_t pid;

	snprintf(dir, sizeof(dir), "%s/%s", fx->dir, sub);
	snprintf(lib, sizeof(lib), "%s/libspanprof.so", dir);
	snprintf(out, sizeof(out), "%s/%s.out", fx->dir, tag);
	snprintf(service, sizeof(service), "it-paths-%s-%d", tag, getpid());
	snprintf(env_service, sizeof(env_service), "OTEL_SERVICE_NAME=%s", service);
	assert_int_equal(mkdir(dir, 0755), 0);
	assert_int_equal(fixture_sh("cp %s '%s'", build_path("libspanprof.so"), lib), 0);
	pid = workload_start(argv, env, out);
	assert_true(pid > 0);
	assert_int_equal(workload_wait(pid, 60), 0);
	snprintf(lib, sizeof(lib), "%s/%s/libspanprof.so", fx->dir, shown);
	assert_true(agent_attached(fx, lib));
}

static void test_library_under_newline_path_is_attached(void **state)
{
	struct agent_group *fx = *state;

	if (fx->skip)
		skip();
	/* The log line stays one line: the newline is shown escaped. */
	run_from(fx, "new\nline", "new\nline", "newline");
}

static void test_library_under_literal_backslash_path_is_attached(void **state)
{
	struct agent_group *fx = *state;

	if (fx->skip)
		skip();
	/* Reads "\012" in maps exactly like a newline would: opened by mapping, not by name, so it
	 * is attached all the same; the log shows the path as maps decodes, with a newline. */
	run_from(fx, "back\\012slash", "back\nslash", "backslash");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_library_under_newline_path_is_attached),
		cmocka_unit_test(test_library_under_literal_backslash_path_is_attached),
	};

	return cmocka_run_group_tests_name("hook_paths", tests, group_setup, group_teardown);
}
