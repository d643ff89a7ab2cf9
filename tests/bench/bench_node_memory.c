// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Benchmark: what the agent holds on a whole node, as a container's memory limit sees it. The
 * agent runs with its default options (only --output set), system-wide, beside a two-thread C
 * workload (tests/workloads/stack_diverse) and a Python loop (Debian's python3.11), for
 * BENCH_SECONDS (default 60). Printed per agent: peak RSS (VmHWM), steady RSS (the median of
 * VmRSS over the second half of the run), its anonymous and file-backed parts at the end, the
 * BPF map memory (memlock of the map descriptors it holds, highest seen), and the total a cgroup
 * is charged at worst: peak RSS plus the highest map memory.
 *
 * Then the agent of this build runs once more the same way with /metrics served (--metrics-addr,
 * as the Helm chart runs it; BENCH_PARTS=0 leaves this run out): besides its peak RSS and maps,
 * it prints every spanprof_memory_bytes{part} at the second its total was highest, beside what
 * the kernel said of the agent in that second (VmRSS, the memlock of its map fds), so that the
 * parts can be checked against it.
 *
 * BENCH_BEFORE_AGENT=PATH names an older agent binary: both agents then run one after the
 * other, BENCH_ROUNDS times each (default 1), alternating, beside the same workloads, and the
 * table gives both and their ratio. BENCH_IDLE=N adds N idle processes (each waits in pause())
 * before the first agent starts. On a machine shared with other work, the agent also reads the
 * symbols and unwind tables of what the others run: compare the two columns of one run. */
#define _GNU_SOURCE
#include <inttypes.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "agent_proc.h"
#include "bench_stats.h"
#include "metrics_scrape.h"
#include "proc_memory.h"
#include "tmpdir.h"

#define PYTHON "/usr/bin/python3.11"
#define MAX_IDLE 4096
#define MAX_SECS 3600
#define MAX_ROUNDS 8
#define MAX_PARTS 32
#define MIB 1048576.0
#define PART_PREFIX "spanprof_memory_bytes{part=\""

/* Three Python functions calling each other in a loop. */
static const char python_loop[] = "def leaf(n):\n"
				  "    s = 0\n"
				  "    for i in range(n):\n"
				  "        s += i * i\n"
				  "    return s\n"
				  "def mid(n):\n"
				  "    return leaf(n) + leaf(n // 2)\n"
				  "while True:\n"
				  "    mid(20000)\n";

struct run {
	double peak_rss, steady_rss, anon, file, maps, total, cpu_s;
	int ok;
};

/* spanprof_memory_bytes by part, one scrape, and the kernel's view of the agent in that second. */
struct parts {
	char name[MAX_PARTS][32];
	double value[MAX_PARTS];
	int n, at_s;
	double vm_rss, fd_maps, anon, file;
	/* Over every scrape of the run: how many, and in how many rss and the bpf_* parts were
	 * within 10% of the kernel's figures read just before. */
	int scrapes, rss_agree, maps_agree;
};

static void add_part(void *ctx, const char *rest, double value)
{
	struct parts *p = ctx;
	size_t len = strcspn(rest, "\"");

	if (p->n == MAX_PARTS || len >= sizeof(p->name[0]))
		return;
	memcpy(p->name[p->n], rest, len);
	p->name[p->n][len] = '\0';
	p->value[p->n++] = value;
}

/* The part called name, or -1 when the scrape had none. */
static double part(const struct parts *p, const char *name)
{
	int i;

	for (i = 0; i < p->n; i++)
		if (!strcmp(p->name[i], name))
			return p->value[i];
	return -1;
}

/* The bpf_* parts together. */
static double bpf_sum(const struct parts *p)
{
	double sum = 0;
	int i;

	for (i = 0; i < p->n; i++)
		if (!strncmp(p->name[i], "bpf_", 4))
			sum += p->value[i];
	return sum;
}

/* Within 10% of the kernel's figure, as test_agent_memory checks. */
static int within10(double got, double want)
{
	return want > 0 && got >= want * 0.9 && got <= want * 1.1;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* RssAnon and RssFile (plus RssShmem: the ring buffers' pages the agent maps) of
 * /proc/PID/status, in bytes. */
static void rss_parts(pid_t pid, double *anon, double *file)
{
	char path[64], line[256];
	long kb;
	FILE *f;

	*anon = *file = 0;
	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	f = fopen(path, "r");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "RssAnon: %ld", &kb) == 1)
			*anon = kb * 1024.0;
		else if (sscanf(line, "RssFile: %ld", &kb) == 1 ||
			 sscanf(line, "RssShmem: %ld", &kb) == 1)
			*file += kb * 1024.0;
	}
	fclose(f);
}

/* With best (the run that serves /metrics): scrapes the parts once a second and keeps in best
 * the scrape whose total is the highest, with what the kernel said in that second. */
static void take_parts(int port, int second, const struct proc_memory *m, pid_t pid,
		       struct parts *best)
{
	struct parts now = { .n = 0 };
	double total;

	if (port <= 0 || metrics_scrape_each(port, PART_PREFIX, add_part, &now) <= 0)
		return;
	best->scrapes++;
	best->rss_agree += within10(part(&now, "rss"), m->rss);
	best->maps_agree += within10(bpf_sum(&now), m->bpf_maps);
	total = part(&now, "total");
	if (best->n && total <= part(best, "total"))
		return;
	now.at_s = second;
	now.vm_rss = m->rss;
	now.fd_maps = m->bpf_maps;
	now.scrapes = best->scrapes;
	now.rss_agree = best->rss_agree;
	now.maps_agree = best->maps_agree;
	rss_parts(pid, &now.anon, &now.file);
	*best = now;
}

/* One agent (binary bin) with default options for secs, read once a second; with parts, also
 * serving /metrics (parts then holds its figures at their highest total). */
static void measure(const char *bin, const char *dir, int secs, struct run *r, struct parts *parts)
{
	const char *argv[] = { "--output", dir, "--metrics-addr", "127.0.0.1:0", NULL };
	static double rss[MAX_SECS];
	struct proc_memory m;
	struct agent_proc agent;
	double cpu0;
	int i, n = 0, port = -1;

	memset(r, 0, sizeof(*r));
	if (!parts)
		argv[2] = NULL;
	else
		memset(parts, 0, sizeof(*parts));
	if (agent_proc_start_bin(&agent, bin, dir, argv))
		return;
	cpu0 = bench_stats_cpu_s(agent.pid);
	for (i = 0; i < secs && !agent_proc_has_exited(&agent); i++) {
		sleep(1);
		if (proc_memory_read(agent.pid, &m))
			break;
		if (m.bpf_maps > r->maps)
			r->maps = m.bpf_maps;
		if (i >= secs / 2)
			rss[n++] = m.rss;
		r->peak_rss = m.peak_rss;
		if (parts && port <= 0)
			port = metrics_scrape_port(agent.log_path);
		if (parts)
			take_parts(port, i + 1, &m, agent.pid, parts);
	}
	r->cpu_s = bench_stats_cpu_s(agent.pid) - cpu0;
	rss_parts(agent.pid, &r->anon, &r->file);
	r->ok = i == secs && n > 0;
	if (agent_proc_stop(&agent))
		r->ok = 0;
	if (!r->ok) {
		printf("  agent %s did not run the %d s (see its log above)\n", bin, secs);
		return;
	}
	qsort(rss, n, sizeof(rss[0]), cmp_double);
	r->steady_rss = rss[n / 2];
	r->total = r->peak_rss + r->maps;
}

static double median_of(const struct run *runs, int n, size_t off)
{
	double v[MAX_ROUNDS];
	int i, k = 0;

	for (i = 0; i < n; i++)
		if (runs[i].ok)
			v[k++] = *(const double *)((const char *)&runs[i] + off);
	if (!k)
		return 0;
	qsort(v, k, sizeof(v[0]), cmp_double);
	return k % 2 ? v[k / 2] : (v[k / 2 - 1] + v[k / 2]) / 2;
}

static void print_row(const char *label, size_t off, const struct run *before,
		      const struct run *after, int rounds, double scale, const char *unit)
{
	double a = median_of(after, rounds, off) / scale;

	if (!before) {
		printf("  %-36s %9.1f %s\n", label, a, unit);
		return;
	}
	double b = median_of(before, rounds, off) / scale;

	printf("  %-36s %9.1f %s %9.1f %s %7.2f\n", label, b, unit, a, unit, b > 0 ? a / b : 0);
}

static const char *agrees(double got, double want)
{
	return within10(got, want) ? "agree" : "DIFFER";
}

/* The run that served /metrics: its totals, then its parts at their highest total with the
 * kernel's figures of that second, and how the parts add up. */
static void print_parts(const struct run *r, const struct parts *p)
{
	static const char *const in_heap[] = { "dwarf", "kernel_symbols", "perf_maps", "symbols",
					       "interpreters" };
	double maps = bpf_sum(p), named = 0, heap = part(p, "heap"), rss = part(p, "rss");
	size_t k;
	int i;

	printf("\n  this build again, /metrics served (--metrics-addr, as the Helm chart runs it):\n");
	if (!r->ok)
		return;
	printf("  %-36s %9.1f MiB\n  %-36s %9.1f MiB\n  %-36s %9.1f MiB\n", "peak RSS (VmHWM)",
	       r->peak_rss / MIB, "BPF maps (memlock, highest)", r->maps / MIB,
	       "total: peak RSS + BPF maps", r->total / MIB);
	if (!p->n || rss < 0 || heap < 0) {
		printf("  (no spanprof_memory_bytes{part} scraped)\n");
		return;
	}
	printf("  spanprof_memory_bytes{part} at its highest total, %d s in:\n", p->at_s);
	for (i = 0; i < p->n; i++)
		printf("    %-34s %9.2f MiB\n", p->name[i], p->value[i] / MIB);
	for (k = 0; k < sizeof(in_heap) / sizeof(in_heap[0]); k++)
		named += part(p, in_heap[k]) > 0 ? part(p, in_heap[k]) : 0;
	/* The parts are the agent's figures at its last drain, up to a second before the kernel's
	 * read: maps that grow in that second (a new file's CFI rows) make the two differ. */
	printf("  the same second, from outside the agent (the parts are of the agent's last "
	       "drain, up to 1 s older):\n");
	printf("    rss %.2f MiB, VmRSS %.2f MiB: %s\n", rss / MIB, p->vm_rss / MIB,
	       agrees(rss, p->vm_rss));
	printf("    bpf_* together %.2f MiB, memlock of its map fds %.2f MiB: %s\n", maps / MIB,
	       p->fd_maps / MIB, agrees(maps, p->fd_maps));
	printf("    total %.2f MiB, rss + bpf_* %.2f MiB\n", part(p, "total") / MIB,
	       (rss + maps) / MIB);
	printf("    rss: heap %.2f MiB (of it dwarf, kernel_symbols, perf_maps, symbols and "
	       "interpreters %.2f, the rest %.2f); rss minus heap %.2f MiB (libraries, stacks, "
	       "rings, less heap pages never written)\n",
	       heap / MIB, named / MIB, (heap - named) / MIB, (rss - heap) / MIB);
	printf("    VmRSS: anonymous %.2f MiB, file-backed and shared %.2f MiB\n", p->anon / MIB,
	       p->file / MIB);
	printf("  over the run's %d scrapes: rss within 10%% of VmRSS in %d, bpf_* within 10%% of "
	       "the map fds' memlock in %d\n",
	       p->scrapes, p->rss_agree, p->maps_agree);
}

static pid_t start_python(void)
{
	pid_t pid;

	if (access(PYTHON, X_OK)) {
		printf("  (no %s: the Python loop is left out)\n", PYTHON);
		return -1;
	}
	pid = fork();
	if (pid == 0) {
		execl(PYTHON, PYTHON, "-c", python_loop, (char *)NULL);
		_exit(127);
	}
	return pid;
}

int main(void)
{
	const char *secs_env = getenv("BENCH_SECONDS"), *before_bin = getenv("BENCH_BEFORE_AGENT");
	const char *rounds_env = getenv("BENCH_ROUNDS"), *idle_env = getenv("BENCH_IDLE");
	const char *parts_env = getenv("BENCH_PARTS");
	int secs = secs_env ? atoi(secs_env) : 60, rounds = rounds_env ? atoi(rounds_env) : 1;
	int nidle = idle_env ? atoi(idle_env) : 0, i, have = 0, bad = 0;
	int serve = !parts_env || strcmp(parts_env, "0");
	char *dir = tmpdir_new("bench-node-memory"), wsecs[16];
	const char *wargv[] = { build_path("tests/workloads/stack_diverse"), "2", wsecs, NULL };
	static pid_t idle[MAX_IDLE];
	struct run before[MAX_ROUNDS], after[MAX_ROUNDS], served;
	static struct parts parts;
	const struct run *b;
	pid_t work, py;

	if (!dir || !agent_proc_can_run() || secs < 4 || secs > MAX_SECS || rounds < 1 ||
	    rounds > MAX_ROUNDS || nidle < 0 || nidle > MAX_IDLE)
		return 1;
	if (before_bin && access(before_bin, X_OK)) {
		printf("BENCH_BEFORE_AGENT=%s: not an executable\n", before_bin);
		return 1;
	}
	printf("\n== agent memory, whole node, default options: stack_diverse (2 threads) and a "
	       "Python loop, %d idle processes, %d s per agent, %d round(s) ==\n",
	       nidle, secs, rounds);
	/* Long enough for every agent's run and its start and stop. */
	snprintf(wsecs, sizeof(wsecs), "%d",
		 (rounds * (before_bin ? 2 : 1) + serve) * (secs + 130));
	work = workload_start(wargv, NULL, "/dev/null");
	py = start_python();
	for (; have < nidle; have++) {
		idle[have] = fork();
		if (idle[have] == 0) {
			for (;;)
				pause();
		}
		if (idle[have] < 0)
			break;
	}
	if (work < 0 || have < nidle) {
		bad = 1;
		goto out;
	}
	for (i = 0; i < rounds; i++) {
		if (before_bin)
			measure(before_bin, dir, secs, &before[i], NULL);
		measure(build_path("spanprof"), dir, secs, &after[i], NULL);
		bad |= !after[i].ok || (before_bin && !before[i].ok);
	}
	b = before_bin ? before : NULL;
	if (b)
		printf("  %-36s %13s %13s %7s\n", "", "before", "after", "ratio");
	print_row("peak RSS (VmHWM)", offsetof(struct run, peak_rss), b, after, rounds, MIB, "MiB");
	print_row("steady RSS (median, 2nd half)", offsetof(struct run, steady_rss), b, after,
		  rounds, MIB, "MiB");
	print_row("  anonymous at the end", offsetof(struct run, anon), b, after, rounds, MIB,
		  "MiB");
	print_row("  file-backed and shared at the end", offsetof(struct run, file), b, after,
		  rounds, MIB, "MiB");
	print_row("BPF maps (memlock, highest)", offsetof(struct run, maps), b, after, rounds, MIB,
		  "MiB");
	print_row("total: peak RSS + BPF maps", offsetof(struct run, total), b, after, rounds, MIB,
		  "MiB");
	print_row("agent CPU over the run", offsetof(struct run, cpu_s), b, after, rounds, 1.0,
		  "s  ");
	printf("  (medians over the rounds; goals: total <= 64 MiB, peak RSS <= 25 MiB)\n");
	if (serve) {
		measure(build_path("spanprof"), dir, secs, &served, &parts);
		print_parts(&served, &parts);
		bad |= !served.ok;
	}
out:
	for (i = 0; i < have; i++)
		kill(idle[i], SIGKILL);
	for (i = 0; i < have; i++)
		waitpid(idle[i], NULL, 0);
	if (py > 0) {
		kill(py, SIGKILL);
		waitpid(py, NULL, 0);
	}
	if (work > 0) {
		kill(work, SIGKILL);
		waitpid(work, NULL, 0);
	}
	tmpdir_remove(dir);
	return bad;
}
