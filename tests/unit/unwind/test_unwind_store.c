// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Unit tests for unwind_store against real BPF maps: rows land in chunks padded for the BPF
 * search, rules are interned, the chunk pool is a hard budget, and a dropped table's slot is
 * seen as empty (and later reused under a new generation), and chunk memory follows use. */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include <bpf/bpf.h>

#include "proc_memory.h"
#include "unwind/unwind_store.h"

#define NCHUNKS 3

struct maps {
	struct unwind_store_fds fds;
	struct unwind_store *store;
};

static int setup(void **state)
{
	LIBBPF_OPTS(bpf_map_create_opts, no_prealloc, .map_flags = BPF_F_NO_PREALLOC);
	struct maps *m = calloc(1, sizeof(*m));

	if (!m)
		return -1;
	*state = m;
	if (geteuid() != 0)
		return 0;
	m->fds.rules = bpf_map_create(BPF_MAP_TYPE_ARRAY, "t_rules", 4,
				      sizeof(struct spanprof_unwind_rule),
				      SPANPROF_UNWIND_MAX_RULES, NULL);
	/* As bpf/unwind_native.bpf.h defines them: hashes without preallocation. */
	m->fds.chunks = bpf_map_create(BPF_MAP_TYPE_HASH, "t_chunks", 4,
				       sizeof(struct spanprof_unwind_chunk), NCHUNKS, &no_prealloc);
	m->fds.tables = bpf_map_create(BPF_MAP_TYPE_HASH, "t_tables", 4,
				       sizeof(struct spanprof_unwind_table),
				       SPANPROF_UNWIND_MAX_TABLES, &no_prealloc);
	if (m->fds.rules < 0 || m->fds.chunks < 0 || m->fds.tables < 0)
		return 0;
	m->store = unwind_store_new(&m->fds, NCHUNKS);
	return m->store ? 0 : -1;
}

static int teardown(void **state)
{
	struct maps *m = *state;

	unwind_store_free(m->store);
	if (m->store) {
		close(m->fds.rules);
		close(m->fds.chunks);
		close(m->fds.tables);
	}
	free(m);
	return 0;
}

static struct maps *need_maps(void **state)
{
	struct maps *m = *state;

	if (!m->store)
		skip(); /* not root, or no BPF */
	return m;
}

/* n rows 16 bytes apart from 0x1000, cycling through three rules. */
static void make_table(struct cfi_table *t, size_t n)
{
	size_t i;

	memset(t, 0, sizeof(*t));
	t->rows = calloc(n, sizeof(*t->rows));
	assert_non_null(t->rows);
	t->nrows = n;
	for (i = 0; i < n; i++) {
		t->rows[i].pc = 0x1000 + 16 * i;
		t->rows[i].rule.cfa_kind = SPANPROF_CFA_RSP;
		t->rows[i].rule.cfa_off = 8 * (1 + i % 3);
		t->rows[i].rule.rbp_kind = i % 3 == 2 ? SPANPROF_RBP_AT_CFA : SPANPROF_RBP_SAME;
		t->rows[i].rule.rbp_off = i % 3 == 2 ? -16 : 0;
	}
}

static void read_table(const struct maps *m, uint32_t id, struct spanprof_unwind_table *v)
{
	assert_int_equal(bpf_map_lookup_elem(m->fds.tables, &id, v), 0);
}

static unsigned int count_keys(int fd)
{
	uint32_t key, next;
	unsigned int n = 0;
	void *prev = NULL;

	while (!bpf_map_get_next_key(fd, prev, &next)) {
		key = next;
		prev = &key;
		n++;
	}
	return n;
}

/* The chunk map costs what the tables in it need, not its max_entries: it grows as tables are
 * put and shrinks when they are dropped. */
static void test_chunk_memory_follows_the_tables_stored(void **state)
{
	struct maps *m = need_maps(state);
	uint64_t empty, one, two, dropped;
	uint32_t t1, g1, t2, g2;
	struct cfi_table t;

	make_table(&t, 10);
	empty = proc_memory_fd_memlock(m->fds.chunks);
	assert_int_equal(unwind_store_put(m->store, &t, &t1, &g1), 0);
	one = proc_memory_fd_memlock(m->fds.chunks);
	assert_int_equal(unwind_store_put(m->store, &t, &t2, &g2), 0);
	two = proc_memory_fd_memlock(m->fds.chunks);
	assert_true(one - empty >= sizeof(struct spanprof_unwind_chunk));
	assert_true(two - one >= sizeof(struct spanprof_unwind_chunk));
	/* A preallocated map would have cost all NCHUNKS chunks from the start. */
	assert_true(empty < sizeof(struct spanprof_unwind_chunk));
	unwind_store_drop(m->store, t1);
	dropped = proc_memory_fd_memlock(m->fds.chunks);
	assert_int_equal(dropped, one);
	cfi_table_release(&t);
}

static void test_rows_land_in_padded_chunks_with_interned_rules(void **state)
{
	struct maps *m = need_maps(state);
	static struct spanprof_unwind_chunk chunk;
	struct spanprof_unwind_table v;
	struct spanprof_unwind_rule rule;
	struct unwind_store_stats st;
	uint32_t table, gen, i, id;
	struct cfi_table t;
	size_t n = SPANPROF_UNWIND_CHUNK_ROWS + 100;

	make_table(&t, n);
	assert_int_equal(unwind_store_chunks_needed(&t), 2);
	assert_int_equal(unwind_store_put(m->store, &t, &table, &gen), 0);
	read_table(m, table, &v);
	assert_int_equal(v.gen, gen);
	assert_true(gen != 0);
	assert_int_equal(v.nchunks, 2);
	assert_int_equal(v.index[0].first_pc, 0x1000);
	assert_int_equal(v.index[1].first_pc, 0x1000 + 16 * SPANPROF_UNWIND_CHUNK_ROWS);
	for (i = 2; i < SPANPROF_UNWIND_TABLE_CHUNKS; i++)
		assert_int_equal(v.index[i].first_pc, SPANPROF_UNWIND_PC_END);
	/* The second chunk: 100 rows, then padding the BPF search never stops in. */
	id = v.index[1].chunk;
	assert_int_equal(bpf_map_lookup_elem(m->fds.chunks, &id, &chunk), 0);
	for (i = 0; i < SPANPROF_UNWIND_CHUNK_ROWS; i++) {
		size_t row = SPANPROF_UNWIND_CHUNK_ROWS + i;

		if (row >= n) {
			assert_int_equal(chunk.rows[i].pc, SPANPROF_UNWIND_PC_END);
			continue;
		}
		assert_int_equal(chunk.rows[i].pc, t.rows[row].pc);
		assert_int_equal(bpf_map_lookup_elem(m->fds.rules, &chunk.rows[i].rule, &rule), 0);
		assert_int_equal(rule.cfa_kind, t.rows[row].rule.cfa_kind);
		assert_int_equal(rule.cfa_off, t.rows[row].rule.cfa_off);
		assert_int_equal(rule.rbp_kind, t.rows[row].rule.rbp_kind);
		assert_int_equal(rule.rbp_off, t.rows[row].rule.rbp_off);
	}
	unwind_store_get_stats(m->store, &st);
	assert_int_equal(st.rules_used, 4); /* "no row" + the three rules */
	assert_int_equal(st.chunks_used, 2);
	assert_int_equal(st.tables_used, 1);
	cfi_table_release(&t);
}

static void test_chunk_budget_is_hard_and_drop_frees_and_invalidates(void **state)
{
	struct maps *m = need_maps(state);
	uint32_t t1, g1, t2, g2, t3, g3;
	struct spanprof_unwind_table v;
	struct cfi_table two, one;

	make_table(&two, SPANPROF_UNWIND_CHUNK_ROWS + 1);
	make_table(&one, 10);
	assert_int_equal(unwind_store_put(m->store, &two, &t1, &g1), 0);
	assert_int_equal(unwind_store_put(m->store, &two, &t2, &g2), -ENOSPC);
	assert_int_equal(unwind_store_put(m->store, &one, &t2, &g2), 0);
	unwind_store_drop(m->store, t1);
	read_table(m, t1, &v);
	assert_int_equal(v.gen, 0); /* mappings naming (t1, g1) now see a mismatch */
	assert_int_equal(count_keys(m->fds.chunks), 1); /* t1's two chunks left the map */
	assert_int_equal(unwind_store_put(m->store, &two, &t3, &g3), 0);
	assert_int_equal(t3, t1); /* the freed slot, under a new generation */
	assert_true(g3 != g1);
	read_table(m, t3, &v);
	assert_int_equal(v.gen, g3);
	cfi_table_release(&two);
	cfi_table_release(&one);
}

static void test_tables_that_can_never_fit_are_e2big(void **state)
{
	struct maps *m = need_maps(state);
	struct cfi_table t;
	uint32_t table, gen;

	make_table(&t, (size_t)SPANPROF_UNWIND_TABLE_CHUNKS * SPANPROF_UNWIND_CHUNK_ROWS + 1);
	assert_int_equal(unwind_store_chunks_needed(&t), 0);
	assert_int_equal(unwind_store_put(m->store, &t, &table, &gen), -E2BIG);
	cfi_table_release(&t);
	make_table(&t, 4 * SPANPROF_UNWIND_CHUNK_ROWS); /* more than the pool holds */
	assert_int_equal(unwind_store_put(m->store, &t, &table, &gen), -E2BIG);
	t.nrows = 10;
	t.rows[9].pc = 1ull << 33; /* beyond the 32-bit row addresses */
	assert_int_equal(unwind_store_put(m->store, &t, &table, &gen), -E2BIG);
	cfi_table_release(&t);
}

/* n rows with a rule each that no other row has: CFA = rsp + 8 * (first + i + 1). */
static void make_distinct_table(struct cfi_table *t, size_t n, size_t first)
{
	size_t i;

	make_table(t, n);
	for (i = 0; i < n; i++) {
		t->rows[i].rule.cfa_off = (int32_t)(8 * (first + i + 1));
		t->rows[i].rule.rbp_kind = SPANPROF_RBP_SAME;
		t->rows[i].rule.rbp_off = 0;
	}
}

/* The rule table is a fixed bound (SPANPROF_UNWIND_MAX_RULES): once it is full, rows with a new
 * rule are stored as "cannot unwind here" and counted (rules_full), and the table is still
 * stored. Rules stay interned when their table is dropped, so two tables of distinct rules fill
 * it: the "none" rule plus 12288, then 4095 more and 8193 counted. */
static void test_a_full_rule_table_is_counted_and_tables_still_stored(void **state)
{
	struct maps *m = need_maps(state);
	size_t rows = (size_t)NCHUNKS * SPANPROF_UNWIND_CHUNK_ROWS;
	struct unwind_store_stats st;
	struct cfi_table t;
	uint32_t table, gen;

	make_distinct_table(&t, rows, 0);
	assert_int_equal(unwind_store_put(m->store, &t, &table, &gen), 0);
	unwind_store_get_stats(m->store, &st);
	assert_int_equal(st.rules_used, rows + 1);
	assert_int_equal(st.rules_full, 0);
	unwind_store_drop(m->store, table);
	cfi_table_release(&t);
	make_distinct_table(&t, rows, rows);
	assert_int_equal(unwind_store_put(m->store, &t, &table, &gen), 0);
	unwind_store_get_stats(m->store, &st);
	assert_int_equal(st.rules_used, SPANPROF_UNWIND_MAX_RULES);
	assert_int_equal(st.rules_full, 2 * rows + 1 - SPANPROF_UNWIND_MAX_RULES);
	assert_int_equal(st.tables_used, 1);
	cfi_table_release(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_rows_land_in_padded_chunks_with_interned_rules,
						setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_chunk_budget_is_hard_and_drop_frees_and_invalidates, setup, teardown),
		cmocka_unit_test_setup_teardown(test_tables_that_can_never_fit_are_e2big, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_chunk_memory_follows_the_tables_stored, setup,
						teardown),
		cmocka_unit_test_setup_teardown(
			test_a_full_rule_table_is_counted_and_tables_still_stored, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
