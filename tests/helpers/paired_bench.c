// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Test-only: two workloads under two agents, side by side (see paired_bench.h). */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench_stats.h"
#include "held_fork.h"
#include "paired_bench.h"
#include "profile_census.h"
#include "tmpdir.h"

#define BASELINE_S 2

static double per_sample_ns(const struct paired_phase *ph)
{
	double other = ph->base_runs ? (double)ph->base_ns / ph->base_runs : 0;
	double others = ph->runs > ph->samples ? (double)(ph->runs - ph->samples) : 0;

	return ph->samples ? (ph->ns - others * other) / ph->samples : 0;
}

/* The agents' runs for other processes and idle CPUs, before the workloads run. */
static void measure_baseline(struct paired_phase ph[2])
{
	unsigned long long ns, runs;
	int i;

	for (i = 0; i < 2; i++)
		bench_stats_bpf_progs(ph[i].agent.pid, &ph[i].base_ns, &ph[i].base_runs);
	sleep(BASELINE_S);
	for (i = 0; i < 2; i++) {
		bench_stats_bpf_progs(ph[i].agent.pid, &ns, &runs);
		ph[i].base_ns = ns - ph[i].base_ns;
		ph[i].base_runs = runs - ph[i].base_runs;
		bench_stats_bpf_progs(ph[i].agent.pid, &ph[i].ns0, &ph[i].runs0);
		ph[i].agent0 = bench_stats_cpu_s(ph[i].agent.pid);
	}
}

/* Waits for each workload and takes what its agent spent meanwhile; returns ok, or 0 when a
 * workload failed (all are killed when ok is 0 on entry). */
static int finish(struct paired_phase ph[2], int ok)
{
	unsigned long long ns, runs;
	struct rusage ru;
	int i, status;

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
	return ok;
}

static void print_table(const char *title, const char *ratio, const char *secs,
			const struct paired_phase ph[2])
{
	int i;

	printf("\n== %s, 2 threads x %s CPU-s each ==\n", title, secs);
	printf("  %-44s %8s %12s %12s %10s\n", "agent", "samples", "BPF/sample", "other run",
	       "agent CPU");
	for (i = 0; i < 2; i++)
		printf("  %-44s %8llu %9.0f ns %9.0f ns %9.3f %%\n", ph[i].label, ph[i].samples,
		       per_sample_ns(&ph[i]),
		       ph[i].base_runs ? (double)ph[i].base_ns / ph[i].base_runs : 0.0,
		       ph[i].work_cpu > 0 ? 100.0 * ph[i].agent_cpu / ph[i].work_cpu : 0.0);
	if (per_sample_ns(&ph[0]) > 0)
		printf("  %s, BPF time per sample: %.2f\n", ratio,
		       per_sample_ns(&ph[1]) / per_sample_ns(&ph[0]));
}

pid_t paired_bench_spawn(struct paired_phase *ph, const char *const *argv, char *const *envp)
{
	char out[700];
	pid_t pid;

	snprintf(out, sizeof(out), "%s/workload.out", ph->dir);
	pid = held_fork(&ph->go_fd);
	if (pid == 0) {
		if (!freopen(out, "w", stdout))
			_exit(127);
		if (envp)
			execve(argv[0], (char *const *)argv, envp);
		else
			execv(argv[0], (char *const *)argv);
		_exit(127);
	}
	return pid;
}

int paired_bench_run(const char *name, const char *title, const char *ratio,
		     struct paired_phase ph[2], paired_start_fn start)
{
	const char *secs_env = getenv("BENCH_SECONDS");
	char *root = tmpdir_new(name), secs[16];
	int i, was, ok = 1;

	if (!root || !agent_proc_can_run())
		return 1;
	snprintf(secs, sizeof(secs), "%d", secs_env ? atoi(secs_env) : 10);
	was = bench_stats_enable();
	for (i = 0; ok && i < 2; i++)
		if (start(&ph[i], root, secs)) {
			fprintf(stderr, "%s: %s did not get ready\n", name, ph[i].tag);
			if (ph[i].agent.pid > 0)
				agent_proc_print_log(&ph[i].agent);
			ok = 0;
		}
	if (ok)
		measure_baseline(ph);
	for (i = 0; ok && i < 2; i++)
		ok = write(ph[i].go_fd, "go\n", 3) == 3;
	ok = finish(ph, ok);
	bench_stats_restore(was);
	if (ok)
		print_table(title, ratio, secs, ph);
	else
		printf("%s: failed\n", name);
	tmpdir_remove(root);
	return ok && ph[0].samples && ph[1].samples ? 0 : 1;
}
