// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Span table queries: string filters decided once per distinct string, then one pass and a sort
 * of the matches. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "view/json_out.h"
#include "view/span_query.h"

static const char *const sort_names[] = {
	[SPAN_SORT_WALL] = "wall",	 [SPAN_SORT_CPU] = "cpu",
	[SPAN_SORT_OFF_CPU] = "off_cpu", [SPAN_SORT_START] = "start",
	[SPAN_SORT_SERVICE] = "service", [SPAN_SORT_NAME] = "name",
};

int span_query_parse_sort(const char *s, enum span_sort *out)
{
	size_t i;

	for (i = 0; i < sizeof(sort_names) / sizeof(sort_names[0]); i++)
		if (s && !strcmp(s, sort_names[i])) {
			*out = (enum span_sort)i;
			return 0;
		}
	return -EINVAL;
}

struct sort_ctx {
	const struct span_table *t;
	enum span_sort sort;
	int ascending;
};

static uint64_t sort_key(const struct view_span *s, enum span_sort sort)
{
	switch (sort) {
	case SPAN_SORT_CPU:
		return s->cpu_ns;
	case SPAN_SORT_OFF_CPU:
		return s->off_cpu_ns;
	case SPAN_SORT_START:
		return s->start_ns;
	default:
		return s->wall_ns;
	}
}

static int cmp_spans(const void *a, const void *b, void *arg)
{
	const struct sort_ctx *c = arg;
	const struct view_span *x = &c->t->spans[*(const uint32_t *)a];
	const struct view_span *y = &c->t->spans[*(const uint32_t *)b];
	uint64_t kx, ky;
	int r;

	if (c->sort == SPAN_SORT_SERVICE || c->sort == SPAN_SORT_NAME) {
		r = strcmp(
			str_pool_get(c->t->strs, c->sort == SPAN_SORT_NAME ? x->name : x->service),
			str_pool_get(c->t->strs, c->sort == SPAN_SORT_NAME ? y->name : y->service));
		if (!r) /* then the slowest first */
			r = x->wall_ns < y->wall_ns ? 1 : x->wall_ns > y->wall_ns ? -1 : 0;
		else if (!c->ascending)
			r = -r;
		return r;
	}
	kx = sort_key(x, c->sort);
	ky = sort_key(y, c->sort);
	r = kx < ky ? -1 : kx > ky;
	if (!r) /* ties in the order the records were read, whichever the direction */
		return x < y ? -1 : x > y;
	return c->ascending ? r : -r;
}

/* Per string id: 1 when the string passes the service and name filters. */
static uint8_t *string_filter(const struct span_table *t, const struct span_query *q)
{
	size_t i, n = str_pool_count(t->strs);
	uint8_t *ok = malloc(n + 1);
	const char *s;

	if (!ok)
		return NULL;
	for (i = 0; i < n; i++) {
		s = str_pool_get(t->strs, (uint32_t)i);
		ok[i] = (!q->service || !*q->service || !strcmp(s, q->service) ? 1 : 0) |
			(!q->name || !*q->name || strcasestr(s, q->name) ? 2 : 0);
	}
	return ok;
}

static int trace_matches(const struct view_span *s, const char *prefix)
{
	static const char digits[] = "0123456789abcdef";
	size_t i;
	int c;

	for (i = 0; prefix[i] && i < 32; i++) {
		c = prefix[i] >= 'A' && prefix[i] <= 'F' ? prefix[i] - 'A' + 'a' : prefix[i];
		if (digits[(s->trace_id[i / 2] >> (i % 2 ? 0 : 4)) & 15] != c)
			return 0;
	}
	return !prefix[i];
}

static void write_row(const struct span_table *t, const struct view_span *s, FILE *f)
{
	uint8_t sid[8];
	int i;

	for (i = 0; i < 8; i++)
		sid[i] = (uint8_t)(s->span_id >> (56 - 8 * i));
	fputs("{\"service\":", f);
	json_out_str(f, str_pool_get(t->strs, s->service));
	fputs(",\"name\":", f);
	json_out_str(f, str_pool_get(t->strs, s->name));
	fputs(",\"trace_id\":", f);
	json_out_hex(f, s->trace_id, 16);
	fputs(",\"span_id\":", f);
	json_out_hex(f, sid, 8);
	fprintf(f,
		",\"start_ns\":%llu,\"wall_ns\":%llu,\"cpu_ns\":%llu,\"off_cpu_ns\":%llu,"
		"\"pid\":%u,\"tid\":%u}",
		(unsigned long long)s->start_ns, (unsigned long long)s->wall_ns,
		(unsigned long long)s->cpu_ns, (unsigned long long)s->off_cpu_ns, s->pid, s->tid);
}

/* A heap of the k best matches so far, the worst of them on top: one pass over a million
 * spans keeps a page of them in O(n log k), where sorting all matches took 0.4 s. */
struct top_k {
	uint32_t *v;
	size_t n, k;
	struct sort_ctx *ctx;
};

/* 1 when span a sorts after span b (is worse for the page). */
static int worse(const struct top_k *h, uint32_t a, uint32_t b)
{
	return cmp_spans(&a, &b, h->ctx) > 0;
}

static void sift_down(struct top_k *h, size_t i)
{
	size_t c;
	uint32_t tmp;

	for (; (c = 2 * i + 1) < h->n; i = c) {
		if (c + 1 < h->n && worse(h, h->v[c + 1], h->v[c]))
			c++;
		if (!worse(h, h->v[c], h->v[i]))
			return;
		tmp = h->v[c], h->v[c] = h->v[i], h->v[i] = tmp;
	}
}

static void top_k_add(struct top_k *h, uint32_t idx)
{
	size_t i, p;
	uint32_t tmp;

	if (h->n < h->k) {
		h->v[h->n] = idx;
		for (i = h->n++; i && worse(h, h->v[i], h->v[p = (i - 1) / 2]); i = p)
			tmp = h->v[p], h->v[p] = h->v[i], h->v[i] = tmp;
	} else if (h->k && worse(h, h->v[0], idx)) {
		h->v[0] = idx;
		sift_down(h, 0);
	}
}

static int span_matches(const struct view_span *s, const uint8_t *ok, const struct span_query *q)
{
	return (ok[s->service] & 1) && (ok[s->name] & 2) &&
	       (!q->trace || !*q->trace || trace_matches(s, q->trace));
}

int span_query_write(const struct view_store *vs, const struct span_query *q, FILE *f)
{
	const struct span_table *t = &vs->spans;
	struct sort_ctx ctx = { t, q->sort, q->ascending };
	struct top_k h = { .ctx = &ctx };
	uint8_t *ok = string_filter(t, q);
	size_t i, matched = 0;

	h.k = q->offset + q->limit < t->n ? q->offset + q->limit : t->n;
	h.v = malloc((h.k + 1) * sizeof(*h.v));
	if (!h.v || !ok) {
		free(h.v);
		free(ok);
		return -ENOMEM;
	}
	for (i = 0; i < t->n; i++)
		if (span_matches(&t->spans[i], ok, q)) {
			matched++;
			top_k_add(&h, (uint32_t)i);
		}
	qsort_r(h.v, h.n, sizeof(*h.v), cmp_spans, &ctx);
	fprintf(f, "{\"total\":%zu,\"matched\":%zu,\"dropped\":%llu,\"rows\":[", t->n, matched,
		(unsigned long long)t->dropped);
	for (i = q->offset; i < h.n; i++) {
		if (i > q->offset)
			putc(',', f);
		write_row(t, &t->spans[h.v[i]], f);
	}
	fputs("]}", f);
	free(h.v);
	free(ok);
	return 0;
}

static int cmp_names(const void *a, const void *b)
{
	const struct view_name_stat *x = a, *y = b;

	return x->wall_sum < y->wall_sum ? 1 : x->wall_sum > y->wall_sum ? -1 : 0;
}

void span_query_write_names(const struct view_store *vs, FILE *f)
{
	const struct span_table *t = &vs->spans;
	struct view_name_stat *v = malloc((t->nnames + 1) * sizeof(*v));
	size_t i;

	fputs("{\"rows\":[", f);
	if (v) {
		memcpy(v, t->names, t->nnames * sizeof(*v));
		qsort(v, t->nnames, sizeof(*v), cmp_names);
	}
	for (i = 0; v && i < t->nnames; i++) {
		fputs(i ? ",{\"service\":" : "{\"service\":", f);
		json_out_str(f, str_pool_get(t->strs, v[i].service));
		fputs(",\"name\":", f);
		json_out_str(f, str_pool_get(t->strs, v[i].name));
		fprintf(f,
			",\"count\":%llu,\"wall_p50_ns\":%llu,\"wall_p95_ns\":%llu,"
			"\"wall_ns\":%llu,\"cpu_ns\":%llu,\"off_cpu_ns\":%llu}",
			(unsigned long long)v[i].count, (unsigned long long)v[i].wall_p50,
			(unsigned long long)v[i].wall_p95, (unsigned long long)v[i].wall_sum,
			(unsigned long long)v[i].cpu_sum, (unsigned long long)v[i].off_cpu_sum);
	}
	fputs("]}", f);
	free(v);
}
