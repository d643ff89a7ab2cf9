/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The span table and span-name figures as the page asks for them: filtered, sorted, a page at a
 * time, written as JSON. */
#ifndef SPANPROF_VIEW_SPAN_QUERY_H
#define SPANPROF_VIEW_SPAN_QUERY_H

#include <stddef.h>
#include <stdio.h>

#include "view/view_store.h"

enum span_sort {
	SPAN_SORT_WALL = 0,
	SPAN_SORT_CPU,
	SPAN_SORT_OFF_CPU,
	SPAN_SORT_START,
	SPAN_SORT_SERVICE,
	SPAN_SORT_NAME,
};

struct span_query {
	const char *service; /* exact service; NULL or "": any */
	const char *name; /* substring of the span name, case-insensitive; NULL or "": any */
	const char *trace; /* prefix of the trace id (hex, any case); NULL or "": any */
	enum span_sort sort;
	int ascending; /* 0: largest (or latest, or last) first */
	size_t offset, limit;
};

/* Parses a sort field name ("wall", "cpu", "off_cpu", "start", "service", "name"). Returns 0 or
 * -EINVAL. */
int span_query_parse_sort(const char *s, enum span_sort *out);

/* {"total":N,"matched":N,"dropped":N,"rows":[{"service":..,"name":..,"trace_id":..,
 * "span_id":..,"start_ns":N,"wall_ns":N,"cpu_ns":N,"off_cpu_ns":N,"pid":N,"tid":N},..]}.
 * Returns 0 or -ENOMEM. */
int span_query_write(const struct view_store *vs, const struct span_query *q, FILE *f);

/* {"rows":[{"service":..,"name":..,"count":N,"wall_p50_ns":N,"wall_p95_ns":N,
 * "wall_ns":N,"cpu_ns":N,"off_cpu_ns":N},..]}, the largest total wall time first. */
void span_query_write_names(const struct view_store *vs, FILE *f);

#endif /* SPANPROF_VIEW_SPAN_QUERY_H */
