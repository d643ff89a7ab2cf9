// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The (service, span name) table behind the span time metrics: open addressing over an array
 * of rows kept in insertion order, one mutex between the agent's thread and the HTTP thread. */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "output/span_stats.h"
#include "util/utf8.h"

struct row {
	char *service, *name;
	uint64_t hash;
	struct span_stats_row sums;
};

/* Named pairs per service, for the fair share: open addressing, keyed by the service's hash and
 * text (a row's copy). */
struct service_count {
	const char *service; /* NULL: empty */
	uint64_t hash;
	size_t named;
};

struct span_stats {
	pthread_mutex_t lock;
	size_t max_pairs, named, nrows, cap_rows; /* rows: named + "other" ones */
	size_t mask; /* slots - 1 (also of counts) */
	uint32_t *slots; /* 0: empty, else index + 1 into rows */
	struct row *rows;
	struct service_count *counts;
	uint64_t overflow, fair_share;
};

static uint64_t pair_hash(const char *service, const char *name)
{
	uint64_t h = 1469598103934665603ull;
	const char *p;

	for (p = service; *p; p++)
		h = (h ^ (unsigned char)*p) * 1099511628211ull;
	h = (h ^ 0xff) * 1099511628211ull; /* a byte no UTF-8 text holds: "a","bc" != "ab","c" */
	for (p = name; *p; p++)
		h = (h ^ (unsigned char)*p) * 1099511628211ull;
	return h;
}

struct span_stats *span_stats_new(size_t max_pairs)
{
	struct span_stats *st;
	size_t slots = 16;

	if (!max_pairs) {
		errno = EINVAL;
		return NULL;
	}
	st = calloc(1, sizeof(*st));
	if (!st)
		return NULL;
	st->max_pairs = max_pairs;
	st->cap_rows = max_pairs + SPAN_STATS_OTHER_SERVICES + 1;
	while (slots < 2 * st->cap_rows)
		slots *= 2;
	st->mask = slots - 1;
	st->slots = calloc(slots, sizeof(*st->slots));
	st->rows = calloc(st->cap_rows, sizeof(*st->rows));
	st->counts = calloc(slots, sizeof(*st->counts));
	if (!st->slots || !st->rows || !st->counts) {
		span_stats_free(st);
		errno = ENOMEM;
		return NULL;
	}
	pthread_mutex_init(&st->lock, NULL);
	return st;
}

void span_stats_free(struct span_stats *st)
{
	size_t i;

	if (!st)
		return;
	for (i = 0; i < st->nrows; i++) {
		free(st->rows[i].service);
		free(st->rows[i].name);
	}
	if (st->slots)
		pthread_mutex_destroy(&st->lock);
	free(st->slots);
	free(st->rows);
	free(st->counts);
	free(st);
}

/* The slot holding (service, name), or the empty slot where it would go. */
static uint32_t *find_slot(struct span_stats *st, const char *service, const char *name,
			   uint64_t hash)
{
	size_t i = hash & st->mask;
	struct row *r;

	for (;; i = (i + 1) & st->mask) {
		if (!st->slots[i])
			return &st->slots[i];
		r = &st->rows[st->slots[i] - 1];
		if (r->hash == hash && !strcmp(r->service, service) && !strcmp(r->name, name))
			return &st->slots[i];
	}
}

/* The row of (service, name), added (*added = 1) when `room` allows; NULL when it does not
 * (or on ENOMEM). */
static struct row *get_row(struct span_stats *st, const char *service, const char *name, int room,
			   int *added)
{
	uint64_t hash = pair_hash(service, name);
	uint32_t *slot = find_slot(st, service, name, hash);
	struct row *r;

	*added = 0;
	if (*slot)
		return &st->rows[*slot - 1];
	if (!room || st->nrows == st->cap_rows)
		return NULL;
	r = &st->rows[st->nrows];
	r->service = strdup(service);
	r->name = strdup(name);
	if (!r->service || !r->name) {
		free(r->service);
		free(r->name);
		r->service = r->name = NULL;
		return NULL;
	}
	r->hash = hash;
	*slot = ++st->nrows;
	*added = 1;
	return r;
}

/* The named-pair count of service (created empty; a service has fewer rows than slots). */
static struct service_count *service_count(struct span_stats *st, const char *service)
{
	uint64_t hash = pair_hash(service, "");
	size_t i = hash & st->mask;
	struct service_count *c;

	for (;; i = (i + 1) & st->mask) {
		c = &st->counts[i];
		if (!c->service || (c->hash == hash && !strcmp(c->service, service)))
			break;
	}
	c->hash = hash;
	return c;
}

/* Fairness: once half the table is named, a service holding an eighth of it already (one
 * service's flood of names) adds no more pairs, so the rest stays for the other services. A
 * table of fewer than FAIR_MIN_PAIRS pairs has no share worth keeping. */
#define FAIR_MIN_PAIRS 16
static int has_room(struct span_stats *st, const struct service_count *c)
{
	if (st->named >= st->max_pairs)
		return 0;
	if (st->max_pairs >= FAIR_MIN_PAIRS && st->named >= st->max_pairs / 2 &&
	    c->named >= st->max_pairs / 8) {
		st->fair_share++;
		return 0;
	}
	return 1;
}

void span_stats_add(struct span_stats *st, const char *service, const char *name, uint64_t cpu_ns,
		    uint64_t off_cpu_ns)
{
	struct service_count *c;
	struct row *r;
	int added;

	if (!st)
		return;
	service = service && *service ? service : "unknown_service";
	name = name ? name : "";
	pthread_mutex_lock(&st->lock);
	c = service_count(st, service);
	r = get_row(st, service, name, c->named < st->max_pairs && has_room(st, c), &added);
	st->named += added;
	c->named += added;
	if (added && !c->service)
		c->service = r->service;
	if (!r) {
		st->overflow++;
		/* The last row is kept for ("other", "other"). */
		r = get_row(st, service, SPAN_STATS_OTHER, st->nrows + 1 < st->cap_rows, &added);
		if (!r)
			r = get_row(st, SPAN_STATS_OTHER, SPAN_STATS_OTHER, 1, &added);
	}
	if (r) {
		r->sums.cpu_ns += cpu_ns;
		r->sums.off_cpu_ns += off_cpu_ns;
		r->sums.spans++;
	}
	pthread_mutex_unlock(&st->lock);
}

int span_stats_get(struct span_stats *st, const char *service, const char *name,
		   struct span_stats_row *out)
{
	uint32_t *slot;
	int err = -ENOENT;

	pthread_mutex_lock(&st->lock);
	slot = find_slot(st, service, name, pair_hash(service, name));
	if (*slot) {
		*out = st->rows[*slot - 1].sums;
		err = 0;
	}
	pthread_mutex_unlock(&st->lock);
	return err;
}

/* A counter of st, read under its lock. */
static uint64_t read_locked(struct span_stats *st, const uint64_t *counter)
{
	uint64_t n;

	pthread_mutex_lock(&st->lock);
	n = *counter;
	pthread_mutex_unlock(&st->lock);
	return n;
}

uint64_t span_stats_fair_share(struct span_stats *st)
{
	return read_locked(st, &st->fair_share);
}

uint64_t span_stats_overflow(struct span_stats *st)
{
	return read_locked(st, &st->overflow);
}

/* A label value in the text format: backslash, double quote and line feed escaped; bytes that
 * are not UTF-8 (the format requires it) become U+FFFD. */
static void put_label(FILE *out, const char *v)
{
	const unsigned char *p = (const unsigned char *)v;
	size_t n;

	while (*p) {
		n = utf8_seq_len(p);
		if (*p == '\\' || *p == '"') {
			fputc('\\', out);
			fputc(*p, out);
		} else if (*p == '\n') {
			fputs("\\n", out);
		} else if (!n) {
			fputs("\xef\xbf\xbd", out);
		} else {
			fwrite(p, 1, n, out);
		}
		p += n ? n : 1;
	}
}

enum column { COL_CPU, COL_OFF_CPU, COL_SPANS };

static const struct {
	const char *name, *help;
} columns[] = {
	[COL_CPU] = { "spanprof_span_cpu_seconds_total",
		      "Exact CPU time of ended spans, by service and span name." },
	[COL_OFF_CPU] = { "spanprof_span_off_cpu_seconds_total",
			  "Time ended spans spent blocked (every wait, however short), by service "
			  "and span name." },
	[COL_SPANS] = { "spanprof_spans_total",
			"Ended spans (span segments: a thread's span id changed or was cleared)." },
};

static void render_column(struct span_stats *st, FILE *out, enum column c)
{
	const struct row *r;
	size_t i;

	fprintf(out, "# HELP %s %s\n# TYPE %s counter\n", columns[c].name, columns[c].help,
		columns[c].name);
	for (i = 0; i < st->nrows; i++) {
		r = &st->rows[i];
		fprintf(out, "%s{service_name=\"", columns[c].name);
		put_label(out, r->service);
		fputs("\",span_name=\"", out);
		put_label(out, r->name);
		if (c == COL_SPANS)
			fprintf(out, "\"} %llu\n", (unsigned long long)r->sums.spans);
		else
			fprintf(out, "\"} %.9f\n",
				(c == COL_CPU ? r->sums.cpu_ns : r->sums.off_cpu_ns) / 1e9);
	}
}

int span_stats_render(void *ctx, FILE *out)
{
	struct span_stats *st = ctx;

	pthread_mutex_lock(&st->lock);
	render_column(st, out, COL_CPU);
	render_column(st, out, COL_OFF_CPU);
	render_column(st, out, COL_SPANS);
	fprintf(out,
		"# HELP spanprof_span_stats_overflow_total Ended spans whose (service, span name) "
		"pair did not fit --span-stats-max and went to span_name=\"other\".\n"
		"# TYPE spanprof_span_stats_overflow_total counter\n"
		"spanprof_span_stats_overflow_total %llu\n",
		(unsigned long long)st->overflow);
	pthread_mutex_unlock(&st->lock);
	return ferror(out) ? -EIO : 0;
}
