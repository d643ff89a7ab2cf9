// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Benchmark: the agent's own CPU time as a fraction of the CPU time it profiles (both CPUs busy
 * with span-switching threads at 100 Hz), and its memory (RSS) at the end of the run.
 * BENCH_SECONDS sets the length (default 30). The agent profiles the whole node, unless
 * BENCH_AGENT_PID=1: then only the workload (--pid), which on a machine shared with other builds
 * measures what the workload costs the agent rather than what the other processes do. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent_proc.h"
#include "bench_stats.h"
#include "tmpdir.h"

/* A "Vm...:" field of /proc/PID/status in kB. */
static long proc_status_kb(pid_t pid, const char *field)
{
	char path[64], line[256];
	long kb = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, field, strlen(field)))
			sscanf(line + strlen(field), " %ld", &kb);
	fclose(f);
	return kb;
}

int main(void)
{
	const char *secs_env = getenv("BENCH_SECONDS");
	int secs = secs_env ? atoi(secs_env) : 30;
	char secs_arg[16], *dir = tmpdir_new("bench-agent");
	const char *agent_argv[] = { "--output", dir, NULL, NULL, NULL };
	const char *only_pid = getenv("BENCH_AGENT_PID");
	char pid_arg[16];
	const char *work_argv[] = { build_path("tests/workloads/span_workload"), "spans", "2",
				    secs_arg, NULL };
	const char *env[] = { "OTEL_SERVICE_NAME=bench-agent", NULL };
	struct agent_proc agent;
	double agent_cpu, work_cpu, agent_warm, work_warm;
	int warmup = secs / 3 < 10 ? secs / 3 : 10;
	long rss_kb, hwm_kb;
	pid_t work;

	if (!dir || !agent_proc_can_run() || secs < 1)
		return 1;
	snprintf(secs_arg, sizeof(secs_arg), "%d", secs);
	if (only_pid && !strcmp(only_pid, "1")) {
		/* The workload waits (up to 20 s) for an agent before it starts its spans. */
		work = workload_start(work_argv, env, "/dev/null");
		snprintf(pid_arg, sizeof(pid_arg), "%d", work);
		agent_argv[2] = "--pid";
		agent_argv[3] = pid_arg;
		if (work < 0 || agent_proc_start(&agent, dir, agent_argv))
			return 1;
	} else {
		if (agent_proc_start(&agent, dir, agent_argv))
			return 1;
		work = workload_start(work_argv, env, "/dev/null");
	}
	/* The workload runs until its threads used secs of CPU each: on a loaded machine that
	 * takes longer, hence the generous wait. Steady state: from the end of the warm-up (first
	 * scans, kallsyms, the workload's symbols) to the end. */
	sleep(warmup);
	agent_warm = bench_stats_cpu_s(agent.pid);
	work_warm = bench_stats_cpu_s(work);
	if (workload_wait_cpu(work, 10 * secs + 30, &work_cpu) != 0) {
		agent_proc_stop(&agent);
		return 1;
	}
	agent_cpu = bench_stats_cpu_s(agent.pid);
	rss_kb = proc_status_kb(agent.pid, "VmRSS:");
	hwm_kb = proc_status_kb(agent.pid, "VmHWM:");
	agent_proc_stop(&agent);
	tmpdir_remove(dir);

	printf("\n== agent overhead: %d s, 2 busy threads switching spans every 4 ms, 100 Hz, %s ==\n",
	       secs, agent_argv[2] ? "--pid" : "whole node");
	printf("  profiled workload CPU time   %8.2f s\n", work_cpu);
	printf("  agent CPU time               %8.2f s\n", agent_cpu);
	printf("  agent / profiled CPU         %8.3f %%\n", 100.0 * agent_cpu / work_cpu);
	printf("  ... in steady state (%d s on) %8.3f %%\n", warmup,
	       100.0 * (agent_cpu - agent_warm) / (work_cpu - work_warm));
	printf("  agent RSS now / peak         %8.1f MB / %.1f MB\n", rss_kb / 1024.0,
	       hwm_kb / 1024.0);
	return 0;
}
