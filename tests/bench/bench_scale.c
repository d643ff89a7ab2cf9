// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Benchmark: does the agent's cost per sample grow with the node? The agent profiles the whole
 * node beside a stack-diverse busy workload (tests/workloads/stack_diverse: 64 functions, random
 * paths 12 deep, 2 threads) while 10, 100, 300 and 1000 idle processes sit beside it; one
 * agent runs through all steps. A step's new processes are read once, by the first periodic
 * rescan after their fork: that one-off cost of processes arriving is printed apart, per process
 * read, from the agent's own count of the CPU its rescans took. Then the steady state with that
 * many is measured in whole rescan periods. Per step: agent CPU per sample, the part of it spent
 * in rescans (the only work that grows with idle processes), agent CPU as a share of the CPU it
 * profiled (samples / 100 Hz), peak RSS, BPF map memory, samples lost; then `perf record -g -a`
 * at the same rate for BENCH_SECONDS, for comparison (perf only records: it symbolizes later, in
 * `perf report`). CPU figures are ratios measured within one run; on a shared machine they move
 * with its load, the rescan part much less. BENCH_SECONDS sets the least measured time per step
 * (default 10; the agent is measured in whole rescan periods, 30 s each), BENCH_SCALE_MAX the
 * largest step (default 1000). A last step goes back to 10 idle processes: the same run's
 * baseline again, after the largest step. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "agent_proc.h"
#include "bench_stats.h"
#include "metrics_scrape.h"
#include "proc_memory.h"
#include "tmpdir.h"

#define MAX_IDLE 4096
#define HZ 100
/* Longer than the agent's rescan period (30 s). */
#define RESCAN_WAIT_S 45

struct step {
	double agent_cpu_s, samples, lost, stacks_lost, rescan_cpu_s, rescans;
	double first_read, first_cpu_s; /* the first rescan after the forks */
	struct proc_memory mem;
	double perf_cpu_s, perf_samples;
};

/* Adds idle children (each waits in pause()) until there are n. */
static int grow_idle(pid_t *idle, int *have, int n)
{
	for (; *have < n; (*have)++) {
		pid_t pid = fork();

		if (pid < 0)
			return -1;
		if (pid == 0) {
			for (;;)
				pause();
		}
		idle[*have] = pid;
	}
	return 0;
}

/* Kills idle children until n are left. */
static void shrink_idle(pid_t *idle, int *have, int n)
{
	for (; *have > n; (*have)--) {
		kill(idle[*have - 1], SIGKILL);
		waitpid(idle[*have - 1], NULL, 0);
	}
}

static double scrape(int port, const char *metric)
{
	double v = -1;

	metrics_scrape(port, metric, &v);
	return v;
}

static double scrape_lost_stacks(int port)
{
	return scrape(port, "spanprof_samples_dropped_total{reason=\"user_stack_lost\"}") +
	       scrape(port, "spanprof_samples_dropped_total{reason=\"kernel_stack_lost\"}");
}

static double rescan_cpu_s(int port)
{
	return scrape(port, "spanprof_rescan_cpu_microseconds_total") / 1e6;
}

static double rescan_read(int port)
{
	return scrape(port, "spanprof_rescan_processes_total{result=\"read\"}");
}

/* Waits, up to timeout_s, until the agent's count of rescans passes *seen (its metrics move
 * once a second), and sets *seen to it. Returns 0 once one was seen, -1 when none came. */
static int wait_rescan(int port, double *seen, int timeout_s)
{
	double n;
	int i;

	for (i = 0; i < timeout_s * 4; i++) {
		n = scrape(port, "spanprof_rescans_total");
		if (n > *seen) {
			*seen = n;
			return 0;
		}
		usleep(250000);
	}
	return -1;
}

/* The running agent (metrics on port) after a step's forks. Their fork events reach the agent
 * at once; the first periodic rescan after them reads the new processes (a forked process is
 * read once, whole, by the next rescan): that rescan's CPU and the processes it read are the
 * one-off cost of their arrival, kept apart. Then the steady state, from that rescan to the
 * first after secs: whole rescan periods, each holding one rescan, as every period does (each
 * rescan reads a slice of the known processes again, a tenth and about 64 at most, about the
 * same every time). A fixed window instead held the new processes' read, or a rescan, or
 * neither, by chance (in a quiet run, 40 us per sample at 300 processes against 10-15 at the
 * other steps). */
static void measure_agent(pid_t agent, int port, int secs, struct step *st)
{
	double cpu0, samples0, lost0, stacks0, rescan0, read0;
	double seen = scrape(port, "spanprof_rescans_total");

	rescan0 = rescan_cpu_s(port);
	read0 = rescan_read(port);
	if (wait_rescan(port, &seen, RESCAN_WAIT_S))
		printf("  (no rescan within %d s: the new processes' read may fall in the steady "
		       "window)\n",
		       RESCAN_WAIT_S);
	cpu0 = bench_stats_cpu_s(agent);
	samples0 = scrape(port, "spanprof_samples_total");
	lost0 = scrape(port, "spanprof_samples_dropped_total{reason=\"counts_map_full\"}");
	stacks0 = scrape_lost_stacks(port);
	st->rescans = seen;
	st->first_cpu_s = rescan_cpu_s(port) - rescan0;
	st->first_read = rescan_read(port) - read0;
	rescan0 += st->first_cpu_s;
	sleep(secs);
	wait_rescan(port, &seen, RESCAN_WAIT_S);
	st->agent_cpu_s = bench_stats_cpu_s(agent) - cpu0;
	st->samples = scrape(port, "spanprof_samples_total") - samples0;
	st->lost =
		scrape(port, "spanprof_samples_dropped_total{reason=\"counts_map_full\"}") - lost0;
	st->stacks_lost = scrape_lost_stacks(port) - stacks0;
	st->rescan_cpu_s = rescan_cpu_s(port) - rescan0;
	st->rescans = seen - st->rescans;
	proc_memory_read(agent, &st->mem);
}

/* Waits for pid up to timeout_s, then kills it. Returns 0 when it exited with status 0. */
static int wait_or_kill(pid_t pid, int timeout_s, struct rusage *ru)
{
	int status, i;

	for (i = 0; i < timeout_s * 10; i++) {
		if (wait4(pid, &status, WNOHANG, ru) == pid)
			return WIFEXITED(status) && !WEXITSTATUS(status) ? 0 : -1;
		usleep(100000);
	}
	kill(pid, SIGKILL);
	wait4(pid, &status, 0, ru);
	return -1;
}

/* The SAMPLE events in perf data file data (`perf report --stats`, output into log), or 0. */
static double perf_sample_count(const char *data, const char *log)
{
	char cmd[1200], line[512];
	double n = 0;
	FILE *f;

	snprintf(cmd, sizeof(cmd), "perf report -i %s --stats > %s 2>/dev/null", data, log);
	if (system(cmd))
		return 0;
	f = fopen(log, "r");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, " SAMPLE events: %lf", &n) == 1)
			break;
	fclose(f);
	return n;
}

/* `perf record -g -a -F 100` for secs: its CPU time and the samples it wrote; -1 when perf is
 * missing or fails (then the comparison is left out). */
static int measure_perf(const char *dir, int secs, struct step *st)
{
	char data[512], log[512], secs_arg[16];
	struct rusage ru;
	pid_t pid;
	int fd;

	snprintf(data, sizeof(data), "%s/perf.data", dir);
	snprintf(log, sizeof(log), "%s/perf.log", dir);
	snprintf(secs_arg, sizeof(secs_arg), "%d", secs);
	pid = fork();
	if (pid == 0) {
		fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		dup2(fd, 1);
		dup2(fd, 2);
		/* No build-id collection: it opens every mapped file, and blocks on a FIFO a
		 * process left where a file was. */
		execlp("perf", "perf", "record", "-g", "-a", "-F", "100", "--no-buildid",
		       "--no-buildid-cache", "-o", data, "--", "sleep", secs_arg, (char *)NULL);
		_exit(127);
	}
	if (pid < 0 || wait_or_kill(pid, secs + 60, &ru))
		return -1;
	st->perf_cpu_s = ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + ru.ru_stime.tv_sec +
			 ru.ru_stime.tv_usec / 1e6;
	st->perf_samples = perf_sample_count(data, log);
	unlink(data);
	return st->perf_samples > 0 ? 0 : -1;
}

/* base: the first step's CPU per sample (the ratio's baseline), 0 for the first step. */
static void print_step(int n, const struct step *s, int perf_ok, double base)
{
	double per = s->samples > 0 ? 1e6 * s->agent_cpu_s / s->samples : 0;
	double share = s->samples > 0 ? 100.0 * s->agent_cpu_s / (s->samples / HZ) : 0;
	double rescan = s->samples > 0 ? 1e6 * s->rescan_cpu_s / s->samples : 0;

	printf("  %5d  %8.0f  %7.1f us  %5.2fx  %7.2f us (%1.0f)  %6.2f %%  %6.1f MiB  %6.1f MiB  %5.0f  "
	       "%5.0f  %5.0f  %6.0f us",
	       n, s->samples, per, base > 0 ? per / base : 1.0, rescan, s->rescans, share,
	       s->mem.peak_rss / 1048576.0, s->mem.bpf_maps / 1048576.0, s->lost, s->stacks_lost,
	       s->first_read, s->first_read > 0 ? 1e6 * s->first_cpu_s / s->first_read : 0);
	if (perf_ok)
		printf("   | perf: %7.1f us, %5.2f %%", 1e6 * s->perf_cpu_s / s->perf_samples,
		       100.0 * s->perf_cpu_s / (s->perf_samples / HZ));
	printf("\n");
	fflush(stdout);
}

int main(void)
{
	static const int steps[] = { 10, 100, 300, 1000 };
	const char *secs_env = getenv("BENCH_SECONDS"), *max_env = getenv("BENCH_SCALE_MAX");
	int secs = secs_env ? atoi(secs_env) : 10, max = max_env ? atoi(max_env) : 1000;
	char *dir = tmpdir_new("bench-scale"), wsecs[16];
	const char *wargv[] = { build_path("tests/workloads/stack_diverse"), "2", wsecs, NULL };
	const char *agent_argv[] = { "--output",       dir,	      "--interval", "5",
				     "--metrics-addr", "127.0.0.1:0", NULL };
	struct agent_proc agent;
	pid_t idle[MAX_IDLE], work;
	int have = 0, i, err = 0, port = -1, started = 0;
	double base = 0;
	struct step st;

	if (!dir || !agent_proc_can_run() || secs < 1 || max > MAX_IDLE)
		return 1;
	/* Long enough for every step and the last one: agent start-up, the waits for rescans,
	 * the measured time and perf's. */
	snprintf(wsecs, sizeof(wsecs), "%d", 300 + 5 * (2 * RESCAN_WAIT_S + 2 * secs + 10));
	work = workload_start(wargv, NULL, "/dev/null");
	if (work < 0)
		return 1;
	printf("\n== agent cost per sample against idle processes on the node: %d s per step, "
	       "stack-diverse workload (2 threads), %d Hz ==\n",
	       secs, HZ);
	/* On a node loaded by other work the agent may take longer than agent_proc_start()
	 * waits: then nothing is measured, which is said, and the run goes on. */
	started = !agent_proc_start(&agent, dir, agent_argv);
	if (!started || (port = metrics_scrape_port(agent.log_path)) < 0 ||
	    !agent_proc_wait_log(&agent, "window written", 300)) {
		printf("  agent not ready (see its log above): nothing measured\n");
		goto out_stop;
	}
	printf("  %5s  %8s  %10s  %6s  %14s  %8s  %10s  %10s  %5s  %5s  %5s  %9s\n", "idle",
	       "samples", "CPU/sample", "ratio", "of rescans (n)", "share", "peak RSS", "BPF maps",
	       "lost", "stack", "read", "per read");
	for (i = 0; i < (int)(sizeof(steps) / sizeof(steps[0])) && steps[i] <= max && !err; i++) {
		memset(&st, 0, sizeof(st));
		err = grow_idle(idle, &have, steps[i]);
		if (err)
			break;
		/* The new processes' fork events reach the agent at once; the next rescan reads
		 * them (measure_agent waits for it). */
		measure_agent(agent.pid, port, secs, &st);
		print_step(steps[i], &st, !measure_perf(dir, secs, &st), base);
		if (!i && st.samples > 0)
			base = st.agent_cpu_s / st.samples * 1e6;
	}
	/* Back to the first step's count: the same run's baseline again, after the largest step,
	 * so that a drift of the machine's load over the run is not read as growth. */
	if (!err && i > 1) {
		shrink_idle(idle, &have, steps[0]);
		memset(&st, 0, sizeof(st));
		measure_agent(agent.pid, port, secs, &st);
		print_step(steps[0], &st, !measure_perf(dir, secs, &st), base);
	}
	printf("  (last row: back to %d idle processes, the run's baseline again; ratio: CPU per\n"
	       "   sample over the first step's; of rescans: the part of CPU per sample the\n"
	       "   periodic rescans took, n rescans in the window; share: agent CPU over the CPU\n"
	       "   its samples stand for, samples / %d Hz; lost: samples that found the count map\n"
	       "   full; stack: stacks not recorded; read, per read: processes the first rescan\n"
	       "   after the step's forks read, and its CPU per process read, the one-off cost of\n"
	       "   a new process, outside the steady window)\n",
	       steps[0], HZ);
out_stop:
	if (started)
		agent_proc_stop(&agent);
	for (i = 0; i < have; i++)
		kill(idle[i], SIGKILL);
	for (i = 0; i < have; i++)
		waitpid(idle[i], NULL, 0);
	kill(work, SIGKILL);
	waitpid(work, NULL, 0);
	tmpdir_remove(dir);
	return err ? 1 : 0;
}
