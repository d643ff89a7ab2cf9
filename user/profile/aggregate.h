/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Accumulates drained samples, with their symbolized frames and their span and pod labels, into
 * one pprof builder per service until flushed. */
#ifndef SPANPROF_AGGREGATE_H
#define SPANPROF_AGGREGATE_H

#include <stddef.h>
#include <stdint.h>

#include "config/config_types.h"
#include "discover/proc_table.h"
#include "profile/drain.h"
#include "profile/pprof.h"
#include "util/frame.h"

struct aggregate_options {
	int64_t period_ns; /* 1e9 / frequency */
	enum span_scope scope;
	/* Services per window; samples beyond are dropped and counted. A uid other than root takes
	 * a new one only while it holds fewer than are free (service_fair_refused). */
	size_t max_services;
	const char *sample_type; /* NULL: "cpu"; the unit is always nanoseconds */
	/* Record keys whose values a thread context span carries after its name (--thread-ctx-
	 * labels): labelled with the key, '.' written '_'. Not owned. */
	const char *const *tctx_labels;
	size_t ntctx_labels;
};

struct aggregate_stats {
	uint64_t samples; /* samples added (sum of counts) */
	uint64_t samples_in_spans; /* ... of which carried a span */
	uint64_t service_overflow; /* samples dropped: too many services in one window */
	uint64_t service_fair_refused; /* ... of which: their user held its share of the window */
	uint64_t encode_errors; /* samples dropped: builder failure (ENOMEM) */
};

/* procs (service names, pod labels) is not owned. NULL with errno on failure. */
struct aggregate *aggregate_new(const struct aggregate_options *opts, struct proc_table *procs);
void aggregate_free(struct aggregate *a); /* NULL-safe */

/* Adds s->count samples of s's process with these frames (leaf first) to its service's profile,
 * labelled with s's span (by the configured scope) and the process's pod. Failures are counted
 * in the stats (service_overflow, encode_errors). */
void aggregate_add(struct aggregate *a, const struct sample *s, const struct sym_frame *frames,
		   size_t nframes);

/* Called once per service with samples in the window. The builder carries the window: its time
 * (start, Unix ns) and duration were set once when the window closed, the same for every service
 * and profile kind flushed with the same end; outputs read them, never set them. The builder
 * belongs to the aggregate and is freed after the call. A non-zero return is remembered and
 * returned by aggregate_flush, but every service is still offered. */
typedef int (*aggregate_profile_fn)(void *ctx, const char *service, struct pprof_builder *b);

/* Closes the window at end_ns (Unix ns: when the last drained window was flipped), hands out its
 * profiles, and starts the next window at end_ns. */
int aggregate_flush(struct aggregate *a, int64_t end_ns, aggregate_profile_fn fn, void *ctx);

/* Sets the start of the first window. */
void aggregate_start(struct aggregate *a, int64_t start_ns);

void aggregate_get_stats(const struct aggregate *a, struct aggregate_stats *out);

#endif /* SPANPROF_AGGREGATE_H */
