/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The time stamp counter's rate against CLOCK_MONOTONIC: what converts the counter readings the
 * hook library stamps its ring of span changes with (x86-64) into the BPF programs' clock. */
#ifndef SPANPROF_TSC_RATE_H
#define SPANPROF_TSC_RATE_H

#include <stdint.h>

/* A counter reading and the CLOCK_MONOTONIC time (ns) read beside it. */
struct tsc_point {
	uint64_t tsc, ns;
};

/* Reads a point: the counter read before and after the clock, best of a few tries, the
 * midpoint kept, so the pair is off by at most half the narrowest bracket (tens of ns).
 * Returns 0, or -EOPNOTSUPP where there is no counter to read (not x86-64). */
int tsc_point_read(struct tsc_point *p);

/* The rate from a to b, later by at least a few ms: ns per tick << shift, rounded; 0 when the
 * points cannot give one (no ticks or no time between them, or b before a). */
uint64_t tsc_rate_mult(const struct tsc_point *a, const struct tsc_point *b, unsigned int shift);

/* now's CLOCK_MONOTONIC time by the rate mult (<< shift) from point a: the inverse of what the
 * BPF side computes, for tests. */
uint64_t tsc_rate_ns(const struct tsc_point *a, uint64_t mult, unsigned int shift, uint64_t tsc);

#endif /* SPANPROF_TSC_RATE_H */
