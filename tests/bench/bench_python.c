// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Benchmark: what reading CPython frames in BPF costs. Two Debian python3.11 processes run side by
 * side, each with two busy threads in their own spans through the project's Python binding
 * (tests/workloads/py_spans.py threads), each under its own agent (--pid, 100 Hz): one with
 * native frames only (--interpreter-frames=false, "before"), one reading Python frames (the
 * default, "after"); at the same time, so both see the same load. Per agent: the sampler's BPF
 * time per sample of its workload (kernel.bpf_stats_enabled), its CPU against its workload's after
 * a warm-up, and the share of samples showing a Python function. Each thread runs BENCH_SECONDS
 * of CPU time (default 10), so load changes wall time only. */
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

#define PYTHON "/usr/bin/python3.11"
#define SPAN_1 "5a5a000000000001"
#define SPAN_2 "5a5a000000000002"
/* Seconds after "go" left out of the agent's CPU figure (kernel and workload symbols). */
#define WARMUP_S 3
#define READY_TIMEOUT_S 60
/* A sampler also runs for every other process's samples (the other workload's among them) and
 * idle CPUs, and returns early: the cost of such a run is measured this long before "go" (the
 * workloads wait) and after both ended, and taken out. */
#define BASELINE_S 2
/* The target: agent CPU with two busy Python threads, share of the profiled CPU. */
#define TARGET_PCT 0.5

struct phase {
	const char *name, *tag;
	int frames; /* --interpreter-frames */
	double agent_cpu, work_cpu; /* after the warm-up */
	unsigned long long bpf_ns, bpf_runs; /* from "go" to the workload's end */
	double other_run_ns; /* a sampler run on another process or idle (baseline) */
	unsigned long long samples, py_samples, span_samples; /* the workload's, in its profiles */
	int ok;
	/* While it runs. */
	char dir[600];
	struct agent_proc agent;
	pid_t py; /* 0 once reaped */
	double agent0, work0;
	unsigned long long ns0, runs0, base_ns, base_runs;
};

struct bench {
	char *dir;
	char gate[700]; /* both workloads start when it exists */
	char secs_arg[16];
	int secs;
	struct phase phases[2]; /* before, after */
};

/* Waits for what the agent logs once pid is fully set up: its span hook attached, its unwind
 * tables ready and, with frames on, its CPython frames read. */
static int wait_ready(const struct agent_proc *a, pid_t pid, int frames)
{
	char hook[64], unwind[64], python[64];

	snprintf(hook, sizeof(hook), "(pid %d, ", (int)pid);
	snprintf(unwind, sizeof(unwind), "unwind: pid %d ready", (int)pid);
	snprintf(python, sizeof(python), "pid %d: reading CPython", (int)pid);
	if (!agent_proc_wait_log(a, hook, READY_TIMEOUT_S) ||
	    !agent_proc_wait_log(a, unwind, READY_TIMEOUT_S) ||
	    (frames && !agent_proc_wait_log(a, python, READY_TIMEOUT_S))) {
		fprintf(stderr, "bench_python: the agent did not get ready for pid %d\n", (int)pid);
		agent_proc_print_log(a);
		return -1;
	}
	return 0;
}

/* Ends a workload a failed phase leaves behind (it may have been reaped already). */
static void kill_python(pid_t pid)
{
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

static pid_t start_python(struct bench *b, const struct phase *ph)
{
	char env_service[64], env_path[4400], env_lib[4400];
	const char *env[] = { env_service, env_path, env_lib, NULL };
	const char *argv[] = { PYTHON,	    build_path("../tests/workloads/py_spans.py"),
			       "threads",   b->gate,
			       b->secs_arg, NULL };
	pid_t pid;

	snprintf(env_service, sizeof(env_service), "OTEL_SERVICE_NAME=bench-py-%s", ph->tag);
	snprintf(env_path, sizeof(env_path), "PYTHONPATH=%s", build_path("../hooks/python"));
	snprintf(env_lib, sizeof(env_lib), "SPANPROF_LIBRARY=%s", build_path("libspanprof.so"));
	pid = workload_start(argv, env, "/dev/null");
	if (pid > 0 && workload_wait_exec(pid, PYTHON, 30)) {
		kill_python(pid);
		return -1;
	}
	return pid;
}

/* The workload's samples: all, those showing either thread's Python function, those in spans. */
static void count_samples(struct phase *ph)
{
	char service[64];
	struct census c;

	memset(&c, 0, sizeof(c));
	census_watch(&c, "thread_one", SPAN_1);
	census_watch(&c, "thread_two", SPAN_2);
	snprintf(service, sizeof(service), "bench-py-%s", ph->tag);
	if (census_read(&c, ph->dir, service) <= 0)
		return;
	ph->samples = c.total_samples;
	ph->py_samples = c.funcs[0].samples + c.funcs[1].samples;
	ph->span_samples = c.funcs[0].span_total + c.funcs[1].span_total;
}

/* Starts the phase's workload (waiting on the gate) and its agent, and waits until the agent is
 * ready for it. */
static int phase_start(struct bench *b, struct phase *ph)
{
	char pid_arg[16];
	const char *argv[] = { "--pid",
			       pid_arg,
			       "--output",
			       ph->dir,
			       "--log-level",
			       "debug",
			       "--interpreter-frames",
			       ph->frames ? "true" : "false",
			       NULL };

	snprintf(ph->dir, sizeof(ph->dir), "%s/%s", b->dir, ph->tag);
	if (mkdir(ph->dir, 0755))
		return -1;
	ph->py = start_python(b, ph);
	if (ph->py < 0) {
		ph->py = 0;
		return -1;
	}
	snprintf(pid_arg, sizeof(pid_arg), "%d", (int)ph->py);
	if (agent_proc_start(&ph->agent, ph->dir, argv)) {
		ph->agent.pid = 0;
		return -1;
	}
	return wait_ready(&ph->agent, ph->py, ph->frames);
}

/* Adds each sampler's time and runs over BASELINE_S seconds while no workload runs. */
static void baseline(struct bench *b)
{
	unsigned long long ns[2], runs[2], ns1, runs1;
	int i;

	for (i = 0; i < 2; i++)
		bench_stats_bpf_progs(b->phases[i].agent.pid, &ns[i], &runs[i]);
	sleep(BASELINE_S);
	for (i = 0; i < 2; i++) {
		bench_stats_bpf_progs(b->phases[i].agent.pid, &ns1, &runs1);
		b->phases[i].base_ns += ns1 - ns[i];
		b->phases[i].base_runs += runs1 - runs[i];
	}
}

/* Reaps the phase's workload if it ended, closing its measurement. Returns 1 once reaped. */
static int phase_reap(struct phase *ph)
{
	unsigned long long ns, runs;
	struct rusage ru;
	int status;

	if (!ph->py)
		return 1;
	if (wait4(ph->py, &status, WNOHANG, &ru) != ph->py)
		return 0;
	ph->py = 0;
	ph->agent_cpu = bench_stats_cpu_s(ph->agent.pid) - ph->agent0;
	bench_stats_bpf_progs(ph->agent.pid, &ns, &runs);
	ph->bpf_ns = ns - ph->ns0;
	ph->bpf_runs = runs - ph->runs0;
	ph->work_cpu = ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + ru.ru_stime.tv_sec +
		       ru.ru_stime.tv_usec / 1e6 - ph->work0;
	ph->ok = WIFEXITED(status) && !WEXITSTATUS(status) && ph->agent0 >= 0 && ph->work0 >= 0;
	return 1;
}

/* From "go" to both workloads' end, with a baseline of the samplers' other runs before and
 * after. Returns 0, or -1 when the workloads did not end in time. */
static int measure(struct bench *b)
{
	struct phase *ph = b->phases;
	int i, waited;

	baseline(b);
	for (i = 0; i < 2; i++)
		bench_stats_bpf_progs(ph[i].agent.pid, &ph[i].ns0, &ph[i].runs0);
	if (bench_stats_write_file(b->gate, ""))
		return -1;
	sleep(WARMUP_S);
	for (i = 0; i < 2; i++) {
		ph[i].agent0 = bench_stats_cpu_s(ph[i].agent.pid);
		ph[i].work0 = bench_stats_cpu_s(ph[i].py);
	}
	for (waited = 0; !(phase_reap(&ph[0]) & phase_reap(&ph[1])); waited++) {
		if (waited > (120 * b->secs + 240) * 100)
			return -1;
		usleep(10000);
	}
	baseline(b);
	for (i = 0; i < 2; i++)
		if (ph[i].base_runs) /* else kernel.bpf_stats_enabled could not be set */
			ph[i].other_run_ns = (double)ph[i].base_ns / ph[i].base_runs;
	return 0;
}

/* Ends what a phase left running; on success the agent writes its last window first. */
static void phase_stop(struct phase *ph)
{
	if (ph->py) {
		kill_python(ph->py);
		ph->py = 0;
		ph->ok = 0;
	}
	if (ph->agent.pid > 0 && agent_proc_stop(&ph->agent))
		ph->ok = 0;
	ph->agent.pid = 0;
	if (ph->ok)
		count_samples(ph);
	ph->ok = ph->ok && ph->samples > 0 && ph->other_run_ns > 0;
}

static void run(struct bench *b)
{
	int i, err = 0;

	snprintf(b->gate, sizeof(b->gate), "%s/go", b->dir);
	for (i = 0; i < 2 && !err; i++)
		err = phase_start(b, &b->phases[i]);
	if (!err)
		measure(b);
	for (i = 0; i < 2; i++)
		phase_stop(&b->phases[i]);
}

static double pct(double part, double whole)
{
	return whole > 0 ? 100.0 * part / whole : -1;
}

/* Microseconds of BPF per sample of the workload: the sampler's time from "go" to the end,
 * less its runs for other processes and idle CPUs at the cost measured before "go". */
static double per_sample_us(const struct phase *ph)
{
	double others = ph->bpf_runs > ph->samples ? ph->bpf_runs - ph->samples : 0;

	if (!ph->samples)
		return -1;
	return (ph->bpf_ns - others * ph->other_run_ns) / 1000.0 / ph->samples;
}

static void print_phase(const struct phase *ph)
{
	if (!ph->ok) {
		printf("  %-38s (failed)\n", ph->name);
		return;
	}
	printf("  %-38s %7.1f %% %7llu %7.1f %% %8.2f s %8.3f %% %8.2f s %7.2f us %7.2f us\n",
	       ph->name, pct(ph->py_samples, ph->samples), ph->samples,
	       pct(ph->span_samples, ph->samples), ph->agent_cpu, pct(ph->agent_cpu, ph->work_cpu),
	       ph->work_cpu, per_sample_us(ph), ph->other_run_ns / 1000.0);
}

static void print_results(const struct bench *b, const struct phase *before,
			  const struct phase *after, const char *load0, const char *load1)
{
	printf("\n== CPython frames in BPF: two %s side by side, each 2 threads x %d CPU-s in spans, "
	       "100 Hz, --pid ==\n",
	       PYTHON, b->secs);
	printf("  load average %s at the start, %s at the end\n", load0, load1);
	printf("  %-38s %9s %7s %9s %10s %10s %10s %10s %10s\n", "agent", "Python fn", "samples",
	       "in spans", "agent CPU", "/ profiled", "profiled", "BPF/sample", "other run");
	print_phase(before);
	print_phase(after);
	if (!before->ok || !after->ok)
		return;
	printf("  after / before: BPF per sample x%.2f (%+.2f us), agent CPU share x%.2f\n",
	       per_sample_us(after) / per_sample_us(before),
	       per_sample_us(after) - per_sample_us(before),
	       pct(after->agent_cpu, after->work_cpu) / pct(before->agent_cpu, before->work_cpu));
	printf("  agent CPU with Python frames: %.3f %% of the profiled CPU (target <= %.1f %%)\n",
	       pct(after->agent_cpu, after->work_cpu), TARGET_PCT);
	printf("  (agent CPU: after a %d s warm-up, against the workload's CPU in the same window. "
	       "BPF/sample: the sampler's\n   time from go to the end per sample of the workload in "
	       "its profiles, less its other runs (other\n   processes, idle CPUs) at the cost per "
	       "run measured for %d s before go and after the end: \"other run\")\n",
	       WARMUP_S, BASELINE_S);
}

static void load_average(char *buf, size_t size)
{
	FILE *f = fopen("/proc/loadavg", "r");

	snprintf(buf, size, "?");
	if (f) {
		if (fscanf(f, "%15s", buf) != 1)
			snprintf(buf, size, "?");
		fclose(f);
	}
}

int main(void)
{
	const char *secs_env = getenv("BENCH_SECONDS");
	struct bench b = {
		.secs = secs_env ? atoi(secs_env) : 10,
		.phases = { { .name = "--interpreter-frames=false (native)", .tag = "native" },
			    { .name = "default (Python frames)", .tag = "frames", .frames = 1 } },
	};
	char load0[16], load1[16];
	int stats_was;

	if (access(PYTHON, X_OK)) {
		printf("bench_python: skipped, no %s\n", PYTHON);
		return 0;
	}
	if (!agent_proc_can_run() || b.secs < 1)
		return 1;
	b.dir = tmpdir_new("bench-python");
	if (!b.dir)
		return 1;
	snprintf(b.secs_arg, sizeof(b.secs_arg), "%d", b.secs);
	load_average(load0, sizeof(load0));
	stats_was = bench_stats_enable();
	run(&b);
	bench_stats_restore(stats_was);
	load_average(load1, sizeof(load1));
	print_results(&b, &b.phases[0], &b.phases[1], load0, load1);
	tmpdir_remove(b.dir);
	return b.phases[0].ok && b.phases[1].ok ? 0 : 1;
}
