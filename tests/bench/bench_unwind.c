// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Benchmark: native unwinding side by side with `perf record --call-graph dwarf`, in one run on
 * the same workloads (two busy processes, one per CPU: the -O2 -fomit-frame-pointer qsort fixture
 * and Debian's python3.11): share of samples whose stack reaches main, agent CPU against profiled
 * CPU, perf's record + script CPU, the sampler's BPF cost per sample with and without CFI
 * unwinding (kernel.bpf_stats_enabled), and table size and build time per MB of text for libc,
 * python3.11 and libruby. Each workload runs BENCH_SECONDS of CPU time per phase (default 10), so a
 * busy machine changes the wall time, not the number of samples. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "agent_proc.h"
#include "bench_stats.h"
#include "stack_chain.h"
#include "tmpdir.h"
#include "unwind/cfi_table.h"
#include "unwind/unwind_store.h"
#include "unwind_fixture.h"

#define PYTHON "/usr/bin/python3.11"
#define PERF "/usr/bin/perf"
/* Seconds of each agent phase left out of its CPU figures (start-up work). */
#define WARMUP_S 3

struct phase {
	const char *name;
	double share_c, share_py; /* samples reaching main: qsort fixture, python */
	double work_cpu, tool_cpu; /* profiled CPU; the profiler's CPU in the measured phase */
	double post_cpu; /* perf script afterwards */
	unsigned long long bpf_ns, bpf_cnt;
	int ok;
};

struct bench {
	struct unwind_fixture uf;
	char *dir;
	int secs;
	char secs_arg[16];
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* The two workloads, waiting on go. */
static void start_workloads(struct bench *b, const char *tag, const char *go, pid_t *c, pid_t *py)
{
	static const char script[] = "import os, sys, time\n"
				     "while not os.path.exists(sys.argv[1]): time.sleep(0.01)\n"
				     "end = time.process_time() + float(sys.argv[2])\n"
				     "def work(n):\n"
				     "    return sum(i * i for i in range(n))\n"
				     "while time.process_time() < end: work(10000)\n";
	const char *cargv[] = { b->uf.exe, "qsort", b->secs_arg, go, NULL };
	const char *pyargv[] = { PYTHON, "-c", script, go, b->secs_arg, NULL };
	char env_c[64], env_py[64];
	const char *envc[] = { env_c, NULL }, *envpy[] = { env_py, NULL };

	snprintf(env_c, sizeof(env_c), "OTEL_SERVICE_NAME=bench-c-%s", tag);
	snprintf(env_py, sizeof(env_py), "OTEL_SERVICE_NAME=bench-py-%s", tag);
	*c = workload_start(cargv, envc, "/dev/null");
	*py = workload_start(pyargv, envpy, "/dev/null");
}

static int wait_log(const struct agent_proc *a, const char *text, double timeout_s)
{
	double end = now_s() + timeout_s;

	while (!agent_proc_log_contains(a, text)) {
		if (now_s() > end)
			return -1;
		usleep(20000);
	}
	return 0;
}

static double share(const char *dir, const char *service, const char *root)
{
	const char *chain[] = { NULL, root };
	struct chain_count c;

	if (chain_count(dir, service, chain, 2, &c) <= 0 || !c.leaf)
		return -1;
	return 100.0 * c.whole / c.leaf;
}

/* The agent on both workloads, a profile per service every 15 s (the default); cfi_bytes "0"
 * turns CFI unwinding off. Debug logging, for the "ready" lines (a few lines a window). */
static void run_agent(struct bench *b, struct phase *ph, const char *tag, const char *cfi_bytes)
{
	char go[700], dir[600], pc[16], ppy[16], text[64], svc[64];
	const char *argv[] = { "--pid",	      pc,	  "--pid",
			       ppy,	      "--output", dir,
			       "--log-level", "debug",	  "--unwind-table-bytes",
			       cfi_bytes,     NULL };
	double cpu0, work0, wc = 0, wpy = 0;
	struct agent_proc a;
	pid_t c, py;

	snprintf(dir, sizeof(dir), "%s/%s", b->dir, tag);
	mkdir(dir, 0755);
	snprintf(go, sizeof(go), "%s/go", dir);
	start_workloads(b, tag, go, &c, &py);
	snprintf(pc, sizeof(pc), "%d", (int)c);
	snprintf(ppy, sizeof(ppy), "%d", (int)py);
	if (agent_proc_start(&a, dir, argv))
		return;
	if (strcmp(cfi_bytes, "0")) {
		snprintf(text, sizeof(text), "unwind: pid %d ready", (int)c);
		if (wait_log(&a, text, 30))
			goto out;
		snprintf(text, sizeof(text), "unwind: pid %d ready", (int)py);
		if (wait_log(&a, text, 30))
			goto out;
	}
	bench_stats_write_file(go, "");
	/* Steady state: the first seconds load kernel symbols and the workloads' symbols. */
	usleep(WARMUP_S * 1000000);
	cpu0 = bench_stats_cpu_s(a.pid);
	work0 = bench_stats_cpu_s(c) + bench_stats_cpu_s(py);
	bench_stats_bpf_progs(a.pid, &ph->bpf_ns, &ph->bpf_cnt);
	if (workload_wait_cpu(c, 30 * b->secs + 60, &wc) ||
	    workload_wait_cpu(py, 30 * b->secs + 60, &wpy))
		goto out;
	ph->tool_cpu = bench_stats_cpu_s(a.pid) - cpu0;
	{
		unsigned long long ns, cnt;

		bench_stats_bpf_progs(a.pid, &ns, &cnt);
		ph->bpf_ns = ns - ph->bpf_ns;
		ph->bpf_cnt = cnt - ph->bpf_cnt;
	}
	ph->work_cpu = wc + wpy - work0;
	ph->ok = 1;
out:
	agent_proc_stop(&a);
	snprintf(svc, sizeof(svc), "bench-c-%s", tag);
	ph->share_c = share(dir, svc, "main");
	snprintf(svc, sizeof(svc), "bench-py-%s", tag);
	ph->share_py = share(dir, svc, "Py_BytesMain");
}

/* Shares of perf script's samples (per comm) whose frames include the root function. */
static void perf_shares(const char *path, struct phase *ph)
{
	unsigned long long total[2] = { 0 }, reached[2] = { 0 };
	char line[1024], sym[512];
	int cur = -1, hit = 0;
	FILE *f = fopen(path, "r");

	while (f && fgets(line, sizeof(line), f)) {
		if (line[0] != '\t' && line[0] != ' ' && line[0] != '\n') {
			cur = !strncmp(line, "python3", 7) ? 1 :
			      !strncmp(line, "unwfix", 6)  ? 0 :
							     -1;
			hit = 0;
			if (cur >= 0)
				total[cur]++;
			continue;
		}
		if (cur < 0 || hit || sscanf(line, " %*s %511s", sym) != 1)
			continue;
		if (!strcmp(sym, cur ? "Py_BytesMain" : "main")) {
			reached[cur]++;
			hit = 1;
		}
	}
	if (f)
		fclose(f);
	ph->share_c = total[0] ? 100.0 * reached[0] / total[0] : -1;
	ph->share_py = total[1] ? 100.0 * reached[1] / total[1] : -1;
}

static void run_perf(struct bench *b, struct phase *ph)
{
	char go[700], dir[600], data[700], pids[64], script_out[700];
	const char *rec[] = { PERF,    "record", "-q", "-F", "100", "--call-graph",
			      "dwarf", "-p",	 pids, "-o", data,  NULL };
	const char *scr[] = { PERF, "script", "-i", data, "-F", "comm,pid,ip,sym", NULL };
	double wc = 0, wpy = 0, end;
	pid_t c, py, perf, script;

	if (access(PERF, X_OK)) {
		printf("  (perf not installed: apt-get install linux-perf)\n");
		return;
	}
	snprintf(dir, sizeof(dir), "%s/perf", b->dir);
	mkdir(dir, 0755);
	snprintf(go, sizeof(go), "%s/go", dir);
	snprintf(data, sizeof(data), "%s/perf.data", dir);
	snprintf(script_out, sizeof(script_out), "%s/perf.txt", dir);
	start_workloads(b, "perf", go, &c, &py);
	snprintf(pids, sizeof(pids), "%d,%d", (int)c, (int)py);
	perf = workload_start(rec, NULL, "/dev/null");
	/* perf writes its file header once it is set up. */
	for (end = now_s() + 30; access(data, F_OK) && now_s() < end;)
		usleep(20000);
	bench_stats_write_file(go, "");
	if (workload_wait_cpu(c, 30 * b->secs + 60, &wc) ||
	    workload_wait_cpu(py, 30 * b->secs + 60, &wpy) ||
	    workload_wait_cpu(perf, 120, &ph->tool_cpu))
		return;
	ph->work_cpu = wc + wpy;
	script = workload_start(scr, NULL, script_out);
	if (workload_wait_cpu(script, 600, &ph->post_cpu))
		return;
	perf_shares(script_out, ph);
	ph->ok = 1;
}

/* Table size and build time per MB of executable text. */
static void table_sizes(void)
{
	static const char *const files[] = { "/lib/x86_64-linux-gnu/libc.so.6", PYTHON,
					     "/usr/lib/x86_64-linux-gnu/libruby-3.1.so.3.1" };
	struct cfi_table t;
	size_t i;
	int fd;

	printf("\n  %-46s %9s %8s %10s %12s %9s\n", "file", "text MB", "rows", "rows KB/MB",
	       "chunks KB/MB", "build ms/MB");
	for (i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		double mb;

		fd = open(files[i], O_RDONLY | O_CLOEXEC);
		if (fd < 0 || cfi_table_build_fd(fd, &t, NULL)) {
			printf("  %-46s (not available)\n", files[i]);
			if (fd >= 0)
				close(fd);
			continue;
		}
		close(fd);
		mb = t.stats.text_bytes / 1048576.0;
		printf("  %-46s %9.2f %8zu %10.0f %12.0f %9.1f\n", files[i], mb, t.nrows,
		       t.nrows * sizeof(struct spanprof_unwind_row) / 1024.0 / mb,
		       unwind_store_chunks_needed(&t) * sizeof(struct spanprof_unwind_chunk) /
			       1024.0 / mb,
		       t.stats.build_us / 1000.0 / mb);
		cfi_table_release(&t);
	}
}

static void print_phase(const struct phase *ph)
{
	if (!ph->ok) {
		printf("  %-34s (failed)\n", ph->name);
		return;
	}
	printf("  %-34s %8.1f %% %8.1f %% %9.2f s %9.3f %% %9.2f s", ph->name, ph->share_c,
	       ph->share_py, ph->tool_cpu + ph->post_cpu,
	       100.0 * (ph->tool_cpu + ph->post_cpu) / ph->work_cpu, ph->work_cpu);
	if (ph->bpf_cnt)
		printf("  %6.2f us", ph->bpf_ns / 1000.0 / ph->bpf_cnt);
	printf("\n");
}

int main(void)
{
	const char *secs_env = getenv("BENCH_SECONDS");
	struct phase fp = { .name = "spanprof, frame pointers only" };
	struct phase cfi = { .name = "spanprof, CFI unwinding" };
	struct phase perf = { .name = "perf record --call-graph dwarf" };
	struct bench b = { .secs = secs_env ? atoi(secs_env) : 10 };
	int stats_was;

	if (!agent_proc_can_run() || b.secs < 1 || unwind_fixture_build(&b.uf))
		return 1;
	b.dir = tmpdir_new("bench-unwind");
	if (!b.dir)
		return 1;
	snprintf(b.secs_arg, sizeof(b.secs_arg), "%d", b.secs);
	stats_was = bench_stats_enable();
	run_agent(&b, &fp, "fp", "0");
	run_agent(&b, &cfi, "cfi", "64MiB");
	run_perf(&b, &perf);
	bench_stats_restore(stats_was);

	printf("\n== native unwinding: %d CPU-s per workload and phase, qsort fixture (-O2 "
	       "-fomit-frame-pointer) + python3.11 loop, 100 Hz ==\n",
	       b.secs);
	printf("  %-34s %10s %10s %11s %11s %11s %9s\n", "profiler", "C->main", "py->main",
	       "tool CPU", "/ profiled", "profiled", "BPF/smp");
	print_phase(&fp);
	print_phase(&cfi);
	print_phase(&perf);
	printf("  (tool CPU: the agent's after a %d s warm-up, against the workloads' CPU in the "
	       "same window; perf's record + script for the whole run)\n",
	       WARMUP_S);
	table_sizes();
	tmpdir_remove(b.dir);
	unwind_fixture_release(&b.uf);
	return fp.ok && cfi.ok ? 0 : 1;
}
