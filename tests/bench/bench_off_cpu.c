// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Benchmark: what the off-CPU program costs a context-switch-heavy program. Two threads
 * ping-pong one byte over a pair of pipes (every round trip is two blocking reads, so two
 * switches out and two in), once with both threads in a span and once outside any span; each is
 * timed without an agent, with the agent (off-CPU on) and with --off-cpu=false, in one run. */
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

struct pingpong {
	int to_b[2], to_a[2];
	int in_span;
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void set_span(int in_span)
{
	struct spanprof_span s;

	if (!in_span)
		return;
	memset(&s, 0, sizeof(s));
	s.abi_version = SPANPROF_SPAN_ABI_VERSION;
	memset(s.trace_id, 0x11, sizeof(s.trace_id));
	memset(s.span_id, 0x22, sizeof(s.span_id));
	snprintf(s.name, sizeof(s.name), "pingpong");
	spanprof_span_set(&s);
}

static void *player_b(void *arg)
{
	struct pingpong *p = arg;
	char c;

	set_span(p->in_span);
	for (int i = 0; i < ROUND_TRIPS; i++)
		if (read(p->to_b[0], &c, 1) != 1 || write(p->to_a[1], &c, 1) != 1)
			break;
	spanprof_span_set(NULL);
	return NULL;
}

/* Microseconds per round trip of one run. */
static double one_run(int in_span)
{
	struct pingpong p = { .in_span = in_span };
	double start;
	pthread_t b;
	char c = 'x';

	if (pipe(p.to_b) || pipe(p.to_a))
		return -1;
	pthread_create(&b, NULL, player_b, &p);
	set_span(in_span);
	start = now_s();
	for (int i = 0; i < ROUND_TRIPS; i++)
		if (write(p.to_b[1], &c, 1) != 1 || read(p.to_a[0], &c, 1) != 1)
			break;
	start = (now_s() - start) * 1e6 / ROUND_TRIPS;
	spanprof_span_set(NULL);
	pthread_join(b, NULL);
	close(p.to_b[0]), close(p.to_b[1]), close(p.to_a[0]), close(p.to_a[1]);
	return start;
}

/* Best of RUNS (the least disturbed by other load on the machine). */
static double best(int in_span)
{
	double b = 1e30, t;

	for (int i = 0; i < RUNS; i++) {
		t = one_run(in_span);
		if (t > 0 && t < b)
			b = t;
	}
	return b;
}

/* Times both cases with an agent started with these flags (NULL: no agent). */
static int measure(const char *dir, const char *flag, double *span_us, double *plain_us)
{
	char pid_arg[16];
	const char *argv[] = { "--pid", pid_arg, "--output", dir, flag, NULL };
	struct agent_proc agent;
	double start = now_s();

	if (flag) {
		snprintf(pid_arg, sizeof(pid_arg), "%d", getpid());
		if (agent_proc_start(&agent, dir, argv))
			return -1;
		while (!spanprof_active() && now_s() - start < 20)
			usleep(1000);
	}
	*span_us = best(1);
	*plain_us = best(0);
	return flag ? agent_proc_stop(&agent) : 0;
}

int main(void)
{
	double span0, plain0, span1, plain1, span2, plain2;
	char *dir = tmpdir_new("bench-offcpu");

	if (!dir || !agent_proc_can_run())
		return 1;
	if (measure(dir, NULL, &span0, &plain0) ||
	    measure(dir, "--off-cpu=true", &span1, &plain1) ||
	    measure(dir, "--off-cpu=false", &span2, &plain2))
		return 1;
	tmpdir_remove(dir);
	printf("\n== off-CPU cost: pipe ping-pong, 2 blocking switches per round trip "
	       "(best of %d x %d) ==\n",
	       RUNS, ROUND_TRIPS);
	printf("                         no agent   agent, off-CPU on   agent, --off-cpu=false\n");
	printf("  in a span  (us/trip)  %8.2f   %8.2f (x%.2f)     %8.2f (x%.2f)\n", span0, span1,
	       span1 / span0, span2, span2 / span0);
	printf("  no span    (us/trip)  %8.2f   %8.2f (x%.2f)     %8.2f (x%.2f)\n", plain0, plain1,
	       plain1 / plain0, plain2, plain2 / plain0);
	return 0;
}
