// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Test workload for the span explorer: two span kinds on one thread. "GET /report" spans burn
 * about 120 ms of CPU in build_report() and then wait in wait_for_disk() (a sleep, longer in each
 * span: the last is the slowest); "GET /health" spans burn about 10 ms in check_health() and do
 * not wait. Each span has its own ids; it prints "span <span_id hex> <name> <wall_ns>" per span
 * (wall time from the hook call that set it to the one that cleared it) and cpu_s= at the end. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "spanprof.h"
#include "workload_clock.h"
#include "workload_gate.h"

#define REPORTS 6
#define HEALTH_PER_REPORT 4

static __attribute__((noinline)) void build_report(void)
{
	burn_cpu(120 * 1000000LL);
}

static __attribute__((noinline)) void check_health(void)
{
	burn_cpu(10 * 1000000LL);
}

static __attribute__((noinline)) void wait_for_disk(long long ns)
{
	sleep_in_caller(ns);
}

static void run_span(unsigned int n, const char *name, int report, int i)
{
	struct spanprof_span s;
	long long t0;

	memset(&s, 0, sizeof(s));
	s.abi_version = SPANPROF_SPAN_ABI_VERSION;
	memset(s.trace_id, 0x3c, sizeof(s.trace_id));
	s.trace_id[15] = (unsigned char)n;
	s.span_id[0] = report ? 0xa0 : 0xb0;
	s.span_id[7] = (unsigned char)n;
	snprintf(s.name, sizeof(s.name), "%s", name);
	t0 = clock_ns(CLOCK_MONOTONIC);
	spanprof_span_set(&s);
	if (report) {
		build_report();
		wait_for_disk((60 + 20 * i) * 1000000LL);
	} else {
		check_health();
	}
	spanprof_span_set(NULL);
	printf("span %02x000000000000%02x %s %lld\n", s.span_id[0], n, name,
	       clock_ns(CLOCK_MONOTONIC) - t0);
}

int main(void)
{
	unsigned int n = 0;

	if (workload_wait_agent(spanprof_active, 20)) {
		fprintf(stderr, "no agent\n");
		return 3;
	}
	for (int i = 0; i < REPORTS; i++) {
		run_span(++n, "GET /report", 1, i);
		for (int j = 0; j < HEALTH_PER_REPORT; j++)
			run_span(++n, "GET /health", 0, 0);
	}
	printf("cpu_s=%.6f\n", clock_ns(CLOCK_PROCESS_CPUTIME_ID) / 1e9);
	fflush(stdout);
	return 0;
}
