// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Unit tests for load_budget: loads run until a round's time is spent, then wait (counted). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>
#include <cmocka.h>

#include "symbolize/load_budget.h"

static void busy_ms(int ms)
{
	struct timespec t0, t;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	do
		clock_gettime(CLOCK_MONOTONIC, &t);
	while ((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000 < ms);
}

/* Timing only in directions a loaded machine cannot break: a busy wait is at least as long as
 * asked, and a 10 s budget is not spent by a 1 ms load. */
static void test_load_budget_defers_loads_once_a_round_is_spent(void **state)
{
	struct load_budget b;

	(void)state;
	load_budget_init(&b, 10ull * 1000 * 1000 * 1000); /* 10 s */
	assert_true(load_budget_begin(&b));
	busy_ms(1);
	assert_false(load_budget_end(&b));
	assert_true(load_budget_begin(&b));
	assert_false(load_budget_end(&b));
	assert_int_equal(b.deferred, 0);

	load_budget_init(&b, 1000 * 1000); /* 1 ms */
	assert_true(load_budget_begin(&b));
	busy_ms(5);
	assert_true(load_budget_end(&b)); /* longer than a whole round: an overrun */
	assert_false(load_budget_begin(&b)); /* the round's budget is spent */
	assert_false(load_budget_begin(&b));
	assert_int_equal(b.deferred, 2);
	assert_int_equal(b.overruns, 1);
	load_budget_new_round(&b);
	assert_true(load_budget_begin(&b));
	load_budget_end(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_load_budget_defers_loads_once_a_round_is_spent),
	};

	return cmocka_run_group_tests_name("load_budget", tests, NULL, NULL);
}
