// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Clock reads in nanoseconds and absolute deadlines for timed waits. */
#include "util/clock.h"

uint64_t clock_ns(clockid_t clock)
{
	struct timespec ts;

	if (clock_gettime(clock, &ts))
		return 0;
	return (uint64_t)ts.tv_sec * NS_PER_S + (uint64_t)ts.tv_nsec;
}

uint64_t clock_mono_ns(void)
{
	return clock_ns(CLOCK_MONOTONIC);
}

uint64_t clock_real_ns(void)
{
	return clock_ns(CLOCK_REALTIME);
}

struct timespec clock_after_ms(clockid_t clock, unsigned int ms)
{
	struct timespec ts = { 0 };

	clock_gettime(clock, &ts);
	ts.tv_sec += ms / 1000;
	ts.tv_nsec += (long)(ms % 1000) * (long)NS_PER_MS;
	if (ts.tv_nsec >= (long)NS_PER_S) {
		ts.tv_sec++;
		ts.tv_nsec -= (long)NS_PER_S;
	}
	return ts;
}
