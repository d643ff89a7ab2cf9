// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* pprof -> struct view_profile: unpacked with protobuf-c, every reference checked, and only the
 * samples of spans kept, in flat arrays. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/profile.pb-c.h"
#include "util/series_labels.h"
#include "view/file_read.h"
#include "view/view_profile.h"

typedef Perftools__Profiles__Profile pb_profile;

/* id -> index, for locations and functions (ids need not be dense). */
struct id_index {
	uint64_t id;
	uint32_t idx;
};

struct decode {
	const pb_profile *pb;
	struct view_profile *p;
	uint32_t *str_off; /* string table index -> offset in p->strs */
	struct id_index *locs, *funcs;
	char *why;
	size_t why_size;
};

static int fail(struct decode *d, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(d->why, d->why_size, fmt, ap);
	va_end(ap);
	return err;
}

static int cmp_id(const void *a, const void *b)
{
	const struct id_index *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id;
}

static long find_id(const struct id_index *v, size_t n, uint64_t id)
{
	struct id_index key = { id, 0 };
	const struct id_index *hit = bsearch(&key, v, n, sizeof(*v), cmp_id);

	return hit ? (long)hit->idx : -1;
}

static const char *pb_str(const pb_profile *pb, int64_t i)
{
	return i >= 0 && (size_t)i < pb->n_string_table ? pb->string_table[i] : NULL;
}

/* Copies the string table into one blob. */
static int copy_strings(struct decode *d)
{
	const pb_profile *pb = d->pb;
	size_t i, total = 0, off = 0, n;

	for (i = 0; i < pb->n_string_table; i++)
		total += strlen(pb->string_table[i]) + 1;
	d->str_off = calloc(pb->n_string_table + 1, sizeof(*d->str_off));
	d->p->strs = malloc(total + 1);
	if (!d->str_off || !d->p->strs || total > UINT32_MAX - 1)
		return fail(d, -ENOMEM, "out of memory for %zu bytes of strings", total);
	for (i = 0; i < pb->n_string_table; i++) {
		n = strlen(pb->string_table[i]) + 1;
		memcpy(d->p->strs + off, pb->string_table[i], n);
		d->str_off[i] = (uint32_t)off;
		off += n;
	}
	d->p->strs_len = off;
	return 0;
}

static uint32_t str_ref(const struct decode *d, int64_t i)
{
	return i > 0 && (size_t)i < d->pb->n_string_table ? d->str_off[i] : VIEW_NO_STR;
}

static int index_ids(struct decode *d)
{
	const pb_profile *pb = d->pb;
	size_t i;

	d->locs = calloc(pb->n_location + 1, sizeof(*d->locs));
	d->funcs = calloc(pb->n_function + 1, sizeof(*d->funcs));
	if (!d->locs || !d->funcs)
		return fail(d, -ENOMEM, "out of memory for %zu locations", pb->n_location);
	for (i = 0; i < pb->n_location; i++)
		d->locs[i] = (struct id_index){ pb->location[i]->id, (uint32_t)i };
	for (i = 0; i < pb->n_function; i++)
		d->funcs[i] = (struct id_index){ pb->function[i]->id, (uint32_t)i };
	qsort(d->locs, pb->n_location, sizeof(*d->locs), cmp_id);
	qsort(d->funcs, pb->n_function, sizeof(*d->funcs), cmp_id);
	return 0;
}

/* Every location's lines as frames, the containing function (the last line) first. */
static int build_locations(struct decode *d)
{
	const pb_profile *pb = d->pb;
	struct view_profile *p = d->p;
	size_t i, j, nlines = 0;
	long f;

	for (i = 0; i < pb->n_location; i++)
		nlines += pb->location[i]->n_line ? pb->location[i]->n_line : 1;
	p->locs = calloc(pb->n_location + 1, sizeof(*p->locs));
	p->frames = calloc(nlines + 1, sizeof(*p->frames));
	if (!p->locs || !p->frames)
		return fail(d, -ENOMEM, "out of memory for %zu frames", nlines);
	p->nlocs = pb->n_location;
	for (i = 0; i < pb->n_location; i++) {
		const Perftools__Profiles__Location *loc = pb->location[i];

		p->locs[i].first = (uint32_t)p->nframes;
		for (j = loc->n_line; j-- > 0;) {
			const Perftools__Profiles__Line *ln = loc->line[j];
			struct view_frame *fr = &p->frames[p->nframes++];

			f = find_id(d->funcs, pb->n_function, ln->function_id);
			if (f < 0)
				return fail(d, -EBADMSG, "location %llu: no function %llu",
					    (unsigned long long)loc->id,
					    (unsigned long long)ln->function_id);
			fr->name = str_ref(d, pb->function[f]->name);
			fr->file = str_ref(d, pb->function[f]->filename);
			fr->line = (int32_t)ln->line;
		}
		if (!loc->n_line) /* an address nothing named: keep the frame, unnamed */
			p->frames[p->nframes++] =
				(struct view_frame){ VIEW_NO_STR, VIEW_NO_STR, 0 };
		p->locs[i].n = (uint32_t)(p->nframes - p->locs[i].first);
	}
	return 0;
}

/* The sample's span labels; 0 when it has neither. */
static int span_labels(const struct decode *d, const Perftools__Profiles__Sample *s,
		       uint64_t *span_id, uint32_t *span_name)
{
	const char *key, *val;
	char *end;
	size_t i;

	*span_id = 0;
	*span_name = VIEW_NO_STR;
	for (i = 0; i < s->n_label; i++) {
		key = pb_str(d->pb, s->label[i]->key);
		val = pb_str(d->pb, s->label[i]->str);
		if (!key || !val || !*val)
			continue;
		if (!strcmp(key, SERIES_LABEL_SPAN_ID)) {
			*span_id = strtoull(val, &end, 16);
			if (*end || strlen(val) != 16)
				*span_id = 0;
		} else if (!strcmp(key, SERIES_LABEL_SPAN_NAME)) {
			*span_name = str_ref(d, s->label[i]->str);
		}
	}
	return *span_id || *span_name != VIEW_NO_STR;
}

static int build_samples(struct decode *d)
{
	const pb_profile *pb = d->pb;
	struct view_profile *p = d->p;
	size_t i, j, nstack = 0;
	long l;

	for (i = 0; i < pb->n_sample; i++)
		nstack += pb->sample[i]->n_location_id;
	p->samples = calloc(pb->n_sample + 1, sizeof(*p->samples));
	p->stack = calloc(nstack + 1, sizeof(*p->stack));
	if (!p->samples || !p->stack)
		return fail(d, -ENOMEM, "out of memory for %zu samples", pb->n_sample);
	for (i = 0; i < pb->n_sample; i++) {
		const Perftools__Profiles__Sample *s = pb->sample[i];
		struct view_sample *vs = &p->samples[p->nsamples];

		if (!s->n_value)
			return fail(d, -EBADMSG, "sample %zu has no value", i);
		if (!span_labels(d, s, &vs->span_id, &vs->span_name))
			continue;
		vs->value = s->value[0];
		vs->first = (uint32_t)p->nstack;
		for (j = s->n_location_id; j-- > 0;) {
			l = find_id(d->locs, pb->n_location, s->location_id[j]);
			if (l < 0)
				return fail(d, -EBADMSG, "sample %zu: no location %llu", i,
					    (unsigned long long)s->location_id[j]);
			p->stack[p->nstack++] = (uint32_t)l;
		}
		vs->n = (uint32_t)(p->nstack - vs->first);
		p->nsamples++;
	}
	return 0;
}

static int check_type(struct decode *d)
{
	const char *type, *unit;

	if (!d->pb->n_sample_type)
		return fail(d, -EBADMSG, "no sample type");
	type = pb_str(d->pb, d->pb->sample_type[0]->type);
	unit = pb_str(d->pb, d->pb->sample_type[0]->unit);
	if (!type || !unit)
		return fail(d, -EBADMSG, "sample type out of the string table");
	if (strcmp(unit, "nanoseconds") || (strcmp(type, "cpu") && strcmp(type, "off_cpu")))
		return fail(d, -ENOTSUP, "sample type %.32s/%.32s (not cpu or off_cpu nanoseconds)",
			    type, unit);
	d->p->kind = strcmp(type, "cpu") ? VIEW_KIND_OFF_CPU : VIEW_KIND_CPU;
	d->p->time_ns = d->pb->time_nanos;
	d->p->duration_ns = d->pb->duration_nanos;
	return 0;
}

static int decode_pb(struct decode *d)
{
	return check_type(d)		  ?:
		       copy_strings(d)	  ?:
		       index_ids(d)	  ?:
		       build_locations(d) ?:
					    build_samples(d);
}

static void account(struct view_profile *p)
{
	p->bytes = sizeof(*p) + p->strs_len + p->nsamples * sizeof(*p->samples) +
		   p->nstack * sizeof(*p->stack) + p->nlocs * sizeof(*p->locs) +
		   p->nframes * sizeof(*p->frames);
}

struct view_profile *view_profile_decode(const uint8_t *buf, size_t len, size_t max_bytes,
					 char *why, size_t why_size)
{
	struct decode d = { .why = why, .why_size = why_size };
	uint8_t *raw = NULL;
	pb_profile *pb;
	int err;

	snprintf(why, why_size, "ok");
	if (file_is_gzip(buf, len)) {
		err = file_gunzip(buf, len, max_bytes, &raw, &len);
		if (err) {
			fail(&d, err, "%s",
			     err == -ENODATA ? "truncated gzip stream (still being written?)" :
			     err == -EFBIG   ? "too large once unpacked" :
					       "corrupt gzip stream");
			errno = -err;
			return NULL;
		}
		buf = raw;
	}
	pb = perftools__profiles__profile__unpack(NULL, len, buf);
	free(raw);
	if (!pb) {
		fail(&d, 0, "not a pprof profile (protobuf decoding failed)");
		errno = EBADMSG;
		return NULL;
	}
	d.pb = pb;
	d.p = calloc(1, sizeof(*d.p));
	err = d.p ? decode_pb(&d) : fail(&d, -ENOMEM, "out of memory");
	free(d.str_off);
	free(d.locs);
	free(d.funcs);
	perftools__profiles__profile__free_unpacked(pb, NULL);
	if (err) {
		view_profile_free(d.p);
		errno = -err;
		return NULL;
	}
	account(d.p);
	return d.p;
}

const char *view_profile_str(const struct view_profile *p, uint32_t off)
{
	return off < p->strs_len ? p->strs + off : "";
}

void view_profile_free(struct view_profile *p)
{
	if (!p)
		return;
	free(p->samples);
	free(p->stack);
	free(p->locs);
	free(p->frames);
	free(p->strs);
	free(p);
}
