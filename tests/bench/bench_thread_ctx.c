// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Benchmark: what reading OpenTelemetry thread context costs the sampler. Two copies of
 * tests/workloads/tctx_workload run side by side (two threads each, alternating a function in a
 * span's record and one outside), each under its own agent (--pid, 100 Hz): "before" publishes
 * nothing (the sampler's lookup of the process misses), "after" publishes process context and
 * records with three attributes, read with --thread-ctx-labels http.route. Per agent: the
 * sampler's BPF time per sample of its workload (kernel.bpf_stats_enabled, less the cost of its
 * runs for other processes, measured before the workloads start) and its CPU against its
 * workload's. Each thread runs BENCH_SECONDS of CPU time (default 10). */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent_proc.h"
#include "paired_bench.h"

#define READY_TIMEOUT_S 60

static pid_t spawn(struct paired_phase *ph, const char *secs)
{
	const char *argv[] = { build_path("tests/workloads/tctx_workload"),
			       "dl",
			       build_path("tests/workloads/libtctx_writer.so"),
			       ph->arg,
			       secs,
			       NULL };

	return paired_bench_spawn(ph, argv, NULL);
}

static int start(struct paired_phase *ph, const char *root, const char *secs)
{
	char pid_arg[16], want[96];
	const char *argv[] = {
		"--pid",      pid_arg,	     "--output", ph->dir, "--thread-ctx-labels",
		"http.route", "--log-level", "debug",	 NULL
	};

	snprintf(ph->dir, sizeof(ph->dir), "%s/%s", root, ph->tag);
	if (mkdir(ph->dir, 0755))
		return -1;
	ph->pid = spawn(ph, secs);
	if (ph->pid < 0 ||
	    workload_wait_exec(ph->pid, build_path("tests/workloads/tctx_workload"), 30))
		return -1;
	snprintf(pid_arg, sizeof(pid_arg), "%d", (int)ph->pid);
	if (agent_proc_start(&ph->agent, ph->dir, argv))
		return -1;
	snprintf(want, sizeof(want), "unwind: pid %d ready", (int)ph->pid);
	if (!agent_proc_wait_log(&ph->agent, want, READY_TIMEOUT_S))
		return -1;
	snprintf(want, sizeof(want), "thread context of pid %d:", (int)ph->pid);
	if (strcmp(ph->arg, "plain") && !agent_proc_wait_log(&ph->agent, want, READY_TIMEOUT_S))
		return -1;
	return 0;
}

int main(void)
{
	struct paired_phase ph[2] = {
		{ .tag = "before",
		  .label = "before: no thread context",
		  .arg = "plain",
		  .service = "tctx_workload" },
		{ .tag = "after",
		  .label = "after: records with 3 attributes, 1 label",
		  .arg = "normal",
		  .service = "tctx-svc" },
	};

	return paired_bench_run(
		"bench_thread_ctx",
		"OpenTelemetry thread context in BPF: two tctx_workload side by side",
		"after / before", ph, start);
}
