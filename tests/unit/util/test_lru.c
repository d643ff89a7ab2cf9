// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Unit tests for lru: eviction order, recency after touch, two-word keys, unlinking and a table
 * far smaller than the entries it holds. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "util/lru.h"

#define NENTRIES 64

struct item {
	struct lru_node node;
	int id;
};

struct fixture {
	struct lru lru;
	struct item items[NENTRIES];
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	if (!f || lru_init(&f->lru, 8)) {
		free(f);
		return -1;
	}
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	lru_release(&f->lru);
	free(f);
	return 0;
}

/* Links items[0..n) in that order, item i keyed (i, 1000 + i). */
static void add_items(struct fixture *f, int n)
{
	int i;

	for (i = 0; i < n; i++) {
		f->items[i].id = i;
		f->items[i].node.k1 = i;
		f->items[i].node.k2 = 1000 + i;
		lru_add(&f->lru, &f->items[i].node);
	}
}

/* The ids from oldest to newest, into ids; returns how many. */
static int eviction_order(const struct fixture *f, int *ids, int max)
{
	const struct lru_node *n;
	int count = 0;

	for (n = lru_oldest(&f->lru); n && count < max; n = lru_newer(&f->lru, n))
		ids[count++] = lru_entry(n, struct item, node)->id;
	return count;
}

static void test_lru_empty_has_no_oldest(void **state)
{
	struct fixture *f = *state;

	assert_null(lru_oldest(&f->lru));
	assert_null(lru_find(&f->lru, 0, 1000));
	assert_int_equal(f->lru.count, 0);
}

static void test_lru_evicts_in_insertion_order(void **state)
{
	struct fixture *f = *state;
	int ids[NENTRIES], i;

	add_items(f, 5);
	assert_int_equal(f->lru.count, 5);
	assert_int_equal(eviction_order(f, ids, NENTRIES), 5);
	for (i = 0; i < 5; i++)
		assert_int_equal(ids[i], i);
}

static void test_lru_touch_makes_entry_newest(void **state)
{
	struct fixture *f = *state;
	static const int want[] = { 0, 2, 3, 1 };
	int ids[NENTRIES], i;

	add_items(f, 4);
	lru_touch(&f->lru, &f->items[1].node);
	assert_int_equal(eviction_order(f, ids, NENTRIES), 4);
	for (i = 0; i < 4; i++)
		assert_int_equal(ids[i], want[i]);
	/* touching the oldest moves the next one up */
	lru_touch(&f->lru, &f->items[0].node);
	assert_ptr_equal(lru_oldest(&f->lru), &f->items[2].node);
}

static void test_lru_find_matches_both_key_words(void **state)
{
	struct fixture *f = *state;

	add_items(f, 10);
	assert_ptr_equal(lru_find(&f->lru, 7, 1007), &f->items[7].node);
	assert_null(lru_find(&f->lru, 7, 1008)); /* right k1, wrong k2 */
	assert_null(lru_find(&f->lru, 8, 1007)); /* wrong k1, right k2 */
	assert_null(lru_find(&f->lru, 1007, 7)); /* words swapped */
}

static void test_lru_find_does_not_change_recency(void **state)
{
	struct fixture *f = *state;

	add_items(f, 3);
	assert_non_null(lru_find(&f->lru, 0, 1000));
	assert_ptr_equal(lru_oldest(&f->lru), &f->items[0].node);
}

static void test_lru_del_unlinks_from_order_and_hash(void **state)
{
	struct fixture *f = *state;
	static const int want[] = { 0, 1, 3, 4 };
	int ids[NENTRIES], i;

	add_items(f, 5);
	lru_del(&f->lru, &f->items[2].node);
	assert_int_equal(f->lru.count, 4);
	assert_null(lru_find(&f->lru, 2, 1002));
	assert_int_equal(eviction_order(f, ids, NENTRIES), 4);
	for (i = 0; i < 4; i++)
		assert_int_equal(ids[i], want[i]);
	/* evicting as a cache does: always the oldest */
	lru_del(&f->lru, lru_oldest(&f->lru));
	assert_ptr_equal(lru_oldest(&f->lru), &f->items[1].node);
	assert_null(lru_find(&f->lru, 0, 1000));
}

static void test_lru_holds_more_entries_than_buckets(void **state)
{
	struct fixture *f = *state;
	int i;

	/* lru_init(8) sized 16 buckets: 64 entries chain, and every one is still found. */
	assert_true(f->lru.nbuckets < NENTRIES);
	add_items(f, NENTRIES);
	for (i = 0; i < NENTRIES; i++)
		assert_ptr_equal(lru_find(&f->lru, i, 1000 + i), &f->items[i].node);
	for (i = 0; i < NENTRIES; i += 2)
		lru_del(&f->lru, &f->items[i].node);
	assert_int_equal(f->lru.count, NENTRIES / 2);
	for (i = 0; i < NENTRIES; i++)
		assert_true((lru_find(&f->lru, i, 1000 + i) != NULL) == (i % 2 == 1));
	assert_ptr_equal(lru_oldest(&f->lru), &f->items[1].node);
}

static void test_lru_init_bounds_the_table(void **state)
{
	struct lru big;

	(void)state;
	assert_int_equal(lru_init(&big, SIZE_MAX / 2), 0);
	assert_true(big.nbuckets <= (1u << 16));
	assert_int_equal(big.nbuckets & (big.nbuckets - 1), 0); /* a power of two */
	lru_release(&big);
	lru_release(NULL);
}

#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_lru_empty_has_no_oldest),
		T(test_lru_evicts_in_insertion_order),
		T(test_lru_touch_makes_entry_newest),
		T(test_lru_find_matches_both_key_words),
		T(test_lru_find_does_not_change_recency),
		T(test_lru_del_unlinks_from_order_and_hash),
		T(test_lru_holds_more_entries_than_buckets),
		cmocka_unit_test(test_lru_init_bounds_the_table),
	};

	return cmocka_run_group_tests_name("lru", tests, NULL, NULL);
}
