// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Unit tests for ruby_lines: insns_info entries and succinct index tables copied from Debian's
 * CRuby 3.1 (gen_ruby_line_vectors.rb) against the lines Ruby's own disassembly gives, and
 * truncated or hostile tables. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "interp/ruby_lines.h"
#include "ruby_line_vectors.h"

#define ENTRY_SIZE_3_1 12
#define NVECTORS (sizeof(ruby_line_vectors) / sizeof(ruby_line_vectors[0]))

static void test_real_tables(void **state)
{
	const struct ruby_line_vector *v;
	int j, got, blocks = 0;
	size_t i;

	(void)state;
	for (i = 0; i < NVECTORS; i++) {
		v = &ruby_line_vectors[i];
		assert_int_equal(ruby_succ_table_bytes(v->iseq_size),
				 v->succ_len ? v->succ_len : 48);
		for (j = 0; j < v->npairs; j++) {
			got = ruby_line_for((const uint8_t *)v->succ, v->succ_len,
					    (const uint8_t *)v->entries, ENTRY_SIZE_3_1,
					    v->nentries, v->pairs[j].pos);
			if (got != v->pairs[j].line)
				fail_msg("%s pos %u: line %d, Ruby says %d", v->name,
					 v->pairs[j].pos, got, v->pairs[j].line);
			blocks += v->pairs[j].pos >= RUBY_SUCC_IMM_POSITIONS;
		}
	}
	/* The vectors reach past the immediate part into the 512-position blocks. */
	assert_true(blocks > 512);
}

/* Positions the table does not reach give no line, never a read past its end. */
static void test_truncated_tables(void **state)
{
	const struct ruby_line_vector *v = &ruby_line_vectors[1];
	uint8_t buf[4096];
	size_t len;

	(void)state;
	assert_true(v->succ_len <= sizeof(buf));
	for (len = 0; len < v->succ_len; len++) {
		memcpy(buf, v->succ, len);
		assert_int_equal(ruby_line_for(buf, len, (const uint8_t *)v->entries,
					       ENTRY_SIZE_3_1, v->nentries, v->iseq_size - 1),
				 0);
	}
}

static void test_hostile_tables(void **state)
{
	/* Ranks pointing past the entries, no table, no entries, a one-entry iseq. */
	uint8_t table[48], entries[ENTRY_SIZE_3_1] = { 7 };

	(void)state;
	memset(table, 0xff, sizeof(table));
	assert_int_equal(ruby_line_for(table, sizeof(table), entries, ENTRY_SIZE_3_1, 1, 3), 7);
	assert_int_equal(ruby_line_for(table, sizeof(table), entries, ENTRY_SIZE_3_1, 2, 3), 0);
	assert_int_equal(ruby_line_for(NULL, 0, entries, ENTRY_SIZE_3_1, 2, 3), 0);
	assert_int_equal(ruby_line_for(table, sizeof(table), NULL, ENTRY_SIZE_3_1, 2, 3), 0);
	assert_int_equal(ruby_line_for(table, sizeof(table), entries, ENTRY_SIZE_3_1, 0, 3), 0);
	assert_int_equal(ruby_succ_lookup(table, sizeof(table), 100000), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_real_tables),
		cmocka_unit_test(test_truncated_tables),
		cmocka_unit_test(test_hostile_tables),
	};

	return cmocka_run_group_tests_name("ruby_lines", tests, NULL, NULL);
}
