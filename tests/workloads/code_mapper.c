// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Test workload for the agent's rescan requests: maps a page of executable memory and unmaps it
 * again, as a JIT does, every millisecond or so of CPU, so that its process always has a rescan
 * request on the way. Spins in between, so that it is sampled.
 * Usage: code_mapper [SECONDS]: CPU seconds to run (default 30). */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

static volatile unsigned long sink;

static double cpu_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static __attribute__((noinline)) void spin_until(double end)
{
	while (cpu_s() < end)
		for (int i = 0; i < 2000; i++)
			sink += i;
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 30, end = cpu_s() + seconds;
	long page = sysconf(_SC_PAGESIZE);
	unsigned long maps = 0;
	void *p;

	while (cpu_s() < end) {
		p = mmap(NULL, page, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED) {
			perror("mmap");
			return 1;
		}
		munmap(p, page);
		maps++;
		spin_until(cpu_s() + 0.001);
	}
	printf("maps=%lu\n", maps);
	return 0;
}
