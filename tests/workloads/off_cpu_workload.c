// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Test workload for off-CPU profiles: one thread in a span burns 5 ms then sleeps 20 ms in
 * sleep_in_span(), repeatedly; another does the same outside any span. It prints the time its
 * span thread spent asleep in sleep_in_span (wall minus thread CPU time), so the test can
 * compare. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "spanprof.h"
#include "workload_clock.h"
#include "workload_gate.h"

/* Returns the thread's off-CPU time inside: wall time minus the thread's CPU time. */
static __attribute__((noinline)) long long sleep_in_span(void)
{
	long long wall0 = clock_ns(CLOCK_MONOTONIC), cpu0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);

	sleep_in_caller(20 * 1000000LL);
	return (clock_ns(CLOCK_MONOTONIC) - wall0) - (clock_ns(CLOCK_THREAD_CPUTIME_ID) - cpu0);
}

static __attribute__((noinline)) void sleep_outside_span(void)
{
	sleep_in_caller(20 * 1000000LL);
}

static int iterations = 80;

/* Adds up the time the span thread spent asleep (off the CPU) in sleep_in_span(). */
static void *in_span(void *arg)
{
	long long *off_ns = arg;
	struct spanprof_span s;

	memset(&s, 0, sizeof(s));
	s.abi_version = SPANPROF_SPAN_ABI_VERSION;
	memset(s.trace_id, 0x7e, sizeof(s.trace_id));
	s.span_id[0] = s.span_id[1] = 0x5a;
	s.span_id[7] = 1;
	snprintf(s.name, sizeof(s.name), "GET /sleepy");
	for (int i = 0; i < iterations; i++) {
		spanprof_span_set(&s);
		burn_cpu(5 * 1000000);
		*off_ns += sleep_in_span();
		spanprof_span_set(NULL);
	}
	return NULL;
}

static void *outside_span(void *arg)
{
	(void)arg;
	for (int i = 0; i < iterations; i++) {
		burn_cpu(5 * 1000000);
		sleep_outside_span();
	}
	return NULL;
}

int main(int argc, char **argv)
{
	long long off_ns = 0;
	pthread_t a, b;

	if (argc > 1)
		iterations = atoi(argv[1]);
	if (workload_wait_agent(spanprof_active, 20))
		return 3;
	pthread_create(&a, NULL, in_span, &off_ns);
	pthread_create(&b, NULL, outside_span, NULL);
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	printf("off_cpu_ns %lld\n", off_ns);
	printf("cpu_s=%.6f\n", clock_ns(CLOCK_PROCESS_CPUTIME_ID) / 1e9);
	fflush(stdout);
	return 0;
}
