// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The agent as an operator runs it: clear start-up errors (an unclosed IPv6 server URL, a
 * directory given as --config), an output directory deleted while it runs, temporary files a
 * killed run left, and window lines that count only what was written. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "agent_proc.h"
#include "push_receiver.h"
#include "tmpdir.h"

#define WAIT_S 30
#define STALE_TEMP ".20231114T221320.123Z-000001-it-ops.pb.gz.tmp"

static int setup(void **state)
{
	return agent_proc_dir_setup(state, "it-ops");
}

/* Starts `prefix... build/spanprof argv...`, stderr into dir/agent.log; returns its pid. */
static pid_t spawn_agent(const char *dir, const char *const *prefix, const char *const *argv)
{
	const char *args[24];
	char log_path[512];
	int fd, n = 0, i;
	pid_t pid;

	for (i = 0; prefix && prefix[i]; i++)
		args[n++] = prefix[i];
	args[n++] = build_path("spanprof");
	for (i = 0; argv[i] && n < 23; i++)
		args[n++] = argv[i];
	args[n] = NULL;
	snprintf(log_path, sizeof(log_path), "%s/agent.log", dir);
	pid = fork();
	if (pid == 0) {
		fd = open(log_path, O_WRONLY | O_CREAT | O_TRUNC, 0666);
		dup2(fd, 2);
		execv(args[0], (char *const *)args);
		_exit(127);
	}
	return pid;
}

/* Exit status of the agent pid once it has ended, or -1. */
static int agent_status(pid_t pid)
{
	int status;

	if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

/* Runs `prefix... build/spanprof argv...` to completion, stderr into dir/agent.log. */
static int run_agent(const char *dir, const char *const *prefix, const char *const *argv)
{
	return agent_status(spawn_agent(dir, prefix, argv));
}

/* The whole of dir/agent.log (malloc'ed). */
static char *read_log(const char *dir)
{
	char path[512], *text = NULL;
	size_t len = 0;
	FILE *f, *m;
	int c;

	snprintf(path, sizeof(path), "%s/agent.log", dir);
	f = fopen(path, "r");
	assert_non_null(f);
	m = open_memstream(&text, &len);
	assert_non_null(m);
	while ((c = fgetc(f)) != EOF)
		fputc(c, m);
	fclose(f);
	fclose(m);
	return text;
}

static size_t count_of(const char *text, const char *needle)
{
	size_t n = 0;

	for (; (text = strstr(text, needle)); text += strlen(needle))
		n++;
	return n;
}

static void assert_log_has(const char *dir, const char *text)
{
	char *log = read_log(dir);

	if (!strstr(log, text))
		fail_msg("agent log in %s does not mention '%s':\n%s", dir, text, log);
	free(log);
}

static void test_agent_refuses_an_unclosed_ipv6_server_url(void **state)
{
	const char *argv[] = { "--server", "http://[::1", NULL };

	if (!*state)
		skip();
	assert_int_equal(run_agent(*state, NULL, argv), 2);
	assert_log_has(*state, "--server: invalid value 'http://[::1': expected an IPv6 address "
			       "in brackets");
}

static void test_agent_says_the_config_file_is_a_directory(void **state)
{
	const char *argv[] = { "--config", *state, NULL };
	char want[600];

	if (!*state)
		skip();
	assert_int_equal(run_agent(*state, NULL, argv), 2);
	snprintf(want, sizeof(want), "config file %s: is a directory", (char *)*state);
	assert_log_has(*state, want);
}

/* A --pid target the agent cannot read (another user's process, the agent without
 * CAP_SYS_PTRACE and the DAC overrides) is reported at warn level, with its pid and why, and
 * the agent goes on. */
/* Voluntary context switches of pid's main thread so far, or -1. */
static long voluntary_switches(pid_t pid)
{
	char path[64], line[256];
	long n = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "voluntary_ctxt_switches: %ld", &n) == 1)
			break;
	fclose(f);
	return n;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* An agent whose only process sleeps has nothing to do but its drain, once a second (a wait and
 * the window flip's settle pause: two voluntary switches): its run loop sleeps until then. It
 * used to wake ten times a second to look for process events; a loaded machine preempts it more
 * (involuntary switches, not counted) but does not make it sleep more often. */
static void test_idle_agent_sleeps_between_drains(void **state)
{
	const char *dir = *state;
	const char *work[] = { "/bin/sleep", "120", NULL };
	char pid_arg[16], ready[64];
	const char *argv[] = { "--pid", pid_arg, "-v", "--output", dir, NULL };
	struct agent_proc agent;
	long s0, s1;
	double t0, t1, rate;
	pid_t pid;

	if (!dir)
		skip();
	pid = workload_start(work, NULL, "/dev/null");
	assert_true(pid > 0);
	assert_int_equal(workload_wait_exec(pid, "/bin/sleep", WAIT_S), 0);
	snprintf(pid_arg, sizeof(pid_arg), "%d", (int)pid);
	assert_int_equal(agent_proc_start(&agent, dir, argv), 0);
	/* Start-up done: the process's unwind tables are built and published. */
	snprintf(ready, sizeof(ready), "unwind: pid %d ready", (int)pid);
	assert_true(agent_proc_wait_log(&agent, ready, WAIT_S));
	s0 = voluntary_switches(agent.pid);
	t0 = now_s();
	while (now_s() - t0 < 5.0)
		usleep(100 * 1000);
	s1 = voluntary_switches(agent.pid);
	t1 = now_s();
	assert_true(s0 >= 0 && s1 >= s0);
	rate = (s1 - s0) / (t1 - t0);
	print_message("  idle agent: %ld voluntary switches in %.1f s (%.1f a second)\n", s1 - s0,
		      t1 - t0, rate);
	kill(pid, SIGKILL);
	workload_wait(pid, WAIT_S);
	assert_int_equal(agent_proc_stop(&agent), 0);
	assert_true(rate <= 4.0);
}

static void test_agent_warns_about_an_unreadable_pid_target(void **state)
{
	const char *capsh = "/usr/sbin/capsh", *setpriv = "/usr/bin/setpriv";
	const char *target[] = {
		setpriv, "--reuid=65534", "--regid=65534", "--clear-groups", "/bin/sleep", "30",
		NULL
	};
	const char *prefix[] = { capsh,
				 "--drop=cap_sys_ptrace,cap_dac_read_search,cap_dac_override",
				 "--",
				 "-c",
				 "exec \"$0\" \"$@\"",
				 NULL };
	/* Stopped once it has said so (--duration only bounds a run whose test failed first). */
	const char *argv[] = { "--pid", NULL, "--duration", "120", "--output", *state, NULL };
	char pid_arg[16], want[64], *log, *line, *end;
	struct agent_proc agent;
	pid_t pid;

	if (!*state)
		skip();
	if (access(capsh, X_OK) || access(setpriv, X_OK)) {
		printf("SKIP: needs capsh (libcap2-bin) and setpriv (util-linux)\n");
		skip();
	}
	pid = workload_start(target, NULL, "/dev/null");
	assert_true(pid > 0);
	assert_int_equal(workload_wait_exec(pid, "/usr/bin/sleep", WAIT_S), 0);
	snprintf(pid_arg, sizeof(pid_arg), "%d", (int)pid);
	argv[1] = pid_arg;
	snprintf(want, sizeof(want), "(pid %d) not opened: cannot open", (int)pid);
	agent.pid = spawn_agent(*state, prefix, argv);
	assert_true(agent.pid > 0);
	snprintf(agent.log_path, sizeof(agent.log_path), "%s/agent.log", (const char *)*state);
	agent_proc_wait_log(&agent, want, WAIT_S); /* the log is judged below */
	kill(agent.pid, SIGINT);
	assert_int_equal(agent_status(agent.pid), 0);
	kill(pid, SIGKILL);
	workload_wait(pid, WAIT_S);
	log = read_log(*state);
	line = strstr(log, want);
	if (!line)
		fail_msg("the agent did not report pid %d:\n%s", (int)pid, log);
	while (line > log && line[-1] != '\n')
		line--;
	end = strchr(line, '\n');
	if (end)
		*end = '\0';
	if (!strstr(line, "level=warn") || !strstr(line, "Permission denied"))
		fail_msg("not a warning with its reason: %s", line);
	free(log);
}

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

/* Profiles of service it-ops in dir. */
static int profiles_in(const char *dir)
{
	struct dirent *de;
	int n = 0;
	DIR *d = opendir(dir);

	if (!d)
		return 0;
	while ((de = readdir(d)))
		n += de->d_name[0] != '.' && strstr(de->d_name, "-it-ops.pb.gz") != NULL;
	closedir(d);
	return n;
}

/* Polls until dir holds at least n profiles; fails after WAIT_S. */
static void wait_profiles(const char *dir, int n)
{
	int64_t end = now_ms() + WAIT_S * 1000;

	while (profiles_in(dir) < n) {
		if (now_ms() > end)
			fail_msg("%s: %d profiles after %d s, expected %d", dir, profiles_in(dir),
				 WAIT_S, n);
		usleep(50000);
	}
}

/* Polls dir/agent.log until it contains text; fails after WAIT_S. */
static void wait_log(const char *dir, const char *text)
{
	int64_t end = now_ms() + WAIT_S * 1000;
	char *log;

	for (;;) {
		log = read_log(dir);
		if (strstr(log, text)) {
			free(log);
			return;
		}
		if (now_ms() > end)
			fail_msg("agent log does not say '%s' after %d s:\n%s", text, WAIT_S, log);
		free(log);
		usleep(100000);
	}
}

static void remove_tree(const char *dir)
{
	char cmd[700];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
}

static void touch(const char *path)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fclose(f);
}

/* The stale temp file of a SIGKILLed run goes at start, and nothing else does; the output
 * directory deleted under the running agent comes back with the next window's profile. */
static void test_agent_recreates_its_output_dir_and_removes_stale_temp_files(void **state)
{
	const char *dir = *state;
	char out[600], path[700], pid_arg[16], *log;
	const char *argv[] = { "--output", out, "--pid", pid_arg, "--interval", "1", NULL };
	const char *work[] = { "/bin/sh", "-c", "while :; do :; done", NULL };
	const char *env[] = { "OTEL_SERVICE_NAME=it-ops", NULL };
	struct agent_proc agent;
	pid_t pid;

	if (!dir)
		skip();
	snprintf(out, sizeof(out), "%s/out", dir);
	assert_int_equal(mkdir(out, 0755), 0);
	snprintf(path, sizeof(path), "%s/%s", out, STALE_TEMP);
	touch(path);
	snprintf(path, sizeof(path), "%s/notes.tmp", out);
	touch(path);
	pid = workload_start(work, env, "/dev/null");
	assert_true(pid > 0);
	snprintf(pid_arg, sizeof(pid_arg), "%d", pid);
	assert_int_equal(agent_proc_start(&agent, dir, argv), 0);
	snprintf(path, sizeof(path), "%s/%s", out, STALE_TEMP);
	assert_int_equal(access(path, F_OK), -1); /* removed before the agent said "profiling" */
	snprintf(path, sizeof(path), "%s/notes.tmp", out);
	assert_int_equal(access(path, F_OK), 0);
	wait_profiles(out, 1);
	remove_tree(out);
	wait_profiles(out, 1);
	remove_tree(out);
	wait_profiles(out, 1);
	log = read_log(dir);
	assert_null(strstr(log, "failed;"));
	free(log);
	/* A file where the directory was: the window's profile cannot be written, and the window
	 * line says so instead of counting it as written. */
	remove_tree(out);
	touch(out);
	wait_log(dir, "window written: 0 profiles, 1 failed;");
	kill(pid, SIGKILL);
	workload_wait(pid, WAIT_S);
	agent_proc_stop(&agent); /* its last window fails too */
	log = read_log(dir);
	/* Logged once, however often it happens. */
	assert_int_equal(count_of(log, "was deleted; created it again"), 1);
	assert_non_null(strstr(log, "removed 1 temporary files"));
	assert_non_null(strstr(log, "window written: 1 profiles;"));
	free(log);
}

/* The server moved (another port, answering a permanent redirect where it was): every push the
 * agent made, spooled first, reaches it, and none is dropped. */
static void test_agent_pushes_through_a_redirect(void **state)
{
	const char *dir = *state;
	struct push_receiver *old, *moved;
	char spool[600], pid_arg[16], *log;
	const char *argv[] = { "--server", NULL,      "--pid", pid_arg, "--interval",
			       "1",	   "--spool", spool,   NULL };
	const char *work[] = { "/bin/sh", "-c", "while :; do :; done", NULL };
	const char *env[] = { "OTEL_SERVICE_NAME=it-ops", NULL };
	struct agent_proc agent;
	size_t i, sent;
	pid_t pid;

	if (!dir)
		skip();
	old = push_receiver_new(0);
	moved = push_receiver_new(0);
	assert_non_null(old);
	assert_non_null(moved);
	push_receiver_set_location(old, push_receiver_url(moved));
	push_receiver_answer(old, 308, 0, NULL);
	argv[1] = push_receiver_url(old);
	snprintf(spool, sizeof(spool), "%s/spool", dir);
	pid = workload_start(work, env, "/dev/null");
	assert_true(pid > 0);
	snprintf(pid_arg, sizeof(pid_arg), "%d", pid);
	assert_int_equal(agent_proc_start(&agent, dir, argv), 0);
	assert_true(push_receiver_wait(moved, 200, 3, WAIT_S * 1000) >= 3);
	kill(pid, SIGKILL);
	workload_wait(pid, WAIT_S);
	assert_int_equal(agent_proc_stop(&agent), 0);
	sent = push_receiver_count_status(old, 308);
	printf("  %zu pushes redirected, %zu delivered\n", sent, push_receiver_count(moved));
	assert_int_equal(push_receiver_count(old), sent);
	assert_int_equal(push_receiver_count_status(moved, 200), sent);
	for (i = 0; i < sent; i++)
		assert_string_equal(
			push_record_label(push_receiver_record(moved, i), 0, "service_name"),
			"it-ops");
	log = read_log(dir);
	if (strstr(log, "dropped") || strstr(log, "rejected"))
		fail_msg("the agent dropped profiles:\n%s", log);
	free(log);
	push_receiver_free(old);
	push_receiver_free(moved);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_agent_refuses_an_unclosed_ipv6_server_url,
						setup, tmpdir_teardown),
		cmocka_unit_test_setup_teardown(test_agent_says_the_config_file_is_a_directory,
						setup, tmpdir_teardown),
		cmocka_unit_test_setup_teardown(
			test_agent_recreates_its_output_dir_and_removes_stale_temp_files, setup,
			tmpdir_teardown),
		cmocka_unit_test_setup_teardown(test_agent_pushes_through_a_redirect, setup,
						tmpdir_teardown),
		cmocka_unit_test_setup_teardown(test_idle_agent_sleeps_between_drains, setup,
						tmpdir_teardown),
		cmocka_unit_test_setup_teardown(test_agent_warns_about_an_unreadable_pid_target,
						setup, tmpdir_teardown),
	};

	return cmocka_run_group_tests_name("agent_ops", tests, NULL, NULL);
}
