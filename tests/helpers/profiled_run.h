/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Test-only: one agent (--pid) profiling one workload, free of races with other agents on the
 * machine. The workload is forked and held before exec; the agent starts with --pid on it; the
 * workload execs; the test waits until THIS agent logged the attach of the exact hook file (any
 * agent raises spanprof_active(), so the workload cannot tell), and only then sends "go". The
 * workload reports the CPU seconds it used itself ("cpu_s=..." on stdout). */
#ifndef SPANPROF_TEST_PROFILED_RUN_H
#define SPANPROF_TEST_PROFILED_RUN_H

#include <sys/types.h>

#include "agent_proc.h"
#include "root_exec.h"

/* The samples a task gets per CPU second at the agent's default 100 Hz lie in this band. On this
 * 2-CPU VM with every CPU busy, cpu-clock sampling gave one task 0.45 to 1.3 times the nominal
 * rate (in frequency mode and in fixed-period mode alike), so the band catches a sample stream
 * that is lost or doubled, not that drift; an idle machine gives about 1.0. */
#define PROFILED_HZ 100
#define PROFILED_RATE_MIN 0.4
#define PROFILED_RATE_MAX 1.6
#define PROFILED_RATE_OK(samples, cpu_s)                           \
	((samples) >= PROFILED_RATE_MIN * PROFILED_HZ * (cpu_s) && \
	 (samples) <= PROFILED_RATE_MAX * PROFILED_HZ * (cpu_s))

/* Samples a function needs before its share of right span labels is judged: a quarter of a
 * CPU second at the band's low end (0.4 x 100 Hz) gives it; 99% of 10 means all of them. */
#define PROFILED_MIN_SAMPLES 10

struct profiled_run {
	/* In. */
	const char *dir; /* agent.log and the workload's stdout go here */
	const char *const *agent_args; /* NULL-terminated; "--pid <workload>" is appended */
	const char *const *workload_argv; /* argv[0] is a path */
	const char *const *workload_env; /* "K=V", NULL-terminated, may be NULL */
	const char *hook_file; /* the file whose attach to wait for (NULL: workload_argv[0]) */
	/* Non-NULL: the workload runs chrooted there (root_enter() with root_binds), workload_argv[0]
	 * is a path inside it, and hook_file is the hook's path as the workload sees it. */
	const char *root;
	const struct root_bind *root_binds;
	/* Instead of the hook's attach, wait for this agent log text: a printf format whose one
	 * %d is the workload's pid (NULL: wait for the attach). */
	const char *wait_log;
	int wait_hook_too; /* with wait_log: also wait for hook_file's attach */
	/* With wait_log: then also wait for this text (a printf format whose one %d is the pid),
	 * e.g. "unwind: pid %d ready" with the agent at --log-level debug. */
	const char *wait_log_too;
	int agent_stops_itself; /* agent_args has --duration: wait for the agent's exit */
	int keep_agent; /* leave the agent running; the caller stops it (agent_proc_stop) */
	/* Out. */
	pid_t pid; /* the workload */
	double attach_s; /* from the workload's exec to this agent's attach of hook_file */
	double cpu_s; /* user + system CPU seconds the workload reported */
	double sys_s; /* of which in the kernel ("sys_s="); -1 when the workload does not say */
	int agent_ended_first; /* the agent had exited (--duration) before the workload did */
	struct agent_proc agent;
};

/* Runs the agent and the workload to the end (the agent too unless keep_agent). Returns 0, or
 * -1 after printing what went wrong and the agent's log; nothing is left running on -1. */
int profiled_run(struct profiled_run *r);

#endif /* SPANPROF_TEST_PROFILED_RUN_H */
