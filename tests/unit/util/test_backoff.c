// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Unit tests for the exponential backoff: delays double within their jitter bounds, stop at the
 * maximum, spread out between agents, and start over after a success. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "util/backoff.h"

static void test_backoff_doubles_within_jitter_bounds(void **state)
{
	unsigned int n, ceiling = 100, d;
	struct backoff b;

	(void)state;
	backoff_init(&b, 100, 100000, 42);
	for (n = 0; n < 10; n++, ceiling *= 2) {
		assert_int_equal(backoff_ceiling_ms(&b), ceiling);
		d = backoff_next_ms(&b);
		assert_true(d >= ceiling / 2 && d <= ceiling);
	}
}

static void test_backoff_caps_at_max_forever(void **state)
{
	struct backoff b;
	unsigned int d;
	int i;

	(void)state;
	backoff_init(&b, 1000, 60000, 7);
	for (i = 0; i < 100000; i++) {
		d = backoff_next_ms(&b);
		assert_true(d <= 60000);
		if (i >= 6) /* 1000 * 2^6 > 60000: saturated */
			assert_true(d >= 30000);
	}
	assert_int_equal(backoff_ceiling_ms(&b), 60000);
}

static void test_backoff_jitter_spreads_agents(void **state)
{
	unsigned int d[200], distinct = 0;
	struct backoff b;
	int i, j;

	(void)state;
	for (i = 0; i < 200; i++) {
		backoff_init(&b, 1000, 60000, 0); /* seeded from getrandom() */
		backoff_next_ms(&b);
		backoff_next_ms(&b);
		d[i] = backoff_next_ms(&b); /* third failure: within [2000, 4000] */
		assert_true(d[i] >= 2000 && d[i] <= 4000);
	}
	for (i = 0; i < 200; i++) {
		for (j = 0; j < i && d[j] != d[i]; j++)
			;
		distinct += j == i;
	}
	assert_true(distinct > 150); /* 200 draws from 2001 values */
}

static void test_backoff_same_seed_replays(void **state)
{
	struct backoff a, b;
	int i;

	(void)state;
	backoff_init(&a, 10, 5000, 1234);
	backoff_init(&b, 10, 5000, 1234);
	for (i = 0; i < 50; i++)
		assert_int_equal(backoff_next_ms(&a), backoff_next_ms(&b));
}

static void test_backoff_reset_starts_over(void **state)
{
	struct backoff b;
	unsigned int d;
	int i;

	(void)state;
	backoff_init(&b, 50, 10000, 99);
	for (i = 0; i < 8; i++)
		backoff_next_ms(&b);
	assert_int_equal(backoff_ceiling_ms(&b), 10000);
	backoff_reset(&b);
	assert_int_equal(backoff_ceiling_ms(&b), 50);
	d = backoff_next_ms(&b);
	assert_true(d >= 25 && d <= 50);
}

static void test_backoff_clamps_bad_limits(void **state)
{
	struct backoff b;

	(void)state;
	backoff_init(&b, 0, 0, 5);
	assert_int_equal(backoff_ceiling_ms(&b), 1);
	assert_true(backoff_next_ms(&b) <= 1);
	backoff_init(&b, 500, 100, 5); /* max below initial: initial wins */
	assert_int_equal(backoff_ceiling_ms(&b), 500);
	backoff_next_ms(&b);
	assert_int_equal(backoff_ceiling_ms(&b), 500);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_backoff_doubles_within_jitter_bounds),
		cmocka_unit_test(test_backoff_caps_at_max_forever),
		cmocka_unit_test(test_backoff_jitter_spreads_agents),
		cmocka_unit_test(test_backoff_same_seed_replays),
		cmocka_unit_test(test_backoff_reset_starts_over),
		cmocka_unit_test(test_backoff_clamps_bad_limits),
	};

	return cmocka_run_group_tests_name("backoff", tests, NULL, NULL);
}
