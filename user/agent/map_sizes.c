// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* BPF map sizes from the sample rate (map_sizes.h). */
#include "agent/map_sizes.h"

static uint32_t pow2_clamp(uint64_t n, uint32_t lo, uint32_t hi)
{
	uint32_t p = lo;

	while (p < n && p < hi)
		p <<= 1;
	return p < hi ? p : hi;
}

uint64_t map_sizes_period_samples(const struct map_demand *d)
{
	return (uint64_t)d->ncpus * d->frequency * d->drain_ms / 1000;
}

struct map_sizes map_sizes_compute(const struct map_demand *d)
{
	uint64_t w = map_sizes_period_samples(d) * MAP_SIZES_HEADROOM;
	struct map_sizes s;

	s.counts =
		d->sample_entries ?: pow2_clamp(w, MAP_SIZES_MIN_COUNTS, MAP_SIZES_AUTO_MAX_COUNTS);
	s.stacks = d->stack_entries ?:
			   pow2_clamp(2 * w, MAP_SIZES_MIN_STACKS, MAP_SIZES_AUTO_MAX_STACKS);
	return s;
}
