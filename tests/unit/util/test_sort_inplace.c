// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Unit tests for sort_inplace: the same order as qsort() for records of odd sizes, with many
 * equal keys, already sorted, reversed, and for the sizes where a heap has one or two records. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "util/sort_inplace.h"

/* 24 bytes, a CFI row's size; the tag is not part of the key. */
struct rec {
	uint64_t key;
	uint32_t minor;
	uint32_t tag;
	uint64_t pad;
};

/* Larger than the swap's buffer, so a swap takes several steps. */
struct big {
	uint32_t key;
	unsigned char body[93];
};

static int cmp_rec(const void *pa, const void *pb)
{
	const struct rec *a = pa, *b = pb;

	if (a->key != b->key)
		return a->key < b->key ? -1 : 1;
	return a->minor < b->minor ? -1 : a->minor > b->minor;
}

static int cmp_big(const void *pa, const void *pb)
{
	const struct big *a = pa, *b = pb;

	return a->key < b->key ? -1 : a->key > b->key;
}

/* Sorted by key, and the same multiset of records as the input (each tag once). */
static void check_sorted_rec(const struct rec *got, size_t n)
{
	unsigned char *seen = calloc(n ? n : 1, 1);
	size_t i;

	assert_non_null(seen);
	for (i = 0; i < n; i++) {
		if (i)
			assert_true(cmp_rec(&got[i - 1], &got[i]) <= 0);
		assert_true(got[i].tag < n);
		assert_false(seen[got[i].tag]);
		seen[got[i].tag] = 1;
		assert_int_equal(got[i].pad, (uint64_t)got[i].tag * 7);
	}
	free(seen);
}

static struct rec *make_recs(size_t n, unsigned int seed, uint64_t key_range)
{
	struct rec *r = calloc(n ? n : 1, sizeof(*r));
	size_t i;

	assert_non_null(r);
	srand(seed);
	for (i = 0; i < n; i++)
		r[i] = (struct rec){ .key = (uint64_t)rand() % key_range,
				     .minor = (uint32_t)rand() % 3,
				     .tag = (uint32_t)i,
				     .pad = (uint64_t)i * 7 };
	return r;
}

static void test_random_matches_qsort(void **state)
{
	static const size_t sizes[] = { 0, 1, 2, 3, 4, 5, 7, 8, 100, 1000, 4097 };
	size_t s, i;

	(void)state;
	for (s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
		struct rec *a = make_recs(sizes[s], (unsigned int)s + 1, 1u << 20);
		struct rec *b = make_recs(sizes[s], (unsigned int)s + 1, 1u << 20);

		sort_inplace(a, sizes[s], sizeof(*a), cmp_rec);
		qsort(b, sizes[s], sizeof(*b), cmp_rec);
		check_sorted_rec(a, sizes[s]);
		for (i = 0; i < sizes[s]; i++)
			assert_int_equal(cmp_rec(&a[i], &b[i]), 0);
		free(a);
		free(b);
	}
}

static void test_many_equal_keys(void **state)
{
	struct rec *a = make_recs(5000, 42, 4);

	(void)state;
	sort_inplace(a, 5000, sizeof(*a), cmp_rec);
	check_sorted_rec(a, 5000);
	free(a);
}

static void test_sorted_and_reversed(void **state)
{
	struct rec *a = make_recs(3000, 9, 1u << 30);
	size_t i;

	(void)state;
	qsort(a, 3000, sizeof(*a), cmp_rec);
	sort_inplace(a, 3000, sizeof(*a), cmp_rec); /* already in order: left as it is */
	check_sorted_rec(a, 3000);
	for (i = 0; i < 1500; i++) {
		struct rec t = a[i];

		a[i] = a[2999 - i];
		a[2999 - i] = t;
	}
	sort_inplace(a, 3000, sizeof(*a), cmp_rec);
	check_sorted_rec(a, 3000);
	free(a);
}

static void test_records_larger_than_the_swap_buffer(void **state)
{
	struct big v[300];
	size_t i, j;

	(void)state;
	srand(7);
	for (i = 0; i < 300; i++) {
		v[i].key = (uint32_t)rand() % 1000;
		memset(v[i].body, (int)(v[i].key & 0xff), sizeof(v[i].body));
	}
	sort_inplace(v, 300, sizeof(v[0]), cmp_big);
	for (i = 0; i < 300; i++) {
		if (i)
			assert_true(v[i - 1].key <= v[i].key);
		for (j = 0; j < sizeof(v[i].body); j++)
			assert_int_equal(v[i].body[j], v[i].key & 0xff);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_random_matches_qsort),
		cmocka_unit_test(test_many_equal_keys),
		cmocka_unit_test(test_sorted_and_reversed),
		cmocka_unit_test(test_records_larger_than_the_swap_buffer),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
