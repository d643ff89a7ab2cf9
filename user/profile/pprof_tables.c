// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The pprof builder's tables: strings (UTF-8 repaired), functions, mappings and locations, each
 * interned through an idxmap. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profile/pprof.h"
#include "profile/pprof_int.h"
#include "util/utf8.h"

#define UNKNOWN_NAME_MAX 320

void *pp_grow(void *items, size_t *cap, size_t need, size_t elem)
{
	size_t ncap = *cap ? *cap : 16;
	void *p;

	if (items && need <= *cap)
		return items;
	while (ncap < need) {
		if (ncap > SIZE_MAX / 2)
			return NULL;
		ncap *= 2;
	}
	if (ncap > SIZE_MAX / elem)
		return NULL;
	p = realloc(items, ncap * elem);
	if (p)
		*cap = ncap;
	return p;
}

struct str_key {
	const struct pprof_builder *b;
	const char *s;
};

static int str_eq(const void *ctx, uint32_t pos)
{
	const struct str_key *k = ctx;

	return strcmp(k->b->strings[pos], k->s) == 0;
}

/* Index of s (NULL counts as "") in the string table, adding a UTF-8-clean copy if new. */
int pprof_intern_str(struct pprof_builder *b, const char *s, uint32_t *idx)
{
	struct str_key key = { b, s ? s : "" };
	char *copy = NULL;
	uint64_t h;
	int err;

	if (!utf8_valid(key.s)) {
		copy = utf8_sanitize(key.s);
		if (!copy)
			return -ENOMEM;
		key.s = copy;
	}
	h = idxmap_hash(IDXMAP_HASH_INIT, key.s, strlen(key.s));
	if (idxmap_find(&b->string_idx, h, str_eq, &key, idx)) {
		free(copy);
		return 0;
	}
	err = PP_RESERVE(b, strings, 1);
	if (!err && !copy) {
		copy = strdup(key.s);
		err = copy ? 0 : -ENOMEM;
	}
	if (!err)
		err = idxmap_insert(&b->string_idx, h, b->n_strings);
	if (err) {
		free(copy);
		return err;
	}
	*idx = b->n_strings;
	b->strings[b->n_strings++] = copy;
	return 0;
}

struct fn_key {
	const struct pprof_builder *b;
	struct pp_function fn;
};

static int fn_eq(const void *ctx, uint32_t pos)
{
	const struct fn_key *k = ctx;
	const struct pp_function *f = &k->b->functions[pos];

	return f->name == k->fn.name && f->file == k->fn.file;
}

/* Function id (1-based) for (name, file); no_system_name for a made-up "[unknown]" name and
 * for interpreter frames (see struct pp_function). */
static int intern_function(struct pprof_builder *b, const char *name, const char *file,
			   int no_system_name, uint64_t *id)
{
	struct fn_key key = { .b = b };
	uint32_t pos;
	uint64_t h;
	int err;

	err = pprof_intern_str(b, name, &key.fn.name);
	if (!err)
		err = pprof_intern_str(b, file, &key.fn.file);
	if (err)
		return err;
	h = idxmap_hash_u64(idxmap_hash_u64(IDXMAP_HASH_INIT, key.fn.name), key.fn.file);
	if (!idxmap_find(&b->function_idx, h, fn_eq, &key, &pos)) {
		err = PP_RESERVE(b, functions, 1);
		if (!err)
			err = idxmap_insert(&b->function_idx, h, b->n_functions);
		if (err)
			return err;
		pos = b->n_functions++;
		b->functions[pos] = key.fn;
		b->functions[pos].system_name = no_system_name ? 0 : key.fn.name;
	}
	*id = (uint64_t)pos + 1;
	return 0;
}

struct map_key {
	const struct pprof_builder *b;
	struct pp_mapping m;
};

static int map_eq(const void *ctx, uint32_t pos)
{
	const struct map_key *k = ctx;
	const struct pp_mapping *m = &k->b->mappings[pos];

	return m->start == k->m.start && m->limit == k->m.limit && m->offset == k->m.offset &&
	       m->file == k->m.file && m->build_id == k->m.build_id;
}

/* 1 when sm is the mapping interned as id: the same range and offset, and the same path and build
 * id as the builder's own copies (a path that needed repairing as UTF-8 never matches: it takes
 * the full way). */
static int same_mapping(const struct pprof_builder *b, uint64_t id, const struct sym_mapping *sm)
{
	const struct pp_mapping *m = &b->mappings[id - 1];

	return m->start == sm->start && m->limit == sm->limit && m->offset == sm->offset &&
	       !strcmp(b->strings[m->file], sm->path ? sm->path : "") &&
	       !strcmp(b->strings[m->build_id], sm->build_id ? sm->build_id : "");
}

/* Mapping id (1-based) for (start, limit, offset, path, build id). */
static int intern_mapping(struct pprof_builder *b, const struct sym_mapping *sm, uint64_t *id)
{
	struct map_key key = { .b = b };
	uint32_t pos;
	uint64_t h;
	int err;

	if (b->last_mapping_id && same_mapping(b, b->last_mapping_id, sm)) {
		*id = b->last_mapping_id;
		return 0;
	}

	key.m.start = sm->start;
	key.m.limit = sm->limit;
	key.m.offset = sm->offset;
	err = pprof_intern_str(b, sm->path, &key.m.file);
	if (!err)
		err = pprof_intern_str(b, sm->build_id, &key.m.build_id);
	if (err)
		return err;
	h = idxmap_hash_u64(IDXMAP_HASH_INIT, key.m.start);
	h = idxmap_hash_u64(idxmap_hash_u64(h, key.m.limit), key.m.offset);
	h = idxmap_hash_u64(idxmap_hash_u64(h, key.m.file), key.m.build_id);
	if (!idxmap_find(&b->mapping_idx, h, map_eq, &key, &pos)) {
		err = PP_RESERVE(b, mappings, 1);
		if (!err)
			err = idxmap_insert(&b->mapping_idx, h, b->n_mappings);
		if (err)
			return err;
		pos = b->n_mappings++;
		b->mappings[pos] = key.m;
	}
	*id = (uint64_t)pos + 1;
	b->last_mapping_id = *id;
	return 0;
}

/* "[unknown] (<basename of the mapping path>)", or "[unknown]" without a mapping path. */
static void unknown_name(const struct sym_frame *f, char *buf, size_t size)
{
	const char *path = f->has_mapping ? f->mapping.path : NULL;
	const char *base;

	if (!path || !*path) {
		snprintf(buf, size, "[unknown]");
		return;
	}
	base = strrchr(path, '/');
	base = base && base[1] ? base + 1 : path;
	snprintf(buf, size, "[unknown] (%.255s)", base);
}

/* Appends the Lines of a new location, innermost first, and records on the mapping what kind
 * of symbol information its frames carry. */
static int add_lines(struct pprof_builder *b, const struct sym_frame *f, uint64_t mapping_id,
		     struct pp_location *loc)
{
	char unknown[UNKNOWN_NAME_MAX];
	int n = f->nlines > 0 && f->nlines <= SYM_MAX_INLINE ? f->nlines : 0;
	struct pp_mapping *m = mapping_id ? &b->mappings[mapping_id - 1] : NULL;
	struct pp_line *ln;
	int i, err;

	unknown_name(f, unknown, sizeof(unknown));
	err = PP_RESERVE(b, lines, n ? n : 1);
	if (err)
		return err;
	loc->line_off = b->n_lines;
	loc->nlines = n ? n : 1;
	for (i = 0; i < (int)loc->nlines; i++) {
		const struct sym_line *sl = n ? &f->lines[i] : NULL;
		const char *name = sl && sl->function ? sl->function : unknown;

		ln = &b->lines[b->n_lines + i];
		ln->line = sl && sl->line > 0 ? sl->line : 0;
		err = intern_function(b, name, sl ? sl->file : NULL,
				      name == unknown || f->interpreted, &ln->function_id);
		if (err)
			return err;
		if (m && sl) {
			m->has_functions |= sl->function != NULL;
			m->has_filenames |= sl->file && *sl->file;
			m->has_line_numbers |= ln->line > 0;
		}
	}
	if (m && n > 1)
		m->has_inline_frames = 1;
	b->n_lines += loc->nlines;
	return 0;
}

struct loc_key {
	const struct pprof_builder *b;
	uint64_t mapping_id, address;
};

static int loc_eq(const void *ctx, uint32_t pos)
{
	const struct loc_key *k = ctx;
	const struct pp_location *l = &k->b->locations[pos];

	return l->mapping_id == k->mapping_id && l->address == k->address;
}

/* Location id (1-based) for a frame, keyed by (mapping id, address). */
int pprof_intern_location(struct pprof_builder *b, const struct sym_frame *f, uint64_t *id)
{
	struct loc_key key = { .b = b, .address = f->addr };
	struct pp_location loc;
	uint32_t pos;
	uint64_t h;
	int err;

	if (f->has_mapping) {
		err = intern_mapping(b, &f->mapping, &key.mapping_id);
		if (err)
			return err;
	}
	h = idxmap_hash_u64(idxmap_hash_u64(IDXMAP_HASH_INIT, key.mapping_id), key.address);
	if (!idxmap_find(&b->location_idx, h, loc_eq, &key, &pos)) {
		loc.mapping_id = key.mapping_id;
		loc.address = key.address;
		err = PP_RESERVE(b, locations, 1);
		if (!err)
			err = add_lines(b, f, key.mapping_id, &loc);
		if (!err)
			err = idxmap_insert(&b->location_idx, h, b->n_locations);
		if (err)
			return err;
		pos = b->n_locations++;
		b->locations[pos] = loc;
	}
	*id = (uint64_t)pos + 1;
	return 0;
}
