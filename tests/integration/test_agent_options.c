// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The agent as a user meets it: clear errors for bad input and missing privileges, --duration,
 * --pid, --span-scope all, kernel frames, and processes that exit before their window ends. */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "agent_proc.h"
#include "profile_census.h"
#include "profiled_run.h"
#include "tmpdir.h"

#define SPAN_1 "5a5a000000000001"
#define SPAN_2 "5a5a000000000002"
#define SPAN_3 "5a5a000000000003"

static int setup(void **state)
{
	return agent_proc_dir_setup(state, "it-options");
}

/* Runs the agent (exe, NULL: build/spanprof) to completion as uid (-1: unchanged); its stderr
 * goes to dir/agent.log. */
static int run_agent(const char *dir, const char *exe, int uid, const char *const *argv)
{
	const char *args[16] = { exe ? exe : build_path("spanprof") };
	char log_path[512];
	int status, fd, i;
	pid_t pid;

	for (i = 0; argv[i] && i < 14; i++)
		args[i + 1] = argv[i];
	snprintf(log_path, sizeof(log_path), "%s/agent.log", dir);
	pid = fork();
	if (pid == 0) {
		fd = open(log_path, O_WRONLY | O_CREAT | O_TRUNC, 0666);
		dup2(fd, 2);
		if (uid >= 0 && (setgid(uid) || setuid(uid)))
			_exit(126);
		execv(args[0], (char *const *)args);
		_exit(127);
	}
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

static void assert_log_has(const char *dir, const char *text)
{
	struct agent_proc a;

	snprintf(a.log_path, sizeof(a.log_path), "%s/agent.log", dir);
	if (!agent_proc_log_contains(&a, text))
		fail_msg("agent log in %s does not mention '%s'", dir, text);
}

static void test_agent_rejects_bad_flag_with_usage_status(void **state)
{
	const char *argv[] = { "--frequency", "0", NULL };

	if (!*state)
		skip();
	assert_int_equal(run_agent(*state, NULL, -1, argv), 2);
	assert_log_has(*state, "--frequency: invalid value '0'");
}

/* A copy of build/spanprof that uid 65534 can run: the checkout may sit in a home directory
 * no other user may enter (root's is 0700 on Debian). */
static void copy_agent_for_anyone(const char *dir, char *exe, size_t len)
{
	char cmd[1500];

	snprintf(exe, len, "%s/spanprof", dir);
	snprintf(cmd, sizeof(cmd), "cp '%s' '%s' && chmod 0755 '%s'", build_path("spanprof"), exe,
		 exe);
	assert_int_equal(system(cmd), 0);
}

static void test_agent_names_the_missing_capability(void **state)
{
	const char *argv[] = { "--output", *state, "--duration", "1", NULL };
	char exe[600];

	if (!*state)
		skip();
	chmod(*state, 0777); /* the unprivileged agent runs from here and writes its log here */
	copy_agent_for_anyone(*state, exe, sizeof(exe));
	assert_int_equal(run_agent(*state, exe, 65534, argv), 1);
	assert_log_has(*state, "missing capability CAP_BPF");
}

static void test_agent_reports_a_pid_that_does_not_exist(void **state)
{
	char pid_arg[16];
	const char *argv[] = { "--pid", pid_arg, "--duration", "1", NULL };
	pid_t gone = fork();

	if (!*state)
		skip();
	if (gone == 0)
		_exit(0);
	waitpid(gone, NULL, 0);
	snprintf(pid_arg, sizeof(pid_arg), "%d", gone);
	assert_int_equal(run_agent(*state, NULL, -1, argv), 1);
	assert_log_has(*state, "no such process");
}

/* A part whose set-up fails for real names itself and the reason, and the agent exits 1: an
 * output directory under a regular file, then a spool there. */
static void test_agent_names_the_part_whose_set_up_failed(void **state)
{
	char file[600], out[700], spool[700];
	const char *local[] = { "--output", out, "--duration", "1", NULL };
	const char *push[] = { "--server", "http://127.0.0.1:9", "--spool",
			       spool,	   "--duration",	 "1",
			       NULL };
	FILE *f;

	if (!*state)
		skip();
	snprintf(file, sizeof(file), "%s/a-file", (const char *)*state);
	snprintf(out, sizeof(out), "%s/out", file);
	snprintf(spool, sizeof(spool), "%s/spool", file);
	f = fopen(file, "w");
	assert_non_null(f);
	fclose(f);
	assert_int_equal(run_agent(*state, NULL, -1, local), 1);
	assert_log_has(*state, "set up the local output directory (--output ");
	assert_log_has(*state, "err=\"Not a directory\"");
	assert_int_equal(run_agent(*state, NULL, -1, push), 1);
	assert_log_has(*state, "set up the uploader with --spool ");
	assert_log_has(*state, "err=\"Not a directory\"");
}

/* A constructor that fails (injected: SPANPROF_FAULT in build/tests/faults/spanprof_faulty)
 * is named with its errno, what was set up before it is released, and the agent exits 1. */
static void test_agent_names_the_cache_whose_constructor_failed(void **state)
{
	static const char *const faults[][2] = {
		{ "symcache_new", "set up the symbol cache\" err=\"Cannot allocate memory\"" },
		{ "ruby_symbols_new",
		  "set up the Ruby symbol cache\" err=\"Cannot allocate memory\"" },
		{ "drain_new", "set up the CPU sample drain\" err=\"Cannot allocate memory\"" },
	};
	char self[16];
	const char *argv[] = { "--pid", self, "--output", *state, "--duration", "1", NULL };

	if (!*state)
		skip();
	snprintf(self, sizeof(self), "%d", (int)getpid());
	for (size_t i = 0; i < sizeof(faults) / sizeof(faults[0]); i++) {
		setenv("SPANPROF_FAULT", faults[i][0], 1);
		assert_int_equal(
			run_agent(*state, build_path("tests/faults/spanprof_faulty"), -1, argv), 1);
		unsetenv("SPANPROF_FAULT");
		assert_log_has(*state, faults[i][1]);
	}
}

/* --span-scope all, and a process that exits long before its window ends: the agent's own
 * --duration ends the run and the final partial window must still be complete and symbolized. */
static void test_scope_all_and_process_exiting_mid_window(void **state)
{
	const char *dir = *state;
	char duration[16];
	const char *argv[] = { "--output",     dir,   "--interval", "60", "--duration", duration,
			       "--span-scope", "all", NULL };
	const char *work[] = { build_path("tests/workloads/span_workload"), "spans", "1", "1.5",
			       NULL };
	char service[64], env_service[128];
	const char *env[] = { env_service, NULL };
	struct profiled_run r = { .dir = dir,
				  .agent_args = argv,
				  .workload_argv = work,
				  .workload_env = env,
				  .hook_file = build_path("libspanprof.so"),
				  .agent_stops_itself = 1 };
	struct census c = { 0 };

	if (!dir)
		skip();
	/* The workload's 1.5 CPU seconds take as long as the machine's load makes them: if the
	 * agent's --duration ran out first, the run proves nothing and is repeated, longer. */
	for (int d = 8; d <= 128; d *= 4) {
		snprintf(duration, sizeof(duration), "%d", d);
		snprintf(service, sizeof(service), "it-scope-all-%d", d);
		snprintf(env_service, sizeof(env_service), "OTEL_SERVICE_NAME=%s", service);
		assert_int_equal(profiled_run(&r), 0); /* the agent ended by itself */
		if (!r.agent_ended_first)
			break;
		printf("  --duration %d s ended before the workload did; again, longer\n", d);
	}
	assert_false(r.agent_ended_first);
	census_watch(&c, "work_in_span_0", SPAN_1);
	census_watch(&c, "work_in_child_span", SPAN_3); /* its own id, not its root's */
	census_watch(&c, "work_outside_span", NULL);
	assert_int_equal(census_read(&c, dir, service), 1); /* one window: 60 s > run */
	for (int i = 0; i < c.nfuncs; i++) {
		printf("  %-20s %4llu samples, %4llu right\n", c.funcs[i].name,
		       (unsigned long long)c.funcs[i].samples,
		       (unsigned long long)c.funcs[i].right_span);
		/* Found by name at all: the exited process was symbolized. */
		assert_true(c.funcs[i].samples >= PROFILED_MIN_SAMPLES);
		assert_true(c.funcs[i].right_span >= 0.99 * c.funcs[i].samples);
	}
}

/* --pid profiles only that process; its syscalls show kernel frames under its user frames. */
static void test_pid_filter_and_kernel_frames(void **state)
{
	const char *dir = *state;
	char path[600];
	const char *argv[] = { "--output", dir, "--interval", "60", NULL };
	const char *work[] = { build_path("tests/workloads/span_workload"), "syscalls", "1", "2",
			       NULL };
	const char *env[] = { "OTEL_SERVICE_NAME=it-syscalls", NULL };
	struct profiled_run r = { .dir = dir,
				  .agent_args = argv,
				  .workload_argv = work,
				  .workload_env = env,
				  .hook_file = build_path("libspanprof.so") };
	struct census c = { 0 };
	struct dirent *de;
	DIR *d;

	if (!dir)
		skip();
	assert_int_equal(profiled_run(&r), 0);
	/* run_syscalls is in every sample's stack: its callee work_in_syscalls too with CFI
	 * unwinding, but not while the file's tables are built (frame pointers skip the caller of
	 * libc's syscall wrappers), so the census counts the caller. */
	census_watch(&c, "run_syscalls", SPAN_1);
	assert_int_equal(census_read(&c, dir, "it-syscalls"), 1);
	printf("  run_syscalls: %llu samples, %llu with kernel frames (workload: %.2f CPU s, %.2f of "
	       "them in the kernel)\n",
	       (unsigned long long)c.funcs[0].samples, (unsigned long long)c.kernel_samples,
	       r.cpu_s, r.sys_s);
	assert_true(PROFILED_RATE_OK(c.funcs[0].samples, r.cpu_s));
	assert_true(c.funcs[0].right_span >= 0.99 * c.funcs[0].samples);
	/* Samples with kernel frames in the share of the workload's CPU time the kernel accounted
	 * as system time (that share swings with the machine's syscall cost). */
	assert_true(r.sys_s > 0);
	assert_true(c.kernel_samples >= 0.6 * (r.sys_s / r.cpu_s) * c.funcs[0].samples);
	assert_true(c.kernel_samples <= c.funcs[0].samples);
	/* Nothing but the selected process was written. */
	d = opendir(dir);
	assert_non_null(d);
	while ((de = readdir(d)))
		if (strstr(de->d_name, ".pb.gz")) {
			snprintf(path, sizeof(path), "%s", de->d_name);
			/* its CPU profile, and its off-CPU profile if it waited in a span */
			assert_true(strstr(path, "-it-syscalls.pb.gz") ||
				    strstr(path, "-it-syscalls.off_cpu.pb.gz"));
		}
	closedir(d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_agent_rejects_bad_flag_with_usage_status,
						setup, tmpdir_teardown),
		cmocka_unit_test_setup_teardown(test_agent_names_the_missing_capability, setup,
						tmpdir_teardown),
		cmocka_unit_test_setup_teardown(test_agent_reports_a_pid_that_does_not_exist, setup,
						tmpdir_teardown),
		cmocka_unit_test_setup_teardown(test_agent_names_the_part_whose_set_up_failed,
						setup, tmpdir_teardown),
		cmocka_unit_test_setup_teardown(test_agent_names_the_cache_whose_constructor_failed,
						setup, tmpdir_teardown),
		cmocka_unit_test_setup_teardown(test_scope_all_and_process_exiting_mid_window,
						setup, tmpdir_teardown),
		cmocka_unit_test_setup_teardown(test_pid_filter_and_kernel_frames, setup,
						tmpdir_teardown),
	};

	return cmocka_run_group_tests_name("agent_options", tests, NULL, NULL);
}
