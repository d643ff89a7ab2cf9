/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Test-only: when a C workload starts its work. Under tests/helpers/profiled_run
 * (SPANPROF_WORKLOAD_GATE=1) the test writes a "go" line to the workload's stdin once its own
 * agent attached: spanprof_active() cannot tell, as any agent on the machine raises it. Run
 * alone, a workload waits for the hook's semaphore instead, or starts at once.
 * Header-only: every workload is one source file built on its own. */
#ifndef SPANPROF_TEST_WORKLOAD_GATE_H
#define SPANPROF_TEST_WORKLOAD_GATE_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* 1 when the test gates the workload (SPANPROF_WORKLOAD_GATE=1). */
static inline int workload_gated(void)
{
	const char *gate = getenv("SPANPROF_WORKLOAD_GATE");

	return gate && !strcmp(gate, "1");
}

/* Reads the test's "go" line from stdin: 0, or -1 (said on stderr) when stdin ends first or
 * says something else. */
static inline int workload_read_go(void)
{
	char line[16];

	if (!fgets(line, sizeof(line), stdin) || strcmp(line, "go\n")) {
		fprintf(stderr, "no \"go\" on stdin\n");
		return -1;
	}
	return 0;
}

/* Waits for the go-ahead: the "go" line when gated; otherwise until active() (the hook's
 * spanprof_active) says an agent attached, at most limit_s seconds, or not at all when active
 * is NULL. 0, or -1 (said on stderr). */
static inline int workload_wait_agent(int (*active)(void), int limit_s)
{
	struct timespec start, now;

	if (workload_gated())
		return workload_read_go();
	clock_gettime(CLOCK_MONOTONIC, &start);
	while (active && !active()) {
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (now.tv_sec - start.tv_sec >= limit_s) {
			fprintf(stderr, "agent did not attach within %d s\n", limit_s);
			return -1;
		}
		usleep(1000);
	}
	return 0;
}

#endif /* SPANPROF_TEST_WORKLOAD_GATE_H */
