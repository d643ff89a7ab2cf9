// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Test-only: one agent on one gated workload (see profiled_run.h). */
#define _GNU_SOURCE
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "held_fork.h"
#include "profiled_run.h"

#define MAX_AGENT_ARGS 60
#define ATTACH_TIMEOUT_S 60
#define WORKLOAD_TIMEOUT_S 90
#define AGENT_END_TIMEOUT_S 60

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* The child (stdin from the test's pipe): stdout into out_path; blocks until the test writes
 * one byte, then execs (so the agent can be started with --pid on it first). */
static void child_exec(const struct profiled_run *r, const char *out_path)
{
	char go;
	int fd;

	fd = open(out_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0)
		_exit(126);
	dup2(fd, 1);
	for (const char *const *e = r->workload_env; e && *e; e++)
		putenv((char *)*e);
	putenv("SPANPROF_WORKLOAD_GATE=1");
	if (r->root && root_enter(r->root, r->root_binds))
		_exit(125);
	if (read(0, &go, 1) != 1)
		_exit(126);
	execv(r->workload_argv[0], (char *const *)r->workload_argv);
	_exit(127);
}

static pid_t spawn_held(const struct profiled_run *r, int *gate_fd, char *out, size_t outlen)
{
	/* The child opens a file named after its own pid; the parent names it the same way. */
	pid_t pid = held_fork(gate_fd);

	if (pid == 0) {
		snprintf(out, outlen, "%s/workload-%d.out", r->dir, getpid());
		child_exec(r, out);
	}
	if (pid < 0)
		return -1;
	snprintf(out, outlen, "%s/workload-%d.out", r->dir, pid);
	return pid;
}

static int start_agent(struct profiled_run *r)
{
	const char *argv[MAX_AGENT_ARGS + 3];
	char pid_arg[16];
	int n = 0;

	for (; r->agent_args && r->agent_args[n] && n < MAX_AGENT_ARGS; n++)
		argv[n] = r->agent_args[n];
	snprintf(pid_arg, sizeof(pid_arg), "%d", r->pid);
	argv[n++] = "--pid";
	argv[n++] = pid_arg;
	argv[n] = NULL;
	return agent_proc_start(&r->agent, r->dir, argv);
}

/* Lets the workload exec and waits for this agent's attach of the hook file. */
static int wait_attach(struct profiled_run *r, int gate_fd)
{
	char want[PATH_MAX + 64], real[PATH_MAX];
	const char *file = r->hook_file ? r->hook_file : r->workload_argv[0];
	double t0 = now_s();

	/* The mapping's path as /proc/PID/maps shows it: canonical. Under a root, the path inside
	 * it, which an agent that is itself chrooted (CI's clean root) sees with a prefix: the
	 * line is matched from the path on. */
	if (r->wait_log)
		snprintf(want, sizeof(want), r->wait_log, r->pid);
	else if (r->root)
		snprintf(want, sizeof(want), "%s (pid %d,", file, r->pid);
	else
		snprintf(want, sizeof(want), "span hook attached: %s (pid %d,",
			 realpath(file, real) ? real : file, r->pid);
	if (write(gate_fd, "x", 1) != 1)
		return -1;
	if (!agent_proc_wait_log(&r->agent, want, ATTACH_TIMEOUT_S)) {
		printf("  the agent did not log \"%s\" within %d s\n", want, ATTACH_TIMEOUT_S);
		return -1;
	}
	/* The attach comes once the hook file is parsed (off the agent's run loop): maybe after
	 * the text waited for. */
	if (r->wait_log && r->wait_hook_too) {
		snprintf(want, sizeof(want), "span hook attached: %s (pid %d,",
			 realpath(file, real) ? real : file, r->pid);
		if (!agent_proc_wait_log(&r->agent, want, ATTACH_TIMEOUT_S)) {
			printf("  the agent did not log \"%s\" within %d s\n", want,
			       ATTACH_TIMEOUT_S);
			return -1;
		}
	}
	if (r->wait_log && r->wait_log_too) {
		snprintf(want, sizeof(want), r->wait_log_too, r->pid);
		if (!agent_proc_wait_log(&r->agent, want, ATTACH_TIMEOUT_S)) {
			printf("  the agent did not log \"%s\" within %d s\n", want,
			       ATTACH_TIMEOUT_S);
			return -1;
		}
	}
	r->attach_s = now_s() - t0;
	return 0;
}

/* Reads "cpu_s=..." (and "sys_s=..." if given) from the workload's stdout. */
static int read_cpu(struct profiled_run *r, const char *out_path)
{
	char line[256];
	FILE *f = fopen(out_path, "r");

	r->cpu_s = r->sys_s = -1;
	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "cpu_s=%lf", &r->cpu_s) != 1)
			sscanf(line, "sys_s=%lf", &r->sys_s);
	if (f)
		fclose(f);
	if (r->cpu_s < 0)
		printf("  the workload reported no cpu_s in %s\n", out_path);
	return r->cpu_s < 0 ? -1 : 0;
}

static int finish_agent(struct profiled_run *r)
{
	int rc;

	if (r->keep_agent)
		return 0;
	rc = r->agent_stops_itself ? workload_wait(r->agent.pid, AGENT_END_TIMEOUT_S) :
				     agent_proc_stop(&r->agent);
	if (rc)
		printf("  the agent ended with status %d\n", rc);
	return rc ? -1 : 0;
}

int profiled_run(struct profiled_run *r)
{
	char out_path[600];
	int gate_fd = -1, rc;

	signal(SIGPIPE, SIG_IGN); /* a workload that died shows in its status, not as our death */
	r->attach_s = r->cpu_s = -1;
	r->agent_ended_first = 0;
	r->pid = spawn_held(r, &gate_fd, out_path, sizeof(out_path));
	if (r->pid < 0)
		return -1;
	if (start_agent(r)) {
		close(gate_fd);
		workload_wait(r->pid, 5);
		return -1;
	}
	if (wait_attach(r, gate_fd) || write(gate_fd, "go\n", 3) != 3) {
		close(gate_fd);
		kill(r->pid, SIGKILL);
		workload_wait(r->pid, 5);
		agent_proc_stop(&r->agent);
		agent_proc_print_log(&r->agent);
		return -1;
	}
	close(gate_fd);
	rc = workload_wait(r->pid, WORKLOAD_TIMEOUT_S);
	r->agent_ended_first = agent_proc_has_exited(&r->agent);
	if (rc)
		printf("  the workload (pid %d) ended with status %d\n", r->pid, rc);
	rc = rc || read_cpu(r, out_path) ? -1 : 0;
	if (finish_agent(r) || rc) {
		if (r->keep_agent)
			agent_proc_stop(&r->agent);
		agent_proc_print_log(&r->agent);
		return -1;
	}
	return 0;
}
