/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Exact CPU time per span, summed by (service_name, span_name) for /metrics: a bounded table
 * written by the agent's thread and rendered by the metrics server's. */
#ifndef SPANPROF_SPAN_STATS_H
#define SPANPROF_SPAN_STATS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Name a span's time goes to once the table holds max_pairs named pairs. */
#define SPAN_STATS_OTHER "other"
/* "other" rows (one per service) kept beyond max_pairs; past them, service_name="other" too. */
#define SPAN_STATS_OTHER_SERVICES 64

struct span_stats;

/* A table of at most max_pairs (service, span name) pairs, plus the "other" rows. NULL with
 * errno (EINVAL for max_pairs 0, ENOMEM). */
struct span_stats *span_stats_new(size_t max_pairs);
void span_stats_free(struct span_stats *st); /* NULL-safe */

/* Adds one ended span of service (NULL or "": "unknown_service") named name (NULL: ""). A pair
 * that does not fit goes to (service, "other"), or ("other", "other"), and is counted in
 * span_stats_overflow(). Once half of max_pairs are taken, a service holding max_pairs / 8
 * names already gets no new one (counted in span_stats_fair_share() too). Safe against a
 * concurrent span_stats_render(). */
void span_stats_add(struct span_stats *st, const char *service, const char *name, uint64_t cpu_ns,
		    uint64_t off_cpu_ns);

struct span_stats_row {
	uint64_t cpu_ns, off_cpu_ns, spans;
};

/* The sums of (service, name). Returns 0, or -ENOENT when the table has no such row. */
int span_stats_get(struct span_stats *st, const char *service, const char *name,
		   struct span_stats_row *out);

/* Spans whose new pair was refused by the per-service share. */
uint64_t span_stats_fair_share(struct span_stats *st);

/* Spans whose pair did not fit and went to an "other" row. */
uint64_t span_stats_overflow(struct span_stats *st);

/* Writes spanprof_span_cpu_seconds_total, spanprof_span_off_cpu_seconds_total,
 * spanprof_spans_total (labels service_name, span_name) and
 * spanprof_span_stats_overflow_total in the Prometheus text format. ctx is the struct
 * span_stats (the signature of metrics_render_fn). Returns 0 or -EIO. */
int span_stats_render(void *ctx, FILE *out);

#endif /* SPANPROF_SPAN_STATS_H */
