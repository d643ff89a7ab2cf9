// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Turns a pprof builder's tables into protobuf-c messages and packs them, and gzips the result
 * the way pprof files are stored. */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <zlib.h>

#include "pprof.h"
#include "pprof_int.h"
#include "profile.pb-c.h"

/* Message arrays built for one encode; every pointer array points into its message array. */
struct encode_scratch {
	Perftools__Profiles__Function *fn, **fnp;
	Perftools__Profiles__Mapping *map, **mapp;
	Perftools__Profiles__Location *loc, **locp;
	Perftools__Profiles__Line *line, **linep;
	Perftools__Profiles__Sample *smp, **smpp;
	Perftools__Profiles__Label *lab, **labp;
	int64_t *values;
};

static void scratch_release(struct encode_scratch *s)
{
	free(s->fn);
	free(s->fnp);
	free(s->map);
	free(s->mapp);
	free(s->loc);
	free(s->locp);
	free(s->line);
	free(s->linep);
	free(s->smp);
	free(s->smpp);
	free(s->lab);
	free(s->labp);
	free(s->values);
}

/* calloc that never returns NULL for a zero count, so NULL always means out of memory. */
static void *alloc_n(size_t n, size_t size)
{
	return calloc(n ? n : 1, size);
}

static int scratch_alloc(struct encode_scratch *s, const struct pprof_builder *b)
{
	s->fn = alloc_n(b->n_functions, sizeof(*s->fn));
	s->fnp = alloc_n(b->n_functions, sizeof(*s->fnp));
	s->map = alloc_n(b->n_mappings, sizeof(*s->map));
	s->mapp = alloc_n(b->n_mappings, sizeof(*s->mapp));
	s->loc = alloc_n(b->n_locations, sizeof(*s->loc));
	s->locp = alloc_n(b->n_locations, sizeof(*s->locp));
	s->line = alloc_n(b->n_lines, sizeof(*s->line));
	s->linep = alloc_n(b->n_lines, sizeof(*s->linep));
	s->smp = alloc_n(b->n_samples, sizeof(*s->smp));
	s->smpp = alloc_n(b->n_samples, sizeof(*s->smpp));
	s->lab = alloc_n(b->n_sample_labels, sizeof(*s->lab));
	s->labp = alloc_n(b->n_sample_labels, sizeof(*s->labp));
	s->values = alloc_n(b->n_samples, sizeof(*s->values));
	if (!s->fn || !s->fnp || !s->map || !s->mapp || !s->loc || !s->locp || !s->line ||
	    !s->linep || !s->smp || !s->smpp || !s->lab || !s->labp || !s->values)
		return -ENOMEM;
	return 0;
}

static void fill_functions(struct encode_scratch *s, const struct pprof_builder *b)
{
	size_t i;

	for (i = 0; i < b->n_functions; i++) {
		perftools__profiles__function__init(&s->fn[i]);
		s->fn[i].id = i + 1;
		s->fn[i].name = b->functions[i].name;
		s->fn[i].system_name = b->functions[i].system_name;
		s->fn[i].filename = b->functions[i].file;
		s->fnp[i] = &s->fn[i];
	}
}

static void fill_mappings(struct encode_scratch *s, const struct pprof_builder *b)
{
	const struct pp_mapping *m;
	size_t i;

	for (i = 0; i < b->n_mappings; i++) {
		m = &b->mappings[i];
		perftools__profiles__mapping__init(&s->map[i]);
		s->map[i].id = i + 1;
		s->map[i].memory_start = m->start;
		s->map[i].memory_limit = m->limit;
		s->map[i].file_offset = m->offset;
		s->map[i].filename = m->file;
		s->map[i].build_id = m->build_id;
		s->map[i].has_functions = m->has_functions;
		s->map[i].has_filenames = m->has_filenames;
		s->map[i].has_line_numbers = m->has_line_numbers;
		s->map[i].has_inline_frames = m->has_inline_frames;
		s->mapp[i] = &s->map[i];
	}
}

static void fill_locations(struct encode_scratch *s, const struct pprof_builder *b)
{
	const struct pp_location *l;
	size_t i, j;

	for (i = 0; i < b->n_lines; i++) {
		perftools__profiles__line__init(&s->line[i]);
		s->line[i].function_id = b->lines[i].function_id;
		s->line[i].line = b->lines[i].line;
		s->linep[i] = &s->line[i];
	}
	for (i = 0; i < b->n_locations; i++) {
		l = &b->locations[i];
		perftools__profiles__location__init(&s->loc[i]);
		s->loc[i].id = i + 1;
		s->loc[i].mapping_id = l->mapping_id;
		s->loc[i].address = l->address;
		s->loc[i].n_line = l->nlines;
		s->loc[i].line = &s->linep[l->line_off];
		for (j = 0; j < l->nlines; j++)
			s->linep[l->line_off + j] = &s->line[l->line_off + j];
		s->locp[i] = &s->loc[i];
	}
}

static void fill_samples(struct encode_scratch *s, const struct pprof_builder *b)
{
	const struct pp_sample *ps;
	size_t i;

	for (i = 0; i < b->n_sample_labels; i++) {
		perftools__profiles__label__init(&s->lab[i]);
		s->lab[i].key = b->sample_labels[i].key;
		s->lab[i].str = b->sample_labels[i].str;
		s->labp[i] = &s->lab[i];
	}
	for (i = 0; i < b->n_samples; i++) {
		ps = &b->samples[i];
		perftools__profiles__sample__init(&s->smp[i]);
		if (__builtin_mul_overflow(ps->count, b->period_ns, &s->values[i]))
			s->values[i] = INT64_MAX;
		s->smp[i].n_value = 1;
		s->smp[i].value = &s->values[i];
		s->smp[i].n_location_id = ps->nlocs;
		s->smp[i].location_id = ps->nlocs ? &b->sample_locs[ps->loc_off] : NULL;
		s->smp[i].n_label = ps->nlabels;
		s->smp[i].label = ps->nlabels ? &s->labp[ps->label_off] : NULL;
		s->smpp[i] = &s->smp[i];
	}
}

int pprof_builder_encode(struct pprof_builder *b, uint8_t **out, size_t *len)
{
	Perftools__Profiles__Profile prof = PERFTOOLS__PROFILES__PROFILE__INIT;
	Perftools__Profiles__ValueType cpu = PERFTOOLS__PROFILES__VALUE_TYPE__INIT;
	Perftools__Profiles__ValueType *types[1] = { &cpu };
	struct encode_scratch s = { 0 };
	int err;

	if (!b || !out || !len)
		return -EINVAL;
	err = scratch_alloc(&s, b);
	if (err)
		goto out_release;
	fill_functions(&s, b);
	fill_mappings(&s, b);
	fill_locations(&s, b);
	fill_samples(&s, b);
	cpu.type = b->str_cpu;
	cpu.unit = b->str_nanoseconds;
	prof.n_sample_type = 1;
	prof.sample_type = types;
	prof.period_type = &cpu;
	prof.period = b->period_ns;
	prof.time_nanos = b->time_nanos;
	prof.duration_nanos = b->duration_nanos;
	prof.n_sample = b->n_samples;
	prof.sample = s.smpp;
	prof.n_mapping = b->n_mappings;
	prof.mapping = s.mapp;
	prof.n_location = b->n_locations;
	prof.location = s.locp;
	prof.n_function = b->n_functions;
	prof.function = s.fnp;
	prof.n_string_table = b->n_strings;
	prof.string_table = b->strings;

	*len = perftools__profiles__profile__get_packed_size(&prof);
	*out = malloc(*len ? *len : 1);
	if (!*out) {
		err = -ENOMEM;
		goto out_release;
	}
	perftools__profiles__profile__pack(&prof, *out);
out_release:
	scratch_release(&s);
	return err;
}

int pprof_gzip(const uint8_t *buf, size_t len, uint8_t **out, size_t *out_len)
{
	z_stream zs = { 0 };
	uint8_t *dst;
	uLong cap;
	int zerr, err = 0;

	if ((!buf && len) || !out || !out_len)
		return -EINVAL;
	/* zlib counts input in 32 bits; profiles are limited to a few MiB anyway. */
	if (len > UINT_MAX / 2)
		return -E2BIG;
	/* windowBits 15 + 16: a gzip header and trailer instead of zlib's. */
	zerr = deflateInit2(&zs, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY);
	if (zerr != Z_OK)
		return zerr == Z_MEM_ERROR ? -ENOMEM : -EINVAL;
	cap = deflateBound(&zs, len);
	dst = malloc(cap);
	if (!dst) {
		err = -ENOMEM;
		goto out_end;
	}
	zs.next_in = (Bytef *)buf;
	zs.avail_in = len;
	zs.next_out = dst;
	zs.avail_out = cap;
	/* deflateBound() leaves room for everything, so one Z_FINISH call completes the stream. */
	zerr = deflate(&zs, Z_FINISH);
	if (zerr != Z_STREAM_END) {
		free(dst);
		err = zerr == Z_MEM_ERROR ? -ENOMEM : -EIO;
		goto out_end;
	}
	*out = dst;
	*out_len = zs.total_out;
out_end:
	deflateEnd(&zs);
	return err;
}
