/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Span names by id: the BPF span hook interns each name in the span_names map (id = FNV-1a 64
 * of its bytes) and samples carry only the id; this cache turns ids back into names with one
 * map read per name, not per sample. */
#ifndef SPANPROF_SPAN_NAMES_H
#define SPANPROF_SPAN_NAMES_H

#include <stddef.h>
#include <stdint.h>

struct span_names;

/* A direct-mapped cache of `slots` names (rounded up to a power of two). NULL with errno. */
struct span_names *span_names_new(size_t slots);
void span_names_free(struct span_names *sn); /* NULL-safe */

/* The name of id, from the cache or else the BPF map map_fd (u64 id -> struct span_name; -1:
 * none), valid until the next call; "" for id 0; NULL when the map no longer holds it (evicted
 * before the sample was drained), which is counted. */
const char *span_names_get(struct span_names *sn, int map_fd, uint64_t id);

struct span_names_stats {
	uint64_t map_reads; /* cache misses that read the map */
	uint64_t lost; /* ids the map no longer held */
};

void span_names_get_stats(const struct span_names *sn, struct span_names_stats *out);

#endif /* SPANPROF_SPAN_NAMES_H */
