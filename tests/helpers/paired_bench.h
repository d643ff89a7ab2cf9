/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Test-only: two workloads run side by side, each under its own agent (--pid), and what each
 * agent's BPF programs cost per sample of its workload and its CPU against the workload's: the
 * measuring half of the benchmarks that compare two ways of publishing spans. */
#ifndef SPANPROF_TEST_PAIRED_BENCH_H
#define SPANPROF_TEST_PAIRED_BENCH_H

#include <sys/types.h>

#include "agent_proc.h"

/* One side: the bench fills tag, label (its table row), arg (what its workload differs by) and
 * service; start() fills dir, agent, pid and go_fd (the workload waits for a line on it). */
struct paired_phase {
	const char *tag, *label, *arg;
	char dir[600], service[64];
	struct agent_proc agent;
	pid_t pid;
	int go_fd;
	unsigned long long ns0, runs0, base_ns, base_runs, ns, runs, samples;
	double agent0, agent_cpu, work_cpu;
};

/* Makes root/<tag>, starts the phase's gated workload and its agent, and waits until the agent
 * is ready for it. Returns 0 or -1. */
typedef int (*paired_start_fn)(struct paired_phase *ph, const char *root, const char *secs);

/* Starts argv with envp (NULL: ours) held: its stdin is a pipe whose write end becomes
 * ph->go_fd, its stdout <ph->dir>/workload.out. Returns the pid, or -1. */
pid_t paired_bench_spawn(struct paired_phase *ph, const char *const *argv, char *const *envp);

/* Starts both phases (each thread of each workload runs BENCH_SECONDS of CPU, default 10),
 * measures the agents' runs for other processes first, lets both workloads go at once, and
 * prints one table under title with ratio's line: phase 1's BPF time per sample over phase 0's.
 * name names the temporary directory and prefixes error lines. Returns the process's exit
 * status: 0 when both phases gave samples. */
int paired_bench_run(const char *name, const char *title, const char *ratio,
		     struct paired_phase ph[2], paired_start_fn start);

#endif /* SPANPROF_TEST_PAIRED_BENCH_H */
