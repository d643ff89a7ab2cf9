/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Puts unwind tables into the BPF maps the unwinder reads: interns rules, hands out fixed-size
 * row chunks from a bounded pool, and gives each table a slot with a generation number. */
#ifndef SPANPROF_UNWIND_STORE_H
#define SPANPROF_UNWIND_STORE_H

#include <stdint.h>

#include "unwind/cfi_table.h"

struct unwind_store_fds {
	int rules; /* ARRAY u32 -> struct spanprof_unwind_rule */
	int chunks; /* HASH u32 -> struct spanprof_unwind_chunk (not preallocated) */
	int tables; /* HASH u32 -> struct spanprof_unwind_table (not preallocated) */
};

struct unwind_store_stats {
	uint32_t chunks_used, chunks_total;
	uint32_t rules_used;
	uint32_t tables_used;
	uint64_t rules_full; /* rows stored as "cannot unwind here": the rule table was full */
};

/* nchunks: the size of the chunks map. NULL with errno on failure. */
struct unwind_store *unwind_store_new(const struct unwind_store_fds *fds, uint32_t nchunks);
void unwind_store_free(struct unwind_store *s); /* NULL-safe */

/* Chunks table t needs (0 when it cannot be stored at all: more than
 * SPANPROF_UNWIND_TABLE_CHUNKS chunks, or addresses beyond 32 bits). */
uint32_t unwind_store_chunks_needed(const struct cfi_table *t);

/* Writes t; on success *table and *gen name it for mappings. Returns 0, -ENOSPC when not
 * enough chunks or table slots are free (evict and retry), -E2BIG when t can never fit, or
 * another -errno from a map update (logged). */
int unwind_store_put(struct unwind_store *s, const struct cfi_table *t, uint32_t *table,
		     uint32_t *gen);

/* Forgets a table: its slot is marked empty (mappings naming it see a generation mismatch) and
 * its chunks leave the chunk map (their kernel memory is freed) and return to the pool. */
void unwind_store_drop(struct unwind_store *s, uint32_t table);

void unwind_store_get_stats(const struct unwind_store *s, struct unwind_store_stats *out);

#endif /* SPANPROF_UNWIND_STORE_H */
