/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Drains a sampling window's BPF maps, symbolizes each stack while its process (usually) still
 * lives, and accumulates labelled samples into one pprof builder per service until flushed. */
#ifndef SPANPROF_AGGREGATE_H
#define SPANPROF_AGGREGATE_H

#include <stddef.h>
#include <stdint.h>

#include "config/config_types.h"
#include "discover/proc_table.h"
#include "loader.h"
#include "profile/pprof.h"
#include "symbolize/symcache.h"

struct aggregate_options {
	int64_t period_ns; /* 1e9 / frequency */
	enum span_scope scope;
	size_t max_services; /* services per window; samples beyond are dropped and counted */
	uint32_t max_keys; /* the count map's size (keys drained per window at most) */
};

struct aggregate_stats {
	uint64_t samples; /* samples drained (sum of counts) */
	uint64_t samples_in_spans; /* ... of which carried a span */
	uint64_t keys; /* distinct keys drained */
	uint64_t service_overflow; /* samples dropped: too many services in one window */
	uint64_t encode_errors; /* samples dropped: builder failure (ENOMEM) */
	uint64_t map_errors; /* failed BPF map reads (each logged) */
};

/* sc and procs are not owned. NULL with errno on failure. */
struct aggregate *aggregate_new(const struct aggregate_options *opts, struct symcache *sc,
				struct proc_table *procs);
void aggregate_free(struct aggregate *a); /* NULL-safe */

/* Reads every key of window w, adds its samples, then empties both of w's maps.
 * Returns 0 or -errno (map access failed; what was read is kept). */
int aggregate_drain(struct aggregate *a, struct loader_window w);

/* Called once per service with samples in the window [start_ns, end_ns). The builder belongs to
 * the aggregate and is freed after the call. A non-zero return is remembered and returned by
 * aggregate_flush, but every service is still offered. */
typedef int (*aggregate_profile_fn)(void *ctx, const char *service, int64_t start_ns,
				    struct pprof_builder *b);

/* Hands out the window's profiles and starts a new window at end_ns. */
int aggregate_flush(struct aggregate *a, int64_t end_ns, aggregate_profile_fn fn, void *ctx);

/* Sets the start of the first window. */
void aggregate_start(struct aggregate *a, int64_t start_ns);

void aggregate_get_stats(const struct aggregate *a, struct aggregate_stats *out);

#endif /* SPANPROF_AGGREGATE_H */
