// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Benchmark: what the sched_switch program (off-CPU profiles and span times) costs a
 * context-switch-heavy program. Two threads ping-pong one byte over a pair of pipes (every round
 * trip is two blocking reads, so two switches out and two in): both threads in one long span,
 * outside any span, and with a new span every round trip (a span set and cleared around each
 * trip by the first thread: two hook hits and one ended-span record per trip). Each is timed
 * without an agent, with the agent as it starts by default (off-CPU profiles and span times),
 * with --span-stats-max 0 (off-CPU profiles only) and with --off-cpu=false, in one run. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "agent_proc.h"
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

#define CONFIGS 4

static const char *const config_flags[CONFIGS] = { NULL, "--off-cpu=true", "--span-stats-max=0",
						   "--off-cpu=false" };

/* Times every mode with an agent started with this flag (NULL: no agent), keeping the best of
 * this and earlier rounds in us[mode]. */
static int measure(const char *dir, const char *flag, double *us)
{
	char pid_arg[16];
	const char *argv[] = { "--pid", pid_arg, "--output", dir, flag, NULL };
	struct agent_proc agent;
	double start = now_s(), t;

	if (flag) {
		snprintf(pid_arg, sizeof(pid_arg), "%d", getpid());
		if (agent_proc_start(&agent, dir, argv))
			return -1;
		while (!spanprof_active() && now_s() - start < 20)
			usleep(1000);
	}
	for (int m = 0; m < MODES; m++) {
		t = best(m);
		if (!us[m] || t < us[m])
			us[m] = t;
	}
	return flag ? agent_proc_stop(&agent) : 0;
}

int main(void)
{
	double us[CONFIGS][MODES] = { { 0 } };
	char *dir = tmpdir_new("bench-offcpu");

	if (!dir || !agent_proc_can_run())
		return 1;
	/* Rounds interleave the configurations so that a burst of other load hits them alike. */
	for (int round = 0; round < ROUNDS; round++)
		for (int c = 0; c < CONFIGS; c++)
			if (measure(dir, config_flags[c], us[c]))
				return 1;
	tmpdir_remove(dir);
	printf("\n== sched_switch cost: pipe ping-pong, 2 blocking switches per round trip "
	       "(best of %d rounds x %d x %d) ==\n",
	       ROUNDS, RUNS, ROUND_TRIPS);
	printf("  us per trip (x no agent)  no agent   default (off-CPU  --span-stats-max=0  "
	       "--off-cpu=false\n"
	       "                                       + span times)\n");
	for (int m = 0; m < MODES; m++)
		printf("  %-22s  %9.2f   %7.2f (x%.2f)   %7.2f (x%.2f)     %7.2f (x%.2f)\n",
		       mode_names[m], us[0][m], us[1][m], us[1][m] / us[0][m], us[2][m],
		       us[2][m] / us[0][m], us[3][m], us[3][m] / us[0][m]);
	return 0;
}
