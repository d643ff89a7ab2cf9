/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Private to pprof.c (interning), pprof_tables.c (the tables) and pprof_chunk.c (protobuf
 * output): the builder's tables.
 * Ids in pprof are 1-based; every table here is 0-based, so id = position + 1. */
#ifndef SPANPROF_PPROF_INT_H
#define SPANPROF_PPROF_INT_H

#include <stddef.h>
#include <stdint.h>

#include "util/frame.h"
#include "util/idxmap.h"

struct pp_function {
	uint32_t name, file; /* string indices; the key */
	/* name for native symbols; "" for the synthetic "[unknown] (...)" names and for Python
	 * and Ruby frames, which have no linker name. pprof's demangler only rewrites names equal
	 * to their system name, and it cuts "<...>" out of them as C++ template arguments: a
	 * "<module>" with a system name would show as an empty name. */
	uint32_t system_name;
};

struct pp_mapping {
	uint64_t start, limit, offset;
	uint32_t file, build_id; /* string indices */
	uint8_t has_functions, has_filenames, has_line_numbers, has_inline_frames;
};

struct pp_line {
	uint64_t function_id;
	int64_t line;
};

struct pp_location {
	uint64_t mapping_id; /* 0: no mapping */
	uint64_t address;
	size_t line_off; /* into pprof_builder.lines */
	uint32_t nlines;
};

struct pp_label {
	uint32_t key, str; /* string indices */
};

struct pp_sample {
	size_t loc_off; /* into pprof_builder.sample_locs */
	size_t label_off; /* into pprof_builder.sample_labels */
	uint32_t nlocs, nlabels;
	int64_t count;
};

/* A growable array: items, how many are used, how many are allocated. */
#define PP_ARRAY(type, name) \
	type *name;          \
	size_t n_##name, cap_##name

struct pprof_builder {
	int64_t period_ns, time_nanos, duration_nanos;
	uint32_t str_cpu, str_nanoseconds;

	PP_ARRAY(char *, strings);
	PP_ARRAY(struct pp_function, functions);
	PP_ARRAY(struct pp_mapping, mappings);
	PP_ARRAY(struct pp_location, locations);
	PP_ARRAY(struct pp_line, lines);
	PP_ARRAY(struct pp_sample, samples);
	PP_ARRAY(uint64_t, sample_locs);
	PP_ARRAY(struct pp_label, sample_labels);

	struct idxmap string_idx, function_idx, mapping_idx, location_idx, sample_idx;
	/* The mapping id the last frame's mapping got (0: none yet): a stack's frames mostly come
	 * from one file after another, and a repeat is found without interning its strings. */
	uint64_t last_mapping_id;
};

/* Returns items grown (doubling) to hold `need` elements, allocating when items is NULL, and
 * updates *cap; NULL on failure, when items is left as it was. */
void *pp_grow(void *items, size_t *cap, size_t need, size_t elem);

/* Makes room for `extra` more items in the builder array `name`: 0 or -ENOMEM. */
#define PP_RESERVE(b, name, extra)                                                           \
	({                                                                                   \
		void *grown_ = pp_grow((b)->name, &(b)->cap_##name, (b)->n_##name + (extra), \
				       sizeof(*(b)->name));                                  \
		if (grown_)                                                                  \
			(b)->name = grown_;                                                  \
		grown_ ? 0 : -ENOMEM;                                                        \
	})

/* Index of s (NULL counts as "") in the string table; invalid UTF-8 is repaired first.
 * Returns 0 or -ENOMEM/-E2BIG. */
int pprof_intern_str(struct pprof_builder *b, const char *s, uint32_t *idx);

/* Location id (1-based) of a frame, keyed by (mapping id, address); a new location gets its
 * Lines, functions and mapping interned. Returns 0 or -ENOMEM/-E2BIG. */
int pprof_intern_location(struct pprof_builder *b, const struct sym_frame *f, uint64_t *id);

#endif /* SPANPROF_PPROF_INT_H */
