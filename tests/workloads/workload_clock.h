/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Test-only: the clocks of the C workloads, CPU burnt by this thread's own clock, and a sleep
 * that keeps its caller on the stack. Header-only: every workload is one source file built on
 * its own. */
#ifndef SPANPROF_TEST_WORKLOAD_CLOCK_H
#define SPANPROF_TEST_WORKLOAD_CLOCK_H

#include <sys/syscall.h>
#include <time.h>

/* Nanoseconds of clock (CLOCK_MONOTONIC, CLOCK_THREAD_CPUTIME_ID, ...). */
static inline long long clock_ns(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static volatile unsigned long burn_sink;

/* Burns ns of this thread's CPU time (not wall time: a preempted thread burns on when it runs
 * again), checking the clock every few microseconds. A frame of its own under the caller. */
static __attribute__((noinline, unused)) void burn_cpu(long long ns)
{
	long long end = clock_ns(CLOCK_THREAD_CPUTIME_ID) + ns;

	while (clock_ns(CLOCK_THREAD_CPUTIME_ID) < end)
		for (int i = 0; i < 200; i++)
			burn_sink += i;
}

/* Sleeps ns with nanosleep(2) issued in the caller's own code rather than through glibc, whose
 * wrapper keeps no frame pointer: a frame-pointer walk from the sleep would skip the caller. */
static inline __attribute__((always_inline)) void sleep_in_caller(long long ns)
{
	struct timespec ts = { ns / 1000000000LL, ns % 1000000000LL };
	long ret;

	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "0"((long)SYS_nanosleep), "D"(&ts), "S"(NULL)
			 : "rcx", "r11", "memory");
	(void)ret;
}

#endif /* SPANPROF_TEST_WORKLOAD_CLOCK_H */
