// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Benchmark: what the hook library's version costs the sampler and the agent. Two copies of
 * tests/workloads/span_workload (two threads each, switching spans every few ms, one function
 * per span) run side by side, each under its own agent (--pid, 100 Hz, default options): "v2"
 * dlopens the library as built for hook ABI version 2 (the uprobe at every call; samples read
 * the thread's task storage), "v3" today's library (a thread context record and a ring of span
 * changes; samples read the record through the registered slot). Per agent: all its BPF
 * programs' time per sample of its workload (kernel.bpf_stats_enabled, less the cost of its
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
	const char *argv[] = { build_path("tests/workloads/span_workload_dl"),
			       "dlopen",
			       "2",
			       secs,
			       build_path(ph->arg),
			       NULL };
	char env_service[128];
	char *env[] = { env_service, "SPANPROF_WORKLOAD_GATE=1", NULL };

	snprintf(env_service, sizeof(env_service), "OTEL_SERVICE_NAME=%s", ph->service);
	return paired_bench_spawn(ph, argv, env);
}

static int start(struct paired_phase *ph, const char *root, const char *secs)
{
	char pid_arg[16], want[96];
	const char *argv[] = {
		"--pid", pid_arg, "--output", ph->dir, "--log-level", "debug", NULL
	};

	snprintf(ph->dir, sizeof(ph->dir), "%s/%s", root, ph->tag);
	snprintf(ph->service, sizeof(ph->service), "bench-hook-%s-%d", ph->tag, (int)getpid());
	if (mkdir(ph->dir, 0755))
		return -1;
	ph->pid = spawn(ph, secs);
	if (ph->pid < 0 ||
	    workload_wait_exec(ph->pid, build_path("tests/workloads/span_workload_dl"), 30))
		return -1;
	snprintf(pid_arg, sizeof(pid_arg), "%d", (int)ph->pid);
	if (agent_proc_start(&ph->agent, ph->dir, argv))
		return -1;
	snprintf(want, sizeof(want), "(pid %d,", (int)ph->pid);
	if (!agent_proc_wait_log(&ph->agent, "span hook attached:", READY_TIMEOUT_S) ||
	    !agent_proc_wait_log(&ph->agent, want, READY_TIMEOUT_S))
		return -1;
	snprintf(want, sizeof(want), "unwind: pid %d ready", (int)ph->pid);
	return agent_proc_wait_log(&ph->agent, want, READY_TIMEOUT_S) ? 0 : -1;
}

int main(void)
{
	struct paired_phase ph[2] = {
		{ .tag = "v2",
		  .label = "v2: uprobe per call",
		  .arg = "tests/workloads/libspanprof_v2.so" },
		{ .tag = "v3",
		  .label = "v3: thread context record, ring",
		  .arg = "libspanprof.so" },
	};

	return paired_bench_run("bench_hook_agent",
				"hook ABI v2 vs v3 under the agent: two span_workload side by side",
				"v3 / v2", ph, start);
}
