// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Unit tests for interp_budget with two fake caches (a list of (uid, bytes) entries each, oldest
 * first): what is charged never exceeds the budget, an eviction gives its bytes back, a user at
 * its share evicts only its own entries, a newcomer takes room from the user holding the most,
 * and an entry larger than its user's share is refused without evicting anything. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "interp/interp_budget.h"

#define MAX_FAKE 256

struct fake_cache {
	struct interp_budget *b;
	enum interp_cache_kind kind;
	size_t n;
	uid_t uid[MAX_FAKE];
	size_t bytes[MAX_FAKE];
};

static void fake_drop(struct fake_cache *c, size_t i)
{
	interp_budget_give(c->b, c->kind, c->uid[i], c->bytes[i]);
	memmove(&c->uid[i], &c->uid[i + 1], (c->n - i - 1) * sizeof(c->uid[0]));
	memmove(&c->bytes[i], &c->bytes[i + 1], (c->n - i - 1) * sizeof(c->bytes[0]));
	c->n--;
}

static int fake_evict(void *cache, uid_t uid)
{
	struct fake_cache *c = cache;
	size_t i;

	for (i = 0; i < c->n; i++)
		if (c->uid[i] == uid) {
			fake_drop(c, i);
			return 0;
		}
	return -ENOENT;
}

/* Inserts as a cache does: charged first, kept only when the budget took it. */
static int fake_insert(struct fake_cache *c, uid_t uid, size_t bytes)
{
	int err = interp_budget_take(c->b, c->kind, uid, bytes);

	if (err)
		return err;
	assert_true(c->n < MAX_FAKE);
	c->uid[c->n] = uid;
	c->bytes[c->n++] = bytes;
	return 0;
}

static size_t held_by(const struct fake_cache *c, uid_t uid)
{
	size_t i, sum = 0;

	for (i = 0; i < c->n; i++)
		sum += c->uid[i] == uid ? c->bytes[i] : 0;
	return sum;
}

static struct interp_budget_stats stats_of(const struct interp_budget *b)
{
	struct interp_budget_stats st;

	interp_budget_get_stats(b, &st);
	return st;
}

/* Fixed bytes of each fake cache; entries are 1000 bytes. */
#define FIXED 4096
#define ENTRY 1000

static struct interp_budget *budget_with(uint64_t room_after_fixed, struct fake_cache *py,
					 struct fake_cache *rb)
{
	struct interp_budget *probe = interp_budget_new(1 << 20);
	uint64_t own = stats_of(probe).own_bytes;
	struct interp_budget *b;

	interp_budget_free(probe);
	b = interp_budget_new(own + 2 * FIXED + room_after_fixed);
	assert_non_null(b);
	*py = (struct fake_cache){ .b = b, .kind = INTERP_CACHE_PYTHON };
	*rb = (struct fake_cache){ .b = b, .kind = INTERP_CACHE_RUBY };
	assert_int_equal(interp_budget_attach(b, INTERP_CACHE_PYTHON, py, fake_evict, FIXED), 0);
	assert_int_equal(interp_budget_attach(b, INTERP_CACHE_RUBY, rb, fake_evict, FIXED), 0);
	return b;
}

/* held is exactly the budget's own bytes, the fixed bytes and the entries: never more than max. */
static void assert_accounted(const struct interp_budget *b, const struct fake_cache *py,
			     const struct fake_cache *rb)
{
	struct interp_budget_stats st = stats_of(b);
	size_t i, entries = 0;

	for (i = 0; i < py->n; i++)
		entries += py->bytes[i];
	for (i = 0; i < rb->n; i++)
		entries += rb->bytes[i];
	assert_int_equal(st.held, st.own_bytes + 2 * FIXED + entries);
	assert_true(st.held <= st.max_bytes);
}

static void test_under_budget_charges_exactly(void **state)
{
	struct fake_cache py, rb;
	struct interp_budget *b = budget_with(100 * ENTRY, &py, &rb);
	struct interp_budget_stats before = stats_of(b), st;
	int i;

	(void)state;
	for (i = 0; i < 10; i++) {
		assert_int_equal(fake_insert(&py, 1000, ENTRY), 0);
		assert_accounted(b, &py, &rb);
	}
	st = stats_of(b);
	assert_int_equal(st.users, 1);
	assert_int_equal(st.evictions, 0);
	assert_int_equal(st.refused, 0);
	/* dropping gives everything back, the user's record too */
	while (py.n)
		fake_drop(&py, 0);
	st = stats_of(b);
	assert_int_equal(st.held, before.held);
	assert_int_equal(st.own_bytes, before.own_bytes);
	assert_int_equal(st.users, 0);
	interp_budget_detach(b, INTERP_CACHE_PYTHON, FIXED);
	interp_budget_detach(b, INTERP_CACHE_RUBY, FIXED);
	assert_int_equal(stats_of(b).held, stats_of(b).own_bytes);
	interp_budget_free(b);
}

/* One user over the budget: its least recently used entries go, one per entry that needs room. */
static void test_over_budget_evicts_oldest(void **state)
{
	struct fake_cache py, rb;
	struct interp_budget *b = budget_with(5 * ENTRY + 500, &py, &rb);
	int i;

	(void)state;
	for (i = 0; i < 20; i++) {
		assert_int_equal(fake_insert(&py, 1000, ENTRY + i), 0);
		assert_accounted(b, &py, &rb);
	}
	/* the newest entries are the ones kept */
	assert_true(py.n >= 4 && py.n <= 5);
	assert_int_equal(py.bytes[py.n - 1], ENTRY + 19);
	assert_int_equal(py.bytes[0], ENTRY + 20 - py.n);
	assert_int_equal(stats_of(b).evictions, 20 - py.n);
	assert_int_equal(stats_of(b).refused, 0);
	interp_budget_free(b);
}

/* A user that filled the budget cannot keep a newcomer out: the newcomer evicts the top holder's
 * entries (from the other cache too) up to its share, then only its own. */
static void test_newcomer_takes_its_share_from_the_top_holder(void **state)
{
	struct fake_cache py, rb;
	struct interp_budget *b = budget_with(10 * ENTRY + 800, &py, &rb);
	int i;

	(void)state;
	for (i = 0; i < 30; i++)
		assert_int_equal(fake_insert(&py, 1000, ENTRY), 0);
	assert_int_equal(held_by(&py, 1000), 10 * ENTRY);
	/* uid 2000's Ruby entries take room from uid 1000's Python entries */
	for (i = 0; i < 30; i++) {
		assert_int_equal(fake_insert(&rb, 2000, ENTRY), 0);
		assert_accounted(b, &py, &rb);
	}
	/* both end at their share (half the room, less one record each) */
	assert_int_equal(held_by(&rb, 2000), 5 * ENTRY);
	assert_int_equal(held_by(&py, 1000), 5 * ENTRY);
	/* uid 1000 at its share evicts its own, not uid 2000's */
	for (i = 0; i < 5; i++)
		assert_int_equal(fake_insert(&py, 1000, ENTRY), 0);
	assert_int_equal(held_by(&rb, 2000), 5 * ENTRY);
	assert_int_equal(stats_of(b).users, 2);
	assert_int_equal(stats_of(b).refused, 0);
	interp_budget_free(b);
}

/* An entry larger than its user's share is refused and evicts nothing. */
static void test_entry_over_share_refused(void **state)
{
	struct fake_cache py, rb;
	struct interp_budget *b = budget_with(10 * ENTRY, &py, &rb);
	struct interp_budget_stats st;
	int i;

	(void)state;
	for (i = 0; i < 4; i++)
		assert_int_equal(fake_insert(&py, 1000, ENTRY), 0);
	/* alone: larger than the whole room */
	assert_int_equal(fake_insert(&py, 1000, 11 * ENTRY), -ENOSPC);
	assert_int_equal(py.n, 4);
	/* beside uid 1000: larger than half the room */
	assert_int_equal(fake_insert(&rb, 2000, 6 * ENTRY), -EDQUOT);
	assert_int_equal(py.n, 4);
	st = stats_of(b);
	assert_int_equal(st.refused, 2);
	assert_int_equal(st.fair_refused, 1);
	assert_int_equal(st.evictions, 0);
	assert_int_equal(st.users, 1); /* a refused user holds no record */
	assert_accounted(b, &py, &rb);
	interp_budget_free(b);
}

static void test_fixed_bytes_over_budget_refused(void **state)
{
	struct interp_budget *b = interp_budget_new(8192);
	struct fake_cache c = { .b = b };

	(void)state;
	assert_non_null(b);
	assert_int_equal(interp_budget_attach(b, INTERP_CACHE_PYTHON, &c, fake_evict, 8192),
			 -ENOSPC);
	assert_true(stats_of(b).held <= 8192);
	interp_budget_free(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_under_budget_charges_exactly),
		cmocka_unit_test(test_over_budget_evicts_oldest),
		cmocka_unit_test(test_newcomer_takes_its_share_from_the_top_holder),
		cmocka_unit_test(test_entry_over_share_refused),
		cmocka_unit_test(test_fixed_bytes_over_budget_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
