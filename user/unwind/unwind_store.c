// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Unwind tables in BPF maps (unwind_store.h): rule interning, the chunk pool, table slots. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/bpf.h>

#include "unwind/cfi_rule.h"
#include "util/log.h"
#include "unwind/unwind_store.h"

#define RULE_BUCKETS 4096 /* a power of two */

struct rule_node {
	struct spanprof_unwind_rule rule;
	uint32_t id;
	int32_t next; /* index in rule_nodes, -1: end of chain */
};

struct unwind_store {
	struct unwind_store_fds fds;
	uint32_t nchunks;
	uint32_t *free_chunks; /* stack of free chunk numbers */
	uint32_t nfree;
	uint32_t *table_chunks[SPANPROF_UNWIND_MAX_TABLES]; /* chunk list of each used slot */
	uint32_t table_nchunks[SPANPROF_UNWIND_MAX_TABLES];
	uint32_t table_gen[SPANPROF_UNWIND_MAX_TABLES]; /* last generation given to the slot */
	uint32_t tables_used;
	struct rule_node rules[SPANPROF_UNWIND_MAX_RULES];
	int32_t rule_heads[RULE_BUCKETS];
	uint32_t nrules;
	uint64_t rules_full;
	struct spanprof_unwind_chunk chunk; /* scratch for one chunk write */
};

struct unwind_store *unwind_store_new(const struct unwind_store_fds *fds, uint32_t nchunks)
{
	struct unwind_store *s = calloc(1, sizeof(*s));
	uint32_t i;

	if (!s)
		return NULL;
	s->fds = *fds;
	s->nchunks = nchunks;
	s->free_chunks = malloc(nchunks * sizeof(*s->free_chunks));
	if (!s->free_chunks) {
		free(s);
		errno = ENOMEM;
		return NULL;
	}
	for (i = 0; i < nchunks; i++)
		s->free_chunks[i] = nchunks - 1 - i;
	s->nfree = nchunks;
	for (i = 0; i < RULE_BUCKETS; i++)
		s->rule_heads[i] = -1;
	return s;
}

void unwind_store_free(struct unwind_store *s)
{
	uint32_t i;

	if (!s)
		return;
	for (i = 0; i < SPANPROF_UNWIND_MAX_TABLES; i++)
		free(s->table_chunks[i]);
	free(s->free_chunks);
	free(s);
}

uint32_t unwind_store_chunks_needed(const struct cfi_table *t)
{
	uint32_t n = (t->nrows + SPANPROF_UNWIND_CHUNK_ROWS - 1) / SPANPROF_UNWIND_CHUNK_ROWS;

	if (!t->nrows || t->rows[t->nrows - 1].pc >= SPANPROF_UNWIND_PC_END ||
	    n > SPANPROF_UNWIND_TABLE_CHUNKS)
		return 0;
	return n;
}

static uint32_t rule_hash(const struct spanprof_unwind_rule *r)
{
	uint32_t h = r->cfa_kind * 31u + r->rbp_kind;

	h = h * 2654435761u ^ (uint32_t)r->cfa_off;
	h = h * 2654435761u ^ (uint32_t)r->rbp_off;
	return (h ^ (h >> 15)) & (RULE_BUCKETS - 1);
}

/* The id of rule r, adding it to the BPF rule table when new. When the table is full the row
 * gets the "cannot unwind here" rule (id 0 is always SPANPROF_CFA_NONE). */
static uint32_t intern(struct unwind_store *s, const struct spanprof_unwind_rule *r)
{
	uint32_t b = rule_hash(r), id;
	int32_t i;

	for (i = s->rule_heads[b]; i >= 0; i = s->rules[i].next)
		if (cfi_rule_equal(&s->rules[i].rule, r))
			return s->rules[i].id;
	if (s->nrules == SPANPROF_UNWIND_MAX_RULES) {
		s->rules_full++;
		return 0;
	}
	id = s->nrules;
	if (bpf_map_update_elem(s->fds.rules, &id, r, BPF_ANY)) {
		log_warn(-errno, "write unwind rule %u", id);
		s->rules_full++;
		return 0;
	}
	s->rules[id] = (struct rule_node){ *r, id, s->rule_heads[b] };
	s->rule_heads[b] = id;
	s->nrules++;
	return id;
}

/* Fills and writes chunk number `id` with rows [first, first + CHUNK_ROWS) of t. */
static int write_chunk(struct unwind_store *s, const struct cfi_table *t, size_t first, uint32_t id)
{
	struct spanprof_unwind_row *row = s->chunk.rows;
	size_t i;

	for (i = 0; i < SPANPROF_UNWIND_CHUNK_ROWS; i++) {
		if (first + i < t->nrows) {
			row[i].pc = (uint32_t)t->rows[first + i].pc;
			row[i].rule = intern(s, &t->rows[first + i].rule);
		} else {
			row[i].pc = SPANPROF_UNWIND_PC_END;
			row[i].rule = 0;
		}
	}
	if (bpf_map_update_elem(s->fds.chunks, &id, &s->chunk, BPF_ANY))
		return log_warn(-errno, "write unwind chunk %u", id);
	return 0;
}

static int free_slot(const struct unwind_store *s, uint32_t *slot)
{
	uint32_t i;

	for (i = 0; i < SPANPROF_UNWIND_MAX_TABLES; i++) {
		if (!s->table_chunks[i]) {
			*slot = i;
			return 0;
		}
	}
	return -ENOSPC;
}

int unwind_store_put(struct unwind_store *s, const struct cfi_table *t, uint32_t *table,
		     uint32_t *gen)
{
	static const struct spanprof_unwind_rule none = { .cfa_kind = SPANPROF_CFA_NONE };
	struct spanprof_unwind_table value;
	uint32_t n = unwind_store_chunks_needed(t), slot, i, taken = 0, *chunks;
	int err = 0;

	if (!n || n > s->nchunks)
		return -E2BIG;
	if (!s->nrules)
		intern(s, &none);
	if (n > s->nfree || free_slot(s, &slot))
		return -ENOSPC;
	chunks = malloc(n * sizeof(*chunks));
	if (!chunks)
		return -ENOMEM;
	memset(&value, 0, sizeof(value));
	for (i = 0; i < SPANPROF_UNWIND_TABLE_CHUNKS; i++)
		value.index[i].first_pc = SPANPROF_UNWIND_PC_END;
	for (i = 0; i < n; i++) {
		chunks[i] = s->free_chunks[--s->nfree];
		taken++;
		value.index[i].first_pc =
			(uint32_t)t->rows[(size_t)i * SPANPROF_UNWIND_CHUNK_ROWS].pc;
		value.index[i].chunk = chunks[i];
		err = write_chunk(s, t, (size_t)i * SPANPROF_UNWIND_CHUNK_ROWS, chunks[i]);
		if (err)
			goto out_unwind;
	}
	value.gen = ++s->table_gen[slot] ?: ++s->table_gen[slot]; /* never 0: "empty" */
	value.nchunks = n;
	if (bpf_map_update_elem(s->fds.tables, &slot, &value, BPF_ANY)) {
		err = log_warn(-errno, "write unwind table %u", slot);
		goto out_unwind;
	}
	s->table_chunks[slot] = chunks;
	s->table_nchunks[slot] = n;
	s->tables_used++;
	*table = slot;
	*gen = value.gen;
	return 0;
out_unwind:
	while (taken)
		s->free_chunks[s->nfree++] = chunks[--taken];
	free(chunks);
	return err;
}

void unwind_store_drop(struct unwind_store *s, uint32_t table)
{
	struct spanprof_unwind_table empty = { 0 };
	uint32_t i;

	if (table >= SPANPROF_UNWIND_MAX_TABLES || !s->table_chunks[table])
		return;
	/* Mark the slot empty first, so no sample follows it into reused chunks. */
	if (bpf_map_update_elem(s->fds.tables, &table, &empty, BPF_ANY))
		log_warn(-errno, "clear unwind table %u", table);
	/* The chunks leave the map so the kernel frees their memory (the map is not
	 * preallocated); a sample still reading one keeps it until its RCU grace period ends. */
	for (i = 0; i < s->table_nchunks[table]; i++) {
		uint32_t id = s->table_chunks[table][i];

		if (bpf_map_delete_elem(s->fds.chunks, &id) && errno != ENOENT)
			log_warn(-errno, "free unwind chunk %u", id);
		s->free_chunks[s->nfree++] = id;
	}
	free(s->table_chunks[table]);
	s->table_chunks[table] = NULL;
	s->table_nchunks[table] = 0;
	s->tables_used--;
}

void unwind_store_get_stats(const struct unwind_store *s, struct unwind_store_stats *out)
{
	out->chunks_total = s->nchunks;
	out->chunks_used = s->nchunks - s->nfree;
	out->rules_used = s->nrules;
	out->tables_used = s->tables_used;
	out->rules_full = s->rules_full;
}
