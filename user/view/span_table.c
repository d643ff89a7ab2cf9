// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Span records in one growing array (capped); per-name percentiles from one sort. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "view/span_table.h"

int span_table_init(struct span_table *t, size_t max)
{
	memset(t, 0, sizeof(*t));
	t->max = max;
	t->strs = str_pool_new();
	return t->strs ? 0 : -ENOMEM;
}

void span_table_release(struct span_table *t)
{
	str_pool_free(t->strs);
	free(t->spans);
	free(t->names);
	memset(t, 0, sizeof(*t));
}

int span_table_add(struct span_table *t, const struct view_span *s)
{
	size_t cap;
	void *p;

	if (t->n >= t->max) {
		t->dropped++;
		return -ENOBUFS;
	}
	if (t->n == t->cap) {
		cap = t->cap ? t->cap * 2 : 1024;
		if (cap > t->max)
			cap = t->max;
		p = realloc(t->spans, cap * sizeof(*t->spans));
		if (!p)
			return -ENOMEM;
		t->spans = p;
		t->cap = cap;
	}
	t->spans[t->n++] = *s;
	return 0;
}

/* Spans in (service, name, wall) order. */
static int cmp_by_name(const void *a, const void *b, void *arg)
{
	const struct view_span *spans = arg;
	const struct view_span *x = &spans[*(const uint32_t *)a], *y = &spans[*(const uint32_t *)b];

	if (x->service != y->service)
		return x->service < y->service ? -1 : 1;
	if (x->name != y->name)
		return x->name < y->name ? -1 : 1;
	return x->wall_ns < y->wall_ns ? -1 : x->wall_ns > y->wall_ns;
}

/* The figures of the spans order[from .. to), all of one name, sorted by wall time. */
static void fill_stat(struct view_name_stat *st, const struct view_span *spans,
		      const uint32_t *order, size_t from, size_t to)
{
	size_t i, n = to - from;
	const struct view_span *s;

	s = &spans[order[from]];
	*st = (struct view_name_stat){ .service = s->service, .name = s->name, .stem = s->stem };
	st->count = n;
	/* Nearest rank: the smallest wall time at or above the share of spans. */
	st->wall_p50 = spans[order[from + (n * 50 + 99) / 100 - 1]].wall_ns;
	st->wall_p95 = spans[order[from + (n * 95 + 99) / 100 - 1]].wall_ns;
	for (i = from; i < to; i++) {
		s = &spans[order[i]];
		st->wall_sum += s->wall_ns;
		st->cpu_sum += s->cpu_ns;
		st->off_cpu_sum += s->off_cpu_ns;
	}
}

static int same_name(const struct view_span *a, const struct view_span *b)
{
	return a->service == b->service && a->name == b->name;
}

int span_table_finish(struct span_table *t)
{
	size_t i, from, groups = 0;
	uint32_t *order;

	free(t->names);
	t->names = NULL;
	t->nnames = 0;
	if (!t->n)
		return 0;
	order = malloc(t->n * sizeof(*order));
	if (!order)
		return -ENOMEM;
	for (i = 0; i < t->n; i++)
		order[i] = (uint32_t)i;
	qsort_r(order, t->n, sizeof(*order), cmp_by_name, t->spans);
	for (i = 0; i < t->n; i++)
		groups += !i || !same_name(&t->spans[order[i - 1]], &t->spans[order[i]]);
	t->names = calloc(groups, sizeof(*t->names));
	if (!t->names) {
		free(order);
		return -ENOMEM;
	}
	for (from = 0, i = 1; i <= t->n; i++) {
		if (i < t->n && same_name(&t->spans[order[from]], &t->spans[order[i]]))
			continue;
		fill_stat(&t->names[t->nnames++], t->spans, order, from, i);
		from = i;
	}
	free(order);
	return 0;
}

size_t span_table_bytes(const struct span_table *t)
{
	return sizeof(*t) + (t->strs ? str_pool_bytes(t->strs) : 0) + t->cap * sizeof(*t->spans) +
	       t->nnames * sizeof(*t->names);
}
