/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The span records read from the data directory, bounded, with their names interned, and the
 * per-(service, span name) figures the page shows. */
#ifndef SPANPROF_VIEW_SPAN_TABLE_H
#define SPANPROF_VIEW_SPAN_TABLE_H

#include <stddef.h>
#include <stdint.h>

#include "view/str_pool.h"

struct view_span {
	uint64_t start_ns; /* Unix ns; 0: not recorded */
	uint64_t wall_ns, cpu_ns, off_cpu_ns;
	uint64_t span_id; /* 16 hex digits as a number */
	uint8_t trace_id[16];
	uint32_t service, name; /* ids in strs */
	uint32_t stem; /* id in strs: the file stem the agent used for the service's files */
	uint32_t pid, tid;
};

/* One (service, span name): figures over its spans. */
struct view_name_stat {
	uint32_t service, name, stem;
	uint64_t count;
	uint64_t wall_p50, wall_p95; /* ns */
	uint64_t wall_sum, cpu_sum, off_cpu_sum;
};

struct span_table {
	struct str_pool *strs;
	struct view_span *spans;
	size_t n, cap, max; /* max: spans kept at most */
	uint64_t dropped; /* records past max, not kept */
	struct view_name_stat *names; /* after span_table_finish() */
	size_t nnames;
};

/* An empty table holding at most max spans. Returns 0 or -ENOMEM. */
int span_table_init(struct span_table *t, size_t max);
void span_table_release(struct span_table *t);

/* Adds s (its string ids from t->strs). Returns 0, -ENOBUFS when the table is full (counted in
 * dropped), or -ENOMEM. */
int span_table_add(struct span_table *t, const struct view_span *s);

/* Computes the per-name figures; call once all spans are in. Returns 0 or -ENOMEM. */
int span_table_finish(struct span_table *t);

/* Memory held by the table, its strings and figures. */
size_t span_table_bytes(const struct span_table *t);

#endif /* SPANPROF_VIEW_SPAN_TABLE_H */
