// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The time stamp counter's rate against CLOCK_MONOTONIC, from two (counter, clock) points. */
#include <errno.h>
#include <stdint.h>
#include <time.h>
#if defined(__x86_64__)
#include <x86intrin.h>
#endif

#include "util/clock.h"
#include "util/tsc_rate.h"

#define POINT_TRIES 8

int tsc_point_read(struct tsc_point *p)
{
#if defined(__x86_64__)
	uint64_t best = UINT64_MAX;

	for (int i = 0; i < POINT_TRIES; i++) {
		uint64_t t0 = __rdtsc(), ns = clock_mono_ns(), t1 = __rdtsc();

		if (t1 < t0 || t1 - t0 >= best)
			continue;
		best = t1 - t0;
		p->tsc = t0 + (t1 - t0) / 2;
		p->ns = ns;
	}
	return best == UINT64_MAX ? -EAGAIN : 0;
#else
	(void)p;
	return -EOPNOTSUPP;
#endif
}

uint64_t tsc_rate_mult(const struct tsc_point *a, const struct tsc_point *b, unsigned int shift)
{
	unsigned __int128 ns;

	if (b->tsc <= a->tsc || b->ns <= a->ns)
		return 0;
	ns = (unsigned __int128)(b->ns - a->ns) << shift;
	return (uint64_t)((ns + (b->tsc - a->tsc) / 2) / (b->tsc - a->tsc));
}

uint64_t tsc_rate_ns(const struct tsc_point *a, uint64_t mult, unsigned int shift, uint64_t tsc)
{
	unsigned __int128 d;

	if (tsc >= a->tsc) {
		d = (unsigned __int128)(tsc - a->tsc) * mult;
		return a->ns + (uint64_t)(d >> shift);
	}
	d = (unsigned __int128)(a->tsc - tsc) * mult;
	return a->ns - (uint64_t)(d >> shift);
}
