// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Picks the profile files a span or span name needs (its service; the windows around the span's
 * time when it is known), and merges their matching samples. */
#include <errno.h>
#include <string.h>

#include "view/flame_tree.h"
#include "view/profile_query.h"

/* What to read and what to keep. */
struct target {
	uint32_t stem; /* in the span table's strings */
	int64_t from_ns, to_ns; /* window starts to read; from 0 to INT64_MAX: all */
	uint64_t span_id;
	const char *name; /* span_name label, by name */
	uint64_t records;
};

/* The span's records: its service's file stem and the time they cover. */
static int find_span(const struct view_store *vs, uint64_t span_id, struct target *tg)
{
	const struct span_table *t = &vs->spans;
	int64_t start, end, lo = INT64_MAX, hi = 0;
	int unknown = 0;
	size_t i;

	for (i = 0; i < t->n; i++) {
		const struct view_span *s = &t->spans[i];

		if (s->span_id != span_id)
			continue;
		if (!tg->records++)
			tg->stem = s->stem;
		start = (int64_t)s->start_ns;
		end = start + (int64_t)s->wall_ns;
		unknown |= !s->start_ns;
		lo = start < lo ? start : lo;
		hi = end > hi ? end : hi;
	}
	if (!tg->records)
		return -ENOENT;
	tg->span_id = span_id;
	tg->from_ns = unknown ? 0 : lo - PROFILE_QUERY_SLACK_NS;
	tg->to_ns = unknown ? INT64_MAX : hi + PROFILE_QUERY_SLACK_NS;
	return 0;
}

static int find_name(const struct view_store *vs, const char *service, const char *name,
		     struct target *tg)
{
	const struct span_table *t = &vs->spans;
	size_t i;

	for (i = 0; i < t->nnames; i++)
		if (!strcmp(str_pool_get(t->strs, t->names[i].service), service ? service : "") &&
		    !strcmp(str_pool_get(t->strs, t->names[i].name), name)) {
			tg->stem = t->names[i].stem;
			tg->records = t->names[i].count;
			tg->name = name;
			tg->from_ns = 0;
			tg->to_ns = INT64_MAX;
			return 0;
		}
	return -ENOENT;
}

static int keep(const struct view_profile *p, const struct view_sample *s, const struct target *tg)
{
	if (tg->span_id)
		return s->span_id == tg->span_id;
	return s->span_name != VIEW_NO_STR && !strcmp(view_profile_str(p, s->span_name), tg->name);
}

/* Merges the kind's files of the target's window into ft; the newest max_files at most.
 * Returns files read (>= 0) or -ENOMEM. */
static long merge_kind(struct view_store *vs, const struct target *tg, enum view_kind kind,
		       struct flame_tree *ft, size_t *listed)
{
	const char *stem = str_pool_get(vs->spans.strs, tg->stem);
	const struct view_profile *p;
	size_t n, i, j, from, to;
	long first, read = 0;
	int err;

	first = data_dir_find(&vs->dd, stem, kind, &n);
	if (first < 0)
		return 0;
	*listed += n;
	/* Files [from, to): a window starts before the span ends and the next one after it
	 * began (the profiles are sorted by start). */
	for (from = 0; from + 1 < n && vs->dd.profiles[first + from + 1].start_ns <= tg->from_ns;
	     from++)
		;
	for (to = from; to < n && vs->dd.profiles[first + to].start_ns <= tg->to_ns; to++)
		;
	if (to - from > vs->limits.max_name_files)
		from = to - vs->limits.max_name_files;
	for (i = from; i < to; i++) {
		p = profile_cache_get(vs->cache, vs->dir, &vs->dd, first + i, &vs->problems);
		if (!p)
			continue;
		read++;
		for (j = 0; j < p->nsamples; j++) {
			if (!keep(p, &p->samples[j], tg))
				continue;
			err = flame_tree_add(ft, p, &p->samples[j]);
			if (err)
				return err;
		}
	}
	return read;
}

int profile_query_write(struct view_store *vs, const struct profile_query *q, FILE *f)
{
	struct target tg = { 0 };
	struct flame_tree *ft;
	long cpu, off;
	size_t listed = 0;
	int err;

	err = q->span_id ? find_span(vs, q->span_id, &tg) :
	      q->name	 ? find_name(vs, q->service, q->name, &tg) :
			   -ENOENT;
	if (err)
		return err;
	ft = flame_tree_new(vs->limits.max_nodes);
	if (!ft)
		return -ENOMEM;
	cpu = merge_kind(vs, &tg, VIEW_KIND_CPU, ft, &listed);
	off = cpu < 0 ? cpu : merge_kind(vs, &tg, VIEW_KIND_OFF_CPU, ft, &listed);
	if (cpu < 0 || off < 0) {
		flame_tree_free(ft);
		return -ENOMEM;
	}
	fprintf(f, "{\"files\":%ld,\"files_listed\":%zu,\"span_records\":%llu,\"tree\":", cpu + off,
		listed, (unsigned long long)tg.records);
	flame_tree_write_json(ft, f);
	fputs("}", f);
	flame_tree_free(ft);
	return 0;
}
