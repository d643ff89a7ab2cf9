/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The agent's one way to read a clock: nanoseconds as uint64_t, the unit constants they are
 * scaled with, and the absolute timespec a timed wait needs. */
#ifndef SPANPROF_CLOCK_H
#define SPANPROF_CLOCK_H

#include <stdint.h>
#include <time.h>

/* One type for every unit constant, so that mixing them never changes signedness or width. */
#define NS_PER_US 1000ull
#define NS_PER_MS 1000000ull
#define NS_PER_S 1000000000ull

/* The time of clock (CLOCK_MONOTONIC, CLOCK_REALTIME, CLOCK_THREAD_CPUTIME_ID ...) in ns; 0 if
 * the clock cannot be read, which for these clocks only happens with a bad clock id. */
uint64_t clock_ns(clockid_t clock);

/* CLOCK_MONOTONIC in ns: for intervals, deadlines and ages (what bpf_ktime_get_ns() gives). */
uint64_t clock_mono_ns(void);

/* CLOCK_REALTIME in ns since the Unix epoch: for what is written out (profile and log times). */
uint64_t clock_real_ns(void);

/* The absolute time ms milliseconds from now on clock, as pthread_cond_timedwait() and
 * pthread_timedjoin_np() take it. */
struct timespec clock_after_ms(clockid_t clock, unsigned int ms);

#endif /* SPANPROF_CLOCK_H */
