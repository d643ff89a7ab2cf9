// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Benchmark: what the off-CPU programs (sched_switch, and sched_exit_tp where full stacks are
 * taken) cost a context-switch-heavy program. Two threads ping-pong one byte over a pair of pipes
 * (every round trip is two blocking reads, so two switches out and two in): both threads in one
 * long span, outside any span, and with a new span every round trip (a span set and cleared
 * around each trip by the first thread: two hook hits and one ended-span record per trip). Each
 * is timed in one run without an agent, with the agent's full off-CPU stacks (the default) and
 * with the frame-pointer capture at switch-out (--off-cpu-unwind=fp), both with the default
 * --off-cpu-min (these waits of microseconds pay the counter only) and with --off-cpu-min=0
 * (every wait's stacks taken: the capture's own cost), with --span-stats-max=0 and with
 * --off-cpu=false. With kernel.bpf_stats_enabled, it also reports the programs' run time per
 * switch and per counted wait, and the agent's CPU time. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "agent_proc.h"
#include "bench_stats.h"
#include "metrics_scrape.h"
#include "spanprof.h"
#include "tmpdir.h"

#define ROUND_TRIPS 20000
#define RUNS 5
#define ROUNDS 3

enum mode { LONG_SPAN = 0, NO_SPAN, SPAN_PER_TRIP, MODES };

static const char *const mode_names[MODES] = { "one long span", "no span", "span per trip" };

struct pingpong {
	int to_b[2], to_a[2];
	enum mode mode;
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void fill_span(struct spanprof_span *s)
{
	memset(s, 0, sizeof(*s));
	s->abi_version = SPANPROF_SPAN_ABI_VERSION;
	memset(s->trace_id, 0x11, sizeof(s->trace_id));
	memset(s->span_id, 0x22, sizeof(s->span_id));
	snprintf(s->name, sizeof(s->name), "pingpong");
}

static void set_span(int in_span)
{
	struct spanprof_span s;

	if (!in_span)
		return;
	fill_span(&s);
	spanprof_span_set(&s);
}

static void *player_b(void *arg)
{
	struct pingpong *p = arg;
	char c;

	set_span(p->mode != NO_SPAN);
	for (int i = 0; i < ROUND_TRIPS; i++)
		if (read(p->to_b[0], &c, 1) != 1 || write(p->to_a[1], &c, 1) != 1)
			break;
	spanprof_span_set(NULL);
	return NULL;
}

/* One round trip of the first thread; with a span per trip, in a span of its own. */
static int trip(struct pingpong *p, struct spanprof_span *s, int i)
{
	char c = 'x';
	int ok;

	if (p->mode == SPAN_PER_TRIP) {
		memcpy(s->span_id, &i, sizeof(i));
		spanprof_span_set(s);
	}
	ok = write(p->to_b[1], &c, 1) == 1 && read(p->to_a[0], &c, 1) == 1;
	if (p->mode == SPAN_PER_TRIP)
		spanprof_span_set(NULL);
	return ok ? 0 : -1;
}

/* Microseconds per round trip of one run. */
static double one_run(enum mode mode)
{
	struct pingpong p = { .mode = mode };
	struct spanprof_span s;
	double start;
	pthread_t b;

	if (pipe(p.to_b) || pipe(p.to_a))
		return -1;
	fill_span(&s);
	pthread_create(&b, NULL, player_b, &p);
	set_span(mode == LONG_SPAN);
	start = now_s();
	for (int i = 0; i < ROUND_TRIPS; i++)
		if (trip(&p, &s, i))
			break;
	start = (now_s() - start) * 1e6 / ROUND_TRIPS;
	spanprof_span_set(NULL);
	pthread_join(b, NULL);
	close(p.to_b[0]), close(p.to_b[1]), close(p.to_a[0]), close(p.to_a[1]);
	return start;
}

/* Best of RUNS (the least disturbed by other load on the machine). */
static double best(enum mode mode)
{
	double b = 1e30, t;

	for (int i = 0; i < RUNS; i++) {
		t = one_run(mode);
		if (t > 0 && t < b)
			b = t;
	}
	return b;
}

struct config {
	const char *label;
	const char *flags[3]; /* NULL-terminated; none: no agent */
};

static const struct config configs[] = {
	{ "no agent", { NULL } },
	{ "full (default)", { "--off-cpu-unwind=full", NULL } },
	{ "fp", { "--off-cpu-unwind=fp", NULL } },
	{ "full, every wait", { "--off-cpu-unwind=full", "--off-cpu-min=0", NULL } },
	{ "fp, every wait", { "--off-cpu-unwind=fp", "--off-cpu-min=0", NULL } },
	{ "--span-stats-max=0", { "--span-stats-max=0", NULL } },
	{ "--off-cpu=false", { "--off-cpu=false", NULL } },
};

#define CONFIGS (sizeof(configs) / sizeof(configs[0]))

/* What one configuration measured over all rounds. */
struct result {
	double us[MODES]; /* best microseconds per round trip */
	unsigned long long switch_ns, switch_runs, exit_ns, exit_runs; /* BPF statistics */
	double waits; /* off-CPU periods counted in the profile */
	double agent_cpu_s;
};

/* Starts the agent for this process with c's flags and waits until it attached the hook and has
 * the process's unwind tables (a wait taken before would be walked by frame pointer). */
static int start_agent(const char *dir, const struct config *c, struct agent_proc *agent)
{
	char pid_arg[16], want[64];
	const char *argv[16] = { "--pid",	pid_arg, "--output",	   dir,
				 "--log-level", "debug", "--metrics-addr", "127.0.0.1:0" };
	size_t n = 8;

	for (const char *const *f = c->flags; *f; f++)
		argv[n++] = *f;
	snprintf(pid_arg, sizeof(pid_arg), "%d", getpid());
	if (agent_proc_start(agent, dir, argv))
		return -1;
	snprintf(want, sizeof(want), "(pid %d,", getpid());
	if (!agent_proc_wait_log(agent, want, 30))
		return -1;
	snprintf(want, sizeof(want), "unwind: pid %d ready", getpid());
	if (!agent_proc_wait_log(agent, want, 30))
		return -1;
	return 0;
}

/* Times every mode under configuration c (no agent when it has no flags), keeping the best of
 * this and earlier rounds, and adds the agent's statistics to r. */
static int measure(const char *dir, const struct config *c, struct result *r)
{
	unsigned long long ns, runs;
	struct agent_proc agent;
	double t, waits = 0;
	int port;

	if (c->flags[0] && start_agent(dir, c, &agent))
		return -1;
	for (int m = 0; m < MODES; m++) {
		t = best(m);
		if (!r->us[m] || t < r->us[m])
			r->us[m] = t;
	}
	if (!c->flags[0])
		return 0;
	bench_stats_bpf_prog(agent.pid, "on_sched_switch", &ns, &runs);
	r->switch_ns += ns;
	r->switch_runs += runs;
	/* The end of __schedule(): on_sched_exit with full stacks, on_sched_exit_unseen (switches
	 * in that sched_switch did not report) with frame-pointer stacks; one of them runs. */
	for (int i = 0; i < 2; i++) {
		bench_stats_bpf_prog(agent.pid, i ? "on_sched_exit_unseen" : "on_sched_exit", &ns,
				     &runs);
		r->exit_ns += ns;
		r->exit_runs += runs;
	}
	port = metrics_scrape_port(agent.log_path);
	if (port > 0 &&
	    !metrics_scrape(port, "spanprof_off_cpu_periods_total{result=\"counted\"}", &waits))
		r->waits += waits;
	r->agent_cpu_s += bench_stats_cpu_s(agent.pid);
	return agent_proc_stop(&agent);
}

static double per(unsigned long long ns, double n)
{
	return n > 0 ? ns / n : 0;
}

static void print_results(const struct result *r)
{
	printf("\n== off-CPU capture cost: pipe ping-pong, 2 blocking switches per round trip "
	       "(best of %d rounds x %d x %d) ==\n",
	       ROUNDS, RUNS, ROUND_TRIPS);
	printf("  us per trip (x no agent)   %-18s %-18s %-18s\n", mode_names[0], mode_names[1],
	       mode_names[2]);
	for (size_t c = 0; c < CONFIGS; c++) {
		printf("  %-24s", configs[c].label);
		for (int m = 0; m < MODES; m++)
			printf("   %7.2f (x%.2f)", r[c].us[m], r[c].us[m] / r[0].us[m]);
		printf("\n");
	}
	printf("\n== BPF run time (kernel.bpf_stats_enabled; every switch of the machine runs "
	       "both programs) ==\n");
	printf("  %-20s %10s %11s %13s %13s %13s %11s\n", "", "ns/switch", "ns/exit_tp",
	       "waits counted", "exit_tp ns", "both ns", "agent CPU s");
	printf("  %-20s %10s %11s %13s %13s %13s\n", "", "", "", "", "/counted wait",
	       "/counted wait");
	for (size_t c = 1; c < CONFIGS; c++)
		printf("  %-20s %10.0f %11.0f %13.0f %13.0f %13.0f %11.2f\n", configs[c].label,
		       per(r[c].switch_ns, r[c].switch_runs), per(r[c].exit_ns, r[c].exit_runs),
		       r[c].waits, per(r[c].exit_ns, r[c].waits),
		       per(r[c].switch_ns + r[c].exit_ns, r[c].waits), r[c].agent_cpu_s);
	printf("  (per counted wait: the programs' whole run time, every switch of the machine "
	       "included, over the waits counted in the profile: an upper bound of one "
	       "capture)\n");
}

int main(void)
{
	static struct result r[CONFIGS];
	char *dir = tmpdir_new("bench-offcpu");
	int stats;

	if (!dir || !agent_proc_can_run())
		return 1;
	stats = bench_stats_enable();
	/* Rounds interleave the configurations so that a burst of other load hits them alike. */
	for (int round = 0; round < ROUNDS; round++)
		for (size_t c = 0; c < CONFIGS; c++)
			if (measure(dir, &configs[c], &r[c])) {
				bench_stats_restore(stats);
				return 1;
			}
	bench_stats_restore(stats);
	tmpdir_remove(dir);
	print_results(r);
	return 0;
}
