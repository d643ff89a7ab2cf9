// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Benchmark workload: busy threads whose stacks differ from sample to sample. 64 noinline
 * functions call each other along random paths 12 calls deep, then spin briefly, so a profiler
 * meets many distinct stacks (a worst case for stack maps and symbol caches).
 * Usage: stack_diverse THREADS SECONDS (wall time). Prints the CPU seconds it used ("cpu_s=..."). */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>

#define NFUNCS 64
#define DEPTH 12

typedef void (*step_fn)(int depth, uint64_t *rng);
static step_fn funcs[NFUNCS];
static volatile uint64_t sink;
static double stop_at;

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static uint64_t next_rand(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static __attribute__((noinline)) void spin(uint64_t *rng)
{
	uint64_t x = *rng;
	int i;

	for (i = 0; i < 20000; i++)
		x = x * 6364136223846793005ull + 1442695040888963407ull;
	sink = x;
}

/* Each function is its own symbol; the call is not a tail call (-fno-optimize-sibling-calls),
 * so every level stays on the stack. */
#define STEP(n)                                                                  \
	static __attribute__((noinline)) void step_##n(int depth, uint64_t *rng) \
	{                                                                        \
		if (!depth)                                                      \
			spin(rng);                                               \
		else                                                             \
			funcs[next_rand(rng) % NFUNCS](depth - 1, rng);          \
		sink += n;                                                       \
	}
#define STEP8(a) \
	STEP(a##0) STEP(a##1) STEP(a##2) STEP(a##3) STEP(a##4) STEP(a##5) STEP(a##6) STEP(a##7)
STEP8(1)
STEP8(2)
STEP8(3)
STEP8(4)
STEP8(5)
STEP8(6)
STEP8(7)
STEP8(8)
#define REF8(a)                                                                                    \
	step_##a##0, step_##a##1, step_##a##2, step_##a##3, step_##a##4, step_##a##5, step_##a##6, \
		step_##a##7
static const step_fn all_funcs[NFUNCS] = { REF8(1), REF8(2), REF8(3), REF8(4),
					   REF8(5), REF8(6), REF8(7), REF8(8) };

static void *run(void *arg)
{
	uint64_t rng = 0x9e3779b97f4a7c15ull ^ (uintptr_t)arg;

	while (now_s() < stop_at)
		funcs[next_rand(&rng) % NFUNCS](DEPTH - 1, &rng);
	return NULL;
}

int main(int argc, char **argv)
{
	int nthreads = argc > 1 ? atoi(argv[1]) : 2, i;
	double seconds = argc > 2 ? atof(argv[2]) : 10;
	pthread_t tids[64];
	struct rusage ru;

	if (nthreads < 1 || nthreads > 64)
		return 2;
	for (i = 0; i < NFUNCS; i++)
		funcs[i] = all_funcs[i];
	stop_at = now_s() + seconds;
	for (i = 0; i < nthreads; i++)
		if (pthread_create(&tids[i], NULL, run, (void *)(uintptr_t)(i + 1)))
			return 1;
	for (i = 0; i < nthreads; i++)
		pthread_join(tids[i], NULL);
	getrusage(RUSAGE_SELF, &ru);
	printf("cpu_s=%.3f\n", ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + ru.ru_stime.tv_sec +
				       ru.ru_stime.tv_usec / 1e6);
	return 0;
}
