// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Test-only process control: the agent under test and the workloads it profiles. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "agent_proc.h"
#include "tmpdir.h"

/* Start-up (kernel symbols, BPF verification) and the last window's write at exit take seconds
 * on a loaded 2-CPU VM: the stress run (tests/stress_integration.sh) saw a start over 20 s. */
#define AGENT_START_TIMEOUT_S 60
#define AGENT_STOP_TIMEOUT_S 60

#define READY_TEXT "profiling "

int agent_proc_can_run(void)
{
	if (geteuid() != 0) {
		printf("SKIP: needs root (CAP_BPF, CAP_PERFMON) to load BPF programs\n");
		return 0;
	}
	if (access("/sys/kernel/btf/vmlinux", R_OK)) {
		printf("SKIP: no kernel BTF at /sys/kernel/btf/vmlinux\n");
		return 0;
	}
	return 1;
}

int agent_proc_dir_setup(void **state, const char *tag)
{
	*state = NULL;
	if (!agent_proc_can_run())
		return 0;
	*state = tmpdir_new(tag);
	return *state ? 0 : -1;
}

int agent_proc_go_setup(void **state, const char *workload, const char *tag)
{
	*state = NULL;
	return go_workload_built(workload) ? agent_proc_dir_setup(state, tag) : 0;
}

int agent_group_start(struct agent_group *g, const char *tag, const char **argv)
{
	if (!agent_proc_can_run()) {
		g->skip = 1;
		return 0;
	}
	g->dir = tmpdir_new(tag);
	if (!g->dir)
		return -1;
	argv[1] = g->dir;
	return agent_proc_start(&g->agent, g->dir, argv);
}

int agent_group_stop(struct agent_group *g)
{
	if (g->skip)
		return 0;
	agent_proc_stop(&g->agent);
	tmpdir_remove(g->dir);
	return 0;
}

const char *build_path(const char *rel)
{
	/* A few buffers in turn, so several results can be used in one argv array. */
	static char paths[8][4096 + 256];
	/* The output dir, found once: a test that later enters a new mount namespace inside a
	 * chroot (test_hook_swap in CI's clean root) reads /proc/self/exe as a path outside it. */
	static char dir[4096];
	static unsigned int next;
	char *path = paths[next++ % 8];
	ssize_t n;
	char *p, *q;

	if (!dir[0]) {
		n = readlink("/proc/self/exe", dir, sizeof(dir) - 1);
		dir[n > 0 ? n : 0] = '\0';
		/* <output dir>/tests/<kind>[/<stage>]/<binary> -> <output dir>, whatever the
		 * output dir is called (build, or build-san for `make sanitize`): cut at the last
		 * "/tests/". */
		for (p = NULL, q = dir; (q = strstr(q, "/tests/")); q++)
			p = q;
		if (p)
			*p = '\0';
		if (!p || !strstr(dir, "/build"))
			snprintf(dir, sizeof(dir), "build");
	}
	snprintf(path, sizeof(paths[0]), "%s/%s", dir, rel);
	return path;
}

static void print_file(const char *path)
{
	char line[1024];
	FILE *f = fopen(path, "r");

	if (!f)
		return;
	while (fgets(line, sizeof(line), f))
		printf("  | %s", line);
	fclose(f);
}

void agent_proc_print_log(const struct agent_proc *a)
{
	printf("agent log %s:\n", a->log_path);
	print_file(a->log_path);
}

int agent_proc_log_count(const struct agent_proc *a, const char *text)
{
	char line[2048];
	int n = 0;
	FILE *f = fopen(a->log_path, "r");

	while (f && fgets(line, sizeof(line), f))
		n += strstr(line, text) != NULL;
	if (f)
		fclose(f);
	return n;
}

int agent_proc_log_contains(const struct agent_proc *a, const char *text)
{
	char line[2048];
	int found = 0;
	FILE *f = fopen(a->log_path, "r");

	if (!f)
		return 0;
	while (!found && fgets(line, sizeof(line), f))
		found = strstr(line, text) != NULL;
	fclose(f);
	return found;
}

/* 1 when pid has exited; it stays a zombie for its waiter (WNOWAIT). */
static int has_exited(pid_t pid)
{
	siginfo_t info = { 0 };

	return !waitid(P_PID, pid, &info, WEXITED | WNOHANG | WNOWAIT) && info.si_pid == pid;
}

int agent_proc_has_exited(const struct agent_proc *a)
{
	return has_exited(a->pid);
}

int agent_proc_wait_log(const struct agent_proc *a, const char *text, int timeout_s)
{
	for (int i = 0; i < timeout_s * 100; i++) {
		if (agent_proc_log_contains(a, text))
			return 1;
		if (has_exited(a->pid))
			return agent_proc_log_contains(a, text);
		usleep(10000);
	}
	return agent_proc_log_contains(a, text);
}

int agent_proc_wait_attach(const struct agent_proc *a, const char *hook_file, pid_t pid,
			   int timeout_s)
{
	char want[PATH_MAX + 64], real[PATH_MAX];

	snprintf(want, sizeof(want), "span hook attached: %s (pid %d,",
		 realpath(hook_file, real) ? real : hook_file, (int)pid);
	if (agent_proc_wait_log(a, want, timeout_s))
		return 1;
	printf("no \"%s\" within %d s\n", want, timeout_s);
	agent_proc_print_log(a);
	return 0;
}

int agent_proc_start(struct agent_proc *a, const char *log_dir, const char *const *argv)
{
	return agent_proc_start_bin(a, build_path("spanprof"), log_dir, argv);
}

int agent_proc_start_bin(struct agent_proc *a, const char *bin, const char *log_dir,
			 const char *const *argv)
{
	/* Room for a --pid per process of a test that starts a few dozen. */
	const char *args[160] = { bin };
	int i, fd;

	for (i = 0; argv[i] && i < 158; i++)
		args[i + 1] = argv[i];
	snprintf(a->log_path, sizeof(a->log_path), "%s/agent.log", log_dir);
	/* Emptied before the fork: the wait below must not read an earlier agent's log. */
	fd = open(a->log_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return -1;
	a->pid = fork();
	if (a->pid == 0) {
		/* A test that fails an assertion never stops its agent: the agent goes with the
		 * test process, not later. */
		prctl(PR_SET_PDEATHSIG, SIGTERM);
		dup2(fd, 2);
		execv(args[0], (char *const *)args);
		_exit(127);
	}
	close(fd);
	if (a->pid < 0)
		return -1;
	if (agent_proc_wait_log(a, READY_TEXT, AGENT_START_TIMEOUT_S))
		return 0;
	/* Not left behind: it would hold the test's stdout, and a pipe reading it would hang. */
	kill(a->pid, SIGKILL);
	waitpid(a->pid, NULL, 0);
	printf("agent did not start within %d s; its log:\n", AGENT_START_TIMEOUT_S);
	print_file(a->log_path);
	return -1;
}

int workload_wait_cpu(pid_t pid, int timeout_s, double *cpu_s)
{
	struct rusage ru;
	int status, i;

	for (i = 0; i < timeout_s * 100; i++) {
		if (wait4(pid, &status, WNOHANG, &ru) == pid) {
			if (cpu_s)
				*cpu_s = ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 +
					 ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
			return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
		}
		usleep(10000);
	}
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	return -1;
}

int workload_wait(pid_t pid, int timeout_s)
{
	return workload_wait_cpu(pid, timeout_s, NULL);
}

int agent_proc_stop(struct agent_proc *a)
{
	int rc;

	kill(a->pid, SIGINT);
	rc = workload_wait(a->pid, AGENT_STOP_TIMEOUT_S);
	if (rc != 0) {
		printf("agent exited with %d; its log:\n", rc);
		print_file(a->log_path);
	}
	return rc;
}

int workload_wait_exec(pid_t pid, const char *path, int timeout_s)
{
	const struct timespec step = { 0, 10 * 1000 * 1000 };
	char link[64], exe[4096], *want = realpath(path, NULL);
	int found = 0;

	if (!want)
		return -1;
	snprintf(link, sizeof(link), "/proc/%d/exe", (int)pid);
	for (int i = 0; i < timeout_s * 100 && !found; i++) {
		ssize_t n = readlink(link, exe, sizeof(exe) - 1);

		if (n > 0) {
			exe[n] = '\0';
			found = !strcmp(exe, want);
		}
		if (!found)
			nanosleep(&step, NULL);
	}
	free(want);
	return found ? 0 : -1;
}

pid_t workload_start(const char *const *argv, const char *const *env, const char *stdout_path)
{
	pid_t pid = fork();
	int fd;

	if (pid != 0)
		return pid;
	for (; env && *env; env++)
		putenv((char *)*env);
	if (stdout_path) {
		fd = open(stdout_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		dup2(fd, 1);
	}
	execv(argv[0], (char *const *)argv);
	_exit(127);
}

int go_workload_built(const char *rel)
{
	if (!access(build_path(rel), R_OK))
		return 1;
	printf("SKIP: %s missing (is golang-go installed?)\n", rel);
	return 0;
}
