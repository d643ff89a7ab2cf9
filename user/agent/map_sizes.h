/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Bounds of the BPF maps whose demand follows the sample rate: what one sampling window can hold,
 * computed at start from the CPU count, the frequency and the drain period, unless an option
 * gives the size. */
#ifndef SPANPROF_MAP_SIZES_H
#define SPANPROF_MAP_SIZES_H

#include <stdint.h>

/* Bounds of the computed sizes (an option may go beyond them, up to MAP_SIZES_MAX). */
#define MAP_SIZES_MIN_COUNTS 1024u
#define MAP_SIZES_AUTO_MAX_COUNTS 32768u
#define MAP_SIZES_MIN_STACKS 2048u
#define MAP_SIZES_AUTO_MAX_STACKS 65536u
#define MAP_SIZES_MAX (1u << 20)
/* Headroom over one drain period's samples: a drain can run several periods late on a loaded
 * node (symbol loads, a rescan), and cpu-clock events overshoot their nominal rate under load.
 * Measured on a 2-CPU VM at load 14: with 4x, 10% of the samples found the count map full. */
#define MAP_SIZES_HEADROOM 16u

struct map_demand {
	unsigned int ncpus; /* CPUs sampled */
	unsigned int frequency; /* samples per second per CPU */
	unsigned int drain_ms; /* how often a window is closed and read */
	uint32_t sample_entries; /* --sample-map-entries; 0: from the rate */
	uint32_t stack_entries; /* --stack-map-entries; 0: from the rate */
};

struct map_sizes {
	/* sample_counts and interp_stacks of each window: a sample adds at most one key to each. */
	uint32_t counts;
	/* stacks of each window: a sample adds at most two (its kernel and its user stack). */
	uint32_t stacks;
};

/* Samples one drain period brings: CPUs x frequency x period. */
uint64_t map_sizes_period_samples(const struct map_demand *d);

/* The sizes for d: counts is MAP_SIZES_HEADROOM periods' samples rounded up to a power of two,
 * between MAP_SIZES_MIN_COUNTS and MAP_SIZES_AUTO_MAX_COUNTS; stacks twice that (two stacks per
 * sample), within MAP_SIZES_MIN_STACKS and MAP_SIZES_AUTO_MAX_STACKS. None of these maps is
 * preallocated: a size is a bound (and 16 bytes of hash bucket per entry), not what the kernel
 * holds. A full map or a lost stack is counted. Sizes given in d are kept. */
struct map_sizes map_sizes_compute(const struct map_demand *d);

#endif /* SPANPROF_MAP_SIZES_H */
