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
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "agent_proc.h"
#include "bench_stats.h"
#include "profile_census.h"
#include "tmpdir.h"

#define READY_TIMEOUT_S 60
#define BASELINE_S 2

struct phase {
	const char *tag, *lib;
	char dir[600], service[64];
	struct agent_proc agent;
	pid_t pid;
	int go_fd;
	unsigned long long ns0, runs0, base_ns, base_runs, ns, runs, samples;
	double agent0, agent_cpu, work_cpu;
};

static pid_t spawn(struct phase *ph, const char *secs)
{
	const char *exe = build_path("tests/workloads/span_workload_dl");
	char out[700], env_service[128];
	int fds[2];
	pid_t pid;

	snprintf(out, sizeof(out), "%s/workload.out", ph->dir);
	snprintf(env_service, sizeof(env_service), "OTEL_SERVICE_NAME=%s", ph->service);
	if (pipe(fds))
		return -1;
	pid = fork();
	if (pid == 0) {
		char *env[] = { env_service, "SPANPROF_WORKLOAD_GATE=1", NULL };

		dup2(fds[0], 0);
		close(fds[1]);
		if (!freopen(out, "w", stdout))
			_exit(127);
		execle(exe, exe, "dlopen", "2", secs, build_path(ph->lib), (char *)NULL, env);
		_exit(127);
	}
	close(fds[0]);
	ph->go_fd = fds[1];
	return pid;
}

static int start(struct phase *ph, const char *root, const char *secs)
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

static double per_sample_ns(const struct phase *ph)
{
	double other = ph->base_runs ? (double)ph->base_ns / ph->base_runs : 0;
	double others = ph->runs > ph->samples ? (double)(ph->runs - ph->samples) : 0;

	return ph->samples ? (ph->ns - others * other) / ph->samples : 0;
}

int main(void)
{
	const char *secs_env = getenv("BENCH_SECONDS");
	char *root = tmpdir_new("bench-hook-agent"), secs[16];
	struct phase ph[2] = {
		{ .tag = "v2", .lib = "tests/workloads/libspanprof_v2.so" },
		{ .tag = "v3", .lib = "libspanprof.so" },
	};
	unsigned long long ns, runs;
	struct rusage ru;
	int i, was, status, ok = 1;

	if (!root || !agent_proc_can_run())
		return 1;
	snprintf(secs, sizeof(secs), "%d", secs_env ? atoi(secs_env) : 10);
	was = bench_stats_enable();
	for (i = 0; ok && i < 2; i++)
		if (start(&ph[i], root, secs)) {
			fprintf(stderr, "bench_hook_agent: %s did not get ready\n", ph[i].tag);
			if (ph[i].agent.pid > 0)
				agent_proc_print_log(&ph[i].agent);
			ok = 0;
		}
	/* The agents' runs for other processes and idle CPUs, before the workloads run. */
	for (i = 0; ok && i < 2; i++)
		bench_stats_bpf_progs(ph[i].agent.pid, &ph[i].base_ns, &ph[i].base_runs);
	sleep(BASELINE_S);
	for (i = 0; ok && i < 2; i++) {
		bench_stats_bpf_progs(ph[i].agent.pid, &ns, &runs);
		ph[i].base_ns = ns - ph[i].base_ns;
		ph[i].base_runs = runs - ph[i].base_runs;
		bench_stats_bpf_progs(ph[i].agent.pid, &ph[i].ns0, &ph[i].runs0);
		ph[i].agent0 = bench_stats_cpu_s(ph[i].agent.pid);
	}
	for (i = 0; ok && i < 2; i++)
		ok = write(ph[i].go_fd, "go\n", 3) == 3;
	for (i = 0; i < 2; i++) {
		if (ph[i].go_fd > 0)
			close(ph[i].go_fd);
		if (ph[i].pid <= 0)
			continue;
		if (!ok)
			kill(ph[i].pid, SIGKILL);
		if (wait4(ph[i].pid, &status, 0, &ru) != ph[i].pid || !WIFEXITED(status) ||
		    WEXITSTATUS(status))
			ok = 0;
		bench_stats_bpf_progs(ph[i].agent.pid, &ns, &runs);
		ph[i].ns = ns - ph[i].ns0;
		ph[i].runs = runs - ph[i].runs0;
		ph[i].agent_cpu = bench_stats_cpu_s(ph[i].agent.pid) - ph[i].agent0;
		ph[i].work_cpu = ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 +
				 ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
	}
	for (i = 0; i < 2; i++) {
		struct census c;

		if (ph[i].agent.pid > 0)
			agent_proc_stop(&ph[i].agent);
		memset(&c, 0, sizeof(c));
		if (ok && census_read(&c, ph[i].dir, ph[i].service) > 0)
			ph[i].samples = c.total_samples;
	}
	bench_stats_restore(was);
	if (!ok)
		printf("bench_hook_agent: failed\n");
	printf("\n== hook ABI v2 vs v3 under the agent: two span_workload side by side, 2 threads x "
	       "%s CPU-s each ==\n",
	       secs);
	printf("  %-44s %8s %12s %12s %10s\n", "agent", "samples", "BPF/sample", "other run",
	       "agent CPU");
	for (i = 0; ok && i < 2; i++)
		printf("  %-44s %8llu %9.0f ns %9.0f ns %9.3f %%\n",
		       i ? "v3: thread context record, ring" : "v2: uprobe per call", ph[i].samples,
		       per_sample_ns(&ph[i]),
		       ph[i].base_runs ? (double)ph[i].base_ns / ph[i].base_runs : 0.0,
		       ph[i].work_cpu > 0 ? 100.0 * ph[i].agent_cpu / ph[i].work_cpu : 0.0);
	if (ok && per_sample_ns(&ph[0]) > 0)
		printf("  v3 / v2, BPF time per sample: %.2f\n",
		       per_sample_ns(&ph[1]) / per_sample_ns(&ph[0]));
	tmpdir_remove(root);
	return ok && ph[0].samples && ph[1].samples ? 0 : 1;
}
