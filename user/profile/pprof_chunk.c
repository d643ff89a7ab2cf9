// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Splits a pprof builder's samples into several complete profiles, each within a sample count
 * and an encoded size, and each carrying only the strings, functions, mappings and locations
 * it uses. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "profile/pprof.h"
#include "profile/pprof_int.h"
#include "proto/profile.pb-c.h"

/* One table's renumbering for the chunk being built: ids[old position] is the entry's 1-based
 * position in the chunk (0: not used yet), order[k] the old position of the chunk's k-th entry. */
struct renum {
	uint32_t *ids, *order;
	size_t n;
};

/* Where a chunk stood before a sample was tried, to take the sample back out. */
struct chunk_mark {
	size_t str, fn, map, loc, nlines, nlocs, nlabels, bytes;
};

struct chunker {
	const struct pprof_builder *b;
	int64_t omit_key; /* string index of the label key left out; -1: none */
	struct renum str, fn, map, loc;
	size_t first, nsamples; /* the chunk is samples [first, first + nsamples) */
	size_t nlines, nlocs, nlabels; /* sizes of the encoder's arrays */
	size_t bytes; /* exact encoded size of the chunk so far */
	uint64_t *tmp_locs; /* sizing one sample: its renumbered stack and labels */
	Perftools__Profiles__Label *tmp_lab, **tmp_labp;
	size_t cap_tmp_locs, cap_tmp_lab;
};

static size_t varint_size(uint64_t v)
{
	size_t n = 1;

	while (v >= 0x80) {
		v >>= 7;
		n++;
	}
	return n;
}

/* One element of a repeated length-delimited field numbered below 16: tag, length, payload. */
static size_t field_size(size_t len)
{
	return 1 + varint_size(len) + len;
}

static int renum_init(struct renum *r, size_t n)
{
	r->ids = calloc(n ? n : 1, sizeof(*r->ids));
	r->order = malloc((n ? n : 1) * sizeof(*r->order));
	r->n = 0;
	return r->ids && r->order ? 0 : -ENOMEM;
}

static void renum_release(struct renum *r)
{
	free(r->ids);
	free(r->order);
}

/* Forgets the entries added after the first n. */
static void renum_truncate(struct renum *r, size_t n)
{
	while (r->n > n)
		r->ids[r->order[--r->n]] = 0;
}

/* Gives old position pos a chunk id if it has none; returns 1 when it is new. */
static int renum_use(struct renum *r, size_t pos)
{
	if (r->ids[pos])
		return 0;
	r->order[r->n] = pos;
	r->ids[pos] = ++r->n;
	return 1;
}

/* Chunk string index of builder string idx. */
static int64_t use_str(struct chunker *c, uint32_t idx)
{
	if (renum_use(&c->str, idx))
		c->bytes += field_size(strlen(c->b->strings[idx]));
	return c->str.ids[idx] - 1;
}

static void fill_function(struct chunker *c, size_t pos, Perftools__Profiles__Function *m)
{
	const struct pp_function *f = &c->b->functions[pos];

	perftools__profiles__function__init(m);
	m->id = c->fn.ids[pos];
	m->name = use_str(c, f->name);
	m->system_name = use_str(c, f->system_name);
	m->filename = use_str(c, f->file);
}

static void fill_mapping(struct chunker *c, size_t pos, Perftools__Profiles__Mapping *m)
{
	const struct pp_mapping *pm = &c->b->mappings[pos];

	perftools__profiles__mapping__init(m);
	m->id = c->map.ids[pos];
	m->memory_start = pm->start;
	m->memory_limit = pm->limit;
	m->file_offset = pm->offset;
	m->filename = use_str(c, pm->file);
	m->build_id = use_str(c, pm->build_id);
	m->has_functions = pm->has_functions;
	m->has_filenames = pm->has_filenames;
	m->has_line_numbers = pm->has_line_numbers;
	m->has_inline_frames = pm->has_inline_frames;
}

static void fill_line(struct chunker *c, const struct pp_line *l, Perftools__Profiles__Line *m)
{
	perftools__profiles__line__init(m);
	m->function_id = c->fn.ids[l->function_id - 1];
	m->line = l->line;
}

/* Location message without its lines (the caller adds them). */
static void fill_location(struct chunker *c, size_t pos, Perftools__Profiles__Location *m)
{
	const struct pp_location *l = &c->b->locations[pos];

	perftools__profiles__location__init(m);
	m->id = c->loc.ids[pos];
	m->mapping_id = l->mapping_id ? c->map.ids[l->mapping_id - 1] : 0;
	m->address = l->address;
}

/* Brings a location and everything it refers to into the chunk, counting their bytes. */
static void use_location(struct chunker *c, size_t pos)
{
	const struct pp_location *l = &c->b->locations[pos];
	Perftools__Profiles__Function fm;
	Perftools__Profiles__Mapping mm;
	Perftools__Profiles__Location lm;
	Perftools__Profiles__Line line;
	size_t i, size;

	if (!renum_use(&c->loc, pos))
		return;
	if (l->mapping_id && renum_use(&c->map, l->mapping_id - 1)) {
		fill_mapping(c, l->mapping_id - 1, &mm);
		c->bytes += field_size(perftools__profiles__mapping__get_packed_size(&mm));
	}
	fill_location(c, pos, &lm);
	size = perftools__profiles__location__get_packed_size(&lm);
	for (i = 0; i < l->nlines; i++) {
		const struct pp_line *pl = &c->b->lines[l->line_off + i];

		if (renum_use(&c->fn, pl->function_id - 1)) {
			fill_function(c, pl->function_id - 1, &fm);
			c->bytes += field_size(perftools__profiles__function__get_packed_size(&fm));
		}
		fill_line(c, pl, &line);
		size += field_size(perftools__profiles__line__get_packed_size(&line));
	}
	c->bytes += field_size(size);
	c->nlines += l->nlines;
}

/* Fills a sample message: locs and labs must hold the sample's stack and labels. */
static void fill_sample(struct chunker *c, size_t i, Perftools__Profiles__Sample *m, int64_t *value,
			uint64_t *locs, Perftools__Profiles__Label *labs,
			Perftools__Profiles__Label **labp)
{
	const struct pp_sample *s = &c->b->samples[i];
	size_t k, n;

	perftools__profiles__sample__init(m);
	if (__builtin_mul_overflow(s->count, c->b->period_ns, value))
		*value = INT64_MAX;
	m->n_value = 1;
	m->value = value;
	for (k = 0; k < s->nlocs; k++)
		locs[k] = c->loc.ids[c->b->sample_locs[s->loc_off + k] - 1];
	m->n_location_id = s->nlocs;
	m->location_id = s->nlocs ? locs : NULL;
	for (k = 0, n = 0; k < s->nlabels; k++) {
		const struct pp_label *pl = &c->b->sample_labels[s->label_off + k];

		if ((int64_t)pl->key == c->omit_key)
			continue;
		perftools__profiles__label__init(&labs[n]);
		labs[n].key = use_str(c, pl->key);
		labs[n].str = use_str(c, pl->str);
		labp[n] = &labs[n];
		n++;
	}
	m->n_label = n;
	m->label = n ? labp : NULL;
}

static int reserve_tmp(struct chunker *c, const struct pp_sample *s)
{
	void *p;

	if (s->nlocs > c->cap_tmp_locs) {
		p = realloc(c->tmp_locs, s->nlocs * sizeof(*c->tmp_locs));
		if (!p)
			return -ENOMEM;
		c->tmp_locs = p;
		c->cap_tmp_locs = s->nlocs;
	}
	if (s->nlabels > c->cap_tmp_lab) {
		p = realloc(c->tmp_lab, s->nlabels * sizeof(*c->tmp_lab));
		if (!p)
			return -ENOMEM;
		c->tmp_lab = p;
		p = realloc(c->tmp_labp, s->nlabels * sizeof(*c->tmp_labp));
		if (!p)
			return -ENOMEM;
		c->tmp_labp = p;
		c->cap_tmp_lab = s->nlabels;
	}
	return 0;
}

/* Adds builder sample i to the chunk, with every table entry it needs, counting the bytes. */
static int add_sample(struct chunker *c, size_t i)
{
	const struct pp_sample *s = &c->b->samples[i];
	Perftools__Profiles__Sample m;
	int64_t value;
	size_t k;
	int err;

	err = reserve_tmp(c, s);
	if (err)
		return err;
	for (k = 0; k < s->nlocs; k++)
		use_location(c, c->b->sample_locs[s->loc_off + k] - 1);
	fill_sample(c, i, &m, &value, c->tmp_locs, c->tmp_lab, c->tmp_labp);
	c->bytes += field_size(perftools__profiles__sample__get_packed_size(&m));
	c->nlocs += s->nlocs;
	c->nlabels += s->nlabels;
	c->nsamples++;
	return 0;
}

static void mark(const struct chunker *c, struct chunk_mark *m)
{
	*m = (struct chunk_mark){ c->str.n,  c->fn.n,  c->map.n,   c->loc.n,
				  c->nlines, c->nlocs, c->nlabels, c->bytes };
}

static void rollback(struct chunker *c, const struct chunk_mark *m)
{
	renum_truncate(&c->str, m->str);
	renum_truncate(&c->fn, m->fn);
	renum_truncate(&c->map, m->map);
	renum_truncate(&c->loc, m->loc);
	c->nlines = m->nlines;
	c->nlocs = m->nlocs;
	c->nlabels = m->nlabels;
	c->bytes = m->bytes;
	c->nsamples--;
}

/* The profile fields every chunk carries, with "", "cpu" and "nanoseconds" as strings 0..2. */
static void fill_header(struct chunker *c, Perftools__Profiles__Profile *p,
			Perftools__Profiles__ValueType *cpu, Perftools__Profiles__ValueType **types)
{
	perftools__profiles__value_type__init(cpu);
	use_str(c, 0);
	cpu->type = use_str(c, c->b->str_cpu);
	cpu->unit = use_str(c, c->b->str_nanoseconds);
	types[0] = cpu;
	perftools__profiles__profile__init(p);
	p->n_sample_type = 1;
	p->sample_type = types;
	p->period_type = cpu;
	p->period = c->b->period_ns;
	p->time_nanos = c->b->time_nanos;
	p->duration_nanos = c->b->duration_nanos;
}

/* Empties the chunk and starts the next one at sample `first`. */
static void chunk_reset(struct chunker *c, size_t first)
{
	Perftools__Profiles__Profile p;
	Perftools__Profiles__ValueType cpu, *types[1];

	renum_truncate(&c->str, 0);
	renum_truncate(&c->fn, 0);
	renum_truncate(&c->map, 0);
	renum_truncate(&c->loc, 0);
	c->first = first;
	c->nsamples = c->nlines = c->nlocs = c->nlabels = 0;
	c->bytes = 0;
	fill_header(c, &p, &cpu, types);
	c->bytes += perftools__profiles__profile__get_packed_size(&p);
}

/* Message arrays for encoding one chunk; each pointer array points into its message array. */
struct chunk_msgs {
	Perftools__Profiles__Function *fn, **fnp;
	Perftools__Profiles__Mapping *map, **mapp;
	Perftools__Profiles__Location *loc, **locp;
	Perftools__Profiles__Line *line, **linep;
	Perftools__Profiles__Sample *smp, **smpp;
	Perftools__Profiles__Label *lab, **labp;
	uint64_t *locids;
	int64_t *values;
	char **strs;
};

#define MSGS_ALLOC(m, field, n) ((m)->field = calloc((n) ? (n) : 1, sizeof(*(m)->field)))

static int msgs_alloc(struct chunk_msgs *m, const struct chunker *c)
{
	int ok = 1;

	ok &= MSGS_ALLOC(m, fn, c->fn.n) && MSGS_ALLOC(m, fnp, c->fn.n);
	ok &= MSGS_ALLOC(m, map, c->map.n) && MSGS_ALLOC(m, mapp, c->map.n);
	ok &= MSGS_ALLOC(m, loc, c->loc.n) && MSGS_ALLOC(m, locp, c->loc.n);
	ok &= MSGS_ALLOC(m, line, c->nlines) && MSGS_ALLOC(m, linep, c->nlines);
	ok &= MSGS_ALLOC(m, smp, c->nsamples) && MSGS_ALLOC(m, smpp, c->nsamples);
	ok &= MSGS_ALLOC(m, lab, c->nlabels) && MSGS_ALLOC(m, labp, c->nlabels);
	ok &= MSGS_ALLOC(m, locids, c->nlocs) && MSGS_ALLOC(m, values, c->nsamples);
	ok &= MSGS_ALLOC(m, strs, c->str.n) != NULL;
	return ok ? 0 : -ENOMEM;
}

static void msgs_release(struct chunk_msgs *m)
{
	free(m->fn);
	free(m->fnp);
	free(m->map);
	free(m->mapp);
	free(m->loc);
	free(m->locp);
	free(m->line);
	free(m->linep);
	free(m->smp);
	free(m->smpp);
	free(m->lab);
	free(m->labp);
	free(m->locids);
	free(m->values);
	free(m->strs);
}

static void emit_samples(struct chunker *c, struct chunk_msgs *m)
{
	size_t k, nloc = 0, nlab = 0;

	for (k = 0; k < c->nsamples; k++) {
		const struct pp_sample *s = &c->b->samples[c->first + k];

		fill_sample(c, c->first + k, &m->smp[k], &m->values[k], &m->locids[nloc],
			    &m->lab[nlab], &m->labp[nlab]);
		m->smpp[k] = &m->smp[k];
		nloc += s->nlocs;
		nlab += s->nlabels;
	}
}

/* Functions, mappings, locations and strings in chunk id order. Every entry is already in the
 * chunk, so the use_str() calls below only look indices up. */
static void emit_tables(struct chunker *c, struct chunk_msgs *m)
{
	size_t k, j, nl = 0;

	for (k = 0; k < c->fn.n; k++) {
		fill_function(c, c->fn.order[k], &m->fn[k]);
		m->fnp[k] = &m->fn[k];
	}
	for (k = 0; k < c->map.n; k++) {
		fill_mapping(c, c->map.order[k], &m->map[k]);
		m->mapp[k] = &m->map[k];
	}
	for (k = 0; k < c->loc.n; k++) {
		const struct pp_location *l = &c->b->locations[c->loc.order[k]];

		fill_location(c, c->loc.order[k], &m->loc[k]);
		m->loc[k].n_line = l->nlines;
		m->loc[k].line = &m->linep[nl];
		for (j = 0; j < l->nlines; j++, nl++) {
			fill_line(c, &c->b->lines[l->line_off + j], &m->line[nl]);
			m->linep[nl] = &m->line[nl];
		}
		m->locp[k] = &m->loc[k];
	}
	for (k = 0; k < c->str.n; k++)
		m->strs[k] = c->b->strings[c->str.order[k]];
}

/* Encodes the current chunk and hands it to fn. */
static int chunk_emit(struct chunker *c, pprof_chunk_fn fn, void *ctx)
{
	Perftools__Profiles__ValueType cpu, *types[1];
	Perftools__Profiles__Profile p;
	struct chunk_msgs m = { 0 };
	uint8_t *buf = NULL;
	size_t len;
	int err;

	err = msgs_alloc(&m, c);
	if (err)
		goto out_release;
	fill_header(c, &p, &cpu, types);
	emit_samples(c, &m);
	emit_tables(c, &m);
	p.n_sample = c->nsamples;
	p.sample = m.smpp;
	p.n_mapping = c->map.n;
	p.mapping = m.mapp;
	p.n_location = c->loc.n;
	p.location = m.locp;
	p.n_function = c->fn.n;
	p.function = m.fnp;
	p.n_string_table = c->str.n;
	p.string_table = m.strs;
	len = perftools__profiles__profile__get_packed_size(&p);
	buf = malloc(len ? len : 1);
	if (!buf) {
		err = -ENOMEM;
		goto out_release;
	}
	perftools__profiles__profile__pack(&p, buf);
	err = fn(ctx, buf, len, c->nsamples);
out_release:
	free(buf);
	msgs_release(&m);
	return err;
}

static void chunker_release(struct chunker *c)
{
	renum_release(&c->str);
	renum_release(&c->fn);
	renum_release(&c->map);
	renum_release(&c->loc);
	free(c->tmp_locs);
	free(c->tmp_lab);
	free(c->tmp_labp);
}

/* The string index of s in b, or -1. */
static int64_t find_str(const struct pprof_builder *b, const char *s)
{
	size_t i;

	for (i = 0; s && i < b->n_strings; i++)
		if (!strcmp(b->strings[i], s))
			return i;
	return -1;
}

size_t pprof_builder_label_keys(const struct pprof_builder *b, const char **keys, size_t max)
{
	size_t i, j, n = 0;
	uint32_t key;

	for (i = 0; b && i < b->n_sample_labels && n < max; i++) {
		key = b->sample_labels[i].key;
		for (j = 0; j < n; j++)
			if (keys[j] == b->strings[key]) /* interned: one pointer per string */
				break;
		if (j == n)
			keys[n++] = b->strings[key];
	}
	return n;
}

int pprof_builder_encode_chunks(struct pprof_builder *b, size_t max_samples, size_t max_bytes,
				pprof_chunk_fn fn, void *ctx)
{
	return pprof_builder_encode_chunks_omit(b, NULL, max_samples, max_bytes, fn, ctx);
}

int pprof_builder_encode_chunks_omit(struct pprof_builder *b, const char *omit_key,
				     size_t max_samples, size_t max_bytes, pprof_chunk_fn fn,
				     void *ctx)
{
	struct chunker c = { .b = b, .omit_key = -1 };
	struct chunk_mark m;
	size_t i;
	int err;

	if (!b || !fn)
		return -EINVAL;
	c.omit_key = find_str(b, omit_key);
	err = renum_init(&c.str, b->n_strings);
	err = err ?: renum_init(&c.fn, b->n_functions);
	err = err ?: renum_init(&c.map, b->n_mappings);
	err = err ?: renum_init(&c.loc, b->n_locations);
	if (err)
		goto out_release;
	chunk_reset(&c, 0);
	for (i = 0; i < b->n_samples; i++) {
		mark(&c, &m);
		err = add_sample(&c, i);
		if (err)
			goto out_release;
		if (c.nsamples == 1 || ((!max_samples || c.nsamples <= max_samples) &&
					(!max_bytes || c.bytes <= max_bytes)))
			continue;
		/* The sample does not fit: send the chunk without it and start the next with it. */
		rollback(&c, &m);
		err = chunk_emit(&c, fn, ctx);
		if (err)
			goto out_release;
		chunk_reset(&c, i);
		err = add_sample(&c, i);
		if (err)
			goto out_release;
	}
	err = chunk_emit(&c, fn, ctx);
out_release:
	chunker_release(&c);
	return err;
}
