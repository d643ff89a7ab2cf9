// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The pprof builder's lifetime and samples: stacks plus labels, merged when identical through an
 * idxmap so adding a sample costs O(frames + labels). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "profile/pprof.h"
#include "profile/pprof_int.h"

/* The candidate sample sits at the tail of sample_locs/sample_labels, not yet counted in. */
struct sample_key {
	const struct pprof_builder *b;
	uint32_t nlocs, nlabels;
};

static int sample_eq(const void *ctx, uint32_t pos)
{
	const struct sample_key *k = ctx;
	const struct pprof_builder *b = k->b;
	const struct pp_sample *s = &b->samples[pos];

	/* Both tail arrays are allocated in pprof_builder_new(), so memcmp never sees NULL. */
	return s->nlocs == k->nlocs && s->nlabels == k->nlabels &&
	       !memcmp(&b->sample_locs[s->loc_off], &b->sample_locs[b->n_sample_locs],
		       k->nlocs * sizeof(uint64_t)) &&
	       !memcmp(&b->sample_labels[s->label_off], &b->sample_labels[b->n_sample_labels],
		       k->nlabels * sizeof(struct pp_label));
}

static int label_before(const struct pp_label *a, const struct pp_label *c)
{
	return a->key < c->key || (a->key == c->key && a->str < c->str);
}

/* Interns labels with a non-empty key and value into the tail of sample_labels, sorted so that
 * the same set in another order merges. */
static int stage_labels(struct pprof_builder *b, const struct pprof_label *labels, size_t nlabels,
			uint32_t *n)
{
	struct pp_label *tail, l;
	size_t i, j;
	int err;

	err = PP_RESERVE(b, sample_labels, nlabels);
	if (err)
		return err;
	tail = b->sample_labels + b->n_sample_labels;
	*n = 0;
	for (i = 0; i < nlabels; i++) {
		if (!labels[i].key || !*labels[i].key || !labels[i].value || !*labels[i].value)
			continue;
		err = pprof_intern_str(b, labels[i].key, &l.key);
		if (!err)
			err = pprof_intern_str(b, labels[i].value, &l.str);
		if (err)
			return err;
		/* Insertion sort: a sample carries a handful of labels. */
		for (j = *n; j > 0 && label_before(&l, &tail[j - 1]); j--)
			tail[j] = tail[j - 1];
		tail[j] = l;
		(*n)++;
	}
	return 0;
}

static int stage_locations(struct pprof_builder *b, const struct sym_frame *frames, size_t nframes)
{
	size_t i;
	int err;

	err = PP_RESERVE(b, sample_locs, nframes);
	for (i = 0; !err && i < nframes; i++)
		err = pprof_intern_location(b, &frames[i], &b->sample_locs[b->n_sample_locs + i]);
	return err;
}

int pprof_builder_add_sample(struct pprof_builder *b, const struct sym_frame *frames,
			     size_t nframes, int64_t count, const struct pprof_label *labels,
			     size_t nlabels)
{
	struct sample_key key = { .b = b, .nlocs = nframes };
	struct pp_sample *s;
	uint32_t pos;
	uint64_t h;
	int err;

	if (!b || count <= 0 || (nframes && !frames) || (nlabels && !labels) ||
	    nframes > UINT32_MAX || nlabels > UINT32_MAX)
		return -EINVAL;
	err = stage_locations(b, frames, nframes);
	if (!err)
		err = stage_labels(b, labels, nlabels, &key.nlabels);
	if (err)
		return err;
	h = idxmap_hash(IDXMAP_HASH_INIT, &b->sample_locs[b->n_sample_locs],
			nframes * sizeof(uint64_t));
	h = idxmap_hash(h, &b->sample_labels[b->n_sample_labels],
			key.nlabels * sizeof(struct pp_label));
	if (idxmap_find(&b->sample_idx, h, sample_eq, &key, &pos)) {
		s = &b->samples[pos];
		s->count = s->count > INT64_MAX - count ? INT64_MAX : s->count + count;
		return 0;
	}
	err = PP_RESERVE(b, samples, 1);
	if (!err)
		err = idxmap_insert(&b->sample_idx, h, b->n_samples);
	if (err)
		return err;
	s = &b->samples[b->n_samples++];
	s->loc_off = b->n_sample_locs;
	s->label_off = b->n_sample_labels;
	s->nlocs = key.nlocs;
	s->nlabels = key.nlabels;
	s->count = count;
	b->n_sample_locs += key.nlocs;
	b->n_sample_labels += key.nlabels;
	return 0;
}

size_t pprof_builder_sample_count(const struct pprof_builder *b)
{
	return b ? b->n_samples : 0;
}

struct pprof_builder *pprof_builder_new(int64_t period_ns, int64_t time_nanos,
					int64_t duration_nanos)
{
	struct pprof_builder *b;
	uint32_t empty;
	int err;

	if (period_ns <= 0 || duration_nanos < 0) {
		errno = EINVAL;
		return NULL;
	}
	b = calloc(1, sizeof(*b));
	if (!b) {
		errno = ENOMEM;
		return NULL;
	}
	b->period_ns = period_ns;
	b->time_nanos = time_nanos;
	b->duration_nanos = duration_nanos;
	idxmap_init(&b->string_idx);
	idxmap_init(&b->function_idx);
	idxmap_init(&b->mapping_idx);
	idxmap_init(&b->location_idx);
	idxmap_init(&b->sample_idx);
	/* string_table[0] must be "": intern it first. */
	err = pprof_intern_str(b, "", &empty);
	if (!err)
		err = PP_RESERVE(b, sample_locs, 1);
	if (!err)
		err = PP_RESERVE(b, sample_labels, 1);
	if (!err)
		err = pprof_intern_str(b, "cpu", &b->str_cpu);
	if (!err)
		err = pprof_intern_str(b, "nanoseconds", &b->str_nanoseconds);
	if (err) {
		pprof_builder_free(b);
		errno = -err;
		return NULL;
	}
	return b;
}

int pprof_builder_set_sample_type(struct pprof_builder *b, const char *type, const char *unit)
{
	int err;

	if (!b || !type || !unit || !type[0] || !unit[0])
		return -EINVAL;
	err = pprof_intern_str(b, type, &b->str_cpu);
	return err ?: pprof_intern_str(b, unit, &b->str_nanoseconds);
}

const char *pprof_builder_sample_type(const struct pprof_builder *b)
{
	return b->strings[b->str_cpu];
}

void pprof_builder_free(struct pprof_builder *b)
{
	size_t i;

	if (!b)
		return;
	for (i = 0; i < b->n_strings; i++)
		free(b->strings[i]);
	free(b->strings);
	free(b->functions);
	free(b->mappings);
	free(b->locations);
	free(b->lines);
	free(b->samples);
	free(b->sample_locs);
	free(b->sample_labels);
	idxmap_release(&b->string_idx);
	idxmap_release(&b->function_idx);
	idxmap_release(&b->mapping_idx);
	idxmap_release(&b->location_idx);
	idxmap_release(&b->sample_idx);
	free(b);
}

void pprof_builder_set_time(struct pprof_builder *b, int64_t time_nanos, int64_t duration_nanos)
{
	b->time_nanos = time_nanos;
	b->duration_nanos = duration_nanos < 0 ? 0 : duration_nanos;
}

int64_t pprof_builder_time(const struct pprof_builder *b)
{
	return b->time_nanos;
}

int64_t pprof_builder_duration(const struct pprof_builder *b)
{
	return b->duration_nanos;
}
