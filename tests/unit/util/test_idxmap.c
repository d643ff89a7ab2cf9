// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Unit tests for idxmap: lookups through caller-owned keys, collisions, growth. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "util/idxmap.h"

struct key_ctx {
	const uint64_t *keys;
	uint64_t want;
};

static int key_eq(const void *ctx, uint32_t pos)
{
	const struct key_ctx *k = ctx;

	return k->keys[pos] == k->want;
}

static void test_idxmap_finds_what_was_inserted_across_growth(void **state)
{
	enum { N = 100000 };
	uint64_t *keys = malloc(N * sizeof(*keys));
	struct key_ctx ctx = { .keys = keys };
	struct idxmap m;
	uint32_t pos, i;

	(void)state;
	assert_non_null(keys);
	idxmap_init(&m);
	assert_false(idxmap_find(&m, 1, key_eq, &ctx, &pos)); /* empty map */
	for (i = 0; i < N; i++) {
		keys[i] = (uint64_t)i * 2654435761u;
		assert_int_equal(idxmap_insert(&m, idxmap_hash_u64(IDXMAP_HASH_INIT, keys[i]), i),
				 0);
	}
	assert_int_equal(m.count, N);
	assert_true(m.mask + 1 >= 2 * N);
	for (i = 0; i < N; i++) {
		uint64_t h = idxmap_hash_u64(IDXMAP_HASH_INIT, keys[i]);

		ctx.want = keys[i];
		assert_true(idxmap_find(&m, h, key_eq, &ctx, &pos));
		assert_int_equal(pos, i);
	}
	ctx.want = 7; /* never inserted */
	assert_false(idxmap_find(&m, idxmap_hash_u64(IDXMAP_HASH_INIT, 7), key_eq, &ctx, &pos));
	idxmap_release(&m);
	idxmap_release(&m); /* safe twice */
	free(keys);
}

/* Equal hashes for different keys: eq decides. */
static void test_idxmap_separates_colliding_hashes(void **state)
{
	const uint64_t keys[] = { 10, 20, 30 };
	struct key_ctx ctx = { .keys = keys };
	struct idxmap m;
	uint32_t pos, i;

	(void)state;
	idxmap_init(&m);
	for (i = 0; i < 3; i++)
		assert_int_equal(idxmap_insert(&m, 42, i), 0);
	for (i = 0; i < 3; i++) {
		ctx.want = keys[i];
		assert_true(idxmap_find(&m, 42, key_eq, &ctx, &pos));
		assert_int_equal(pos, i);
	}
	assert_int_equal(idxmap_insert(&m, 1, UINT32_MAX), -E2BIG);
	idxmap_release(&m);
}

static void test_idxmap_hash_depends_on_every_byte(void **state)
{
	(void)state;
	assert_int_not_equal(idxmap_hash(IDXMAP_HASH_INIT, "ab", 2),
			     idxmap_hash(IDXMAP_HASH_INIT, "ba", 2));
	assert_int_not_equal(idxmap_hash_u64(IDXMAP_HASH_INIT, 1),
			     idxmap_hash_u64(IDXMAP_HASH_INIT, 1ULL << 56));
	assert_int_equal(idxmap_hash(IDXMAP_HASH_INIT, "", 0), IDXMAP_HASH_INIT);
}

/* The index takes a slot from the hash's low bits: keys that differ only in a word's top byte
 * must still spread over them. */
static void test_idxmap_hash_spreads_high_bytes_into_low_bits(void **state)
{
	unsigned char seen[256] = { 0 };
	char key[17] = "0123456789abcdef";
	int i, distinct = 0;

	(void)state;
	for (i = 0; i < 64; i++) {
		key[15] = (char)(i + 64);
		seen[idxmap_hash(IDXMAP_HASH_INIT, key, 16) & 0xff] = 1;
	}
	for (i = 0; i < 256; i++)
		distinct += seen[i];
	assert_true(distinct >= 48);
	memset(seen, 0, sizeof(seen));
	for (i = 0, distinct = 0; i < 64; i++)
		seen[idxmap_hash_u64(IDXMAP_HASH_INIT, (uint64_t)i << 56) & 0xff] = 1;
	for (i = 0; i < 256; i++)
		distinct += seen[i];
	assert_true(distinct >= 48);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_idxmap_finds_what_was_inserted_across_growth),
		cmocka_unit_test(test_idxmap_separates_colliding_hashes),
		cmocka_unit_test(test_idxmap_hash_depends_on_every_byte),
		cmocka_unit_test(test_idxmap_hash_spreads_high_bytes_into_low_bits),
	};

	return cmocka_run_group_tests_name("idxmap", tests, NULL, NULL);
}
