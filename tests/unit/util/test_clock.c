// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Unit tests for the clock helper: the ns reads agree with clock_gettime() on each clock, the
 * unit constants share one unsigned type, and timed-wait deadlines carry into seconds. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include <cmocka.h>

#include "util/clock.h"

static uint64_t ts_ns(const struct timespec *ts)
{
	return (uint64_t)ts->tv_sec * 1000000000ull + (uint64_t)ts->tv_nsec;
}

/* A read taken between two clock_gettime() calls on the same clock lies between them. */
static void assert_between_reads(clockid_t clock, uint64_t (*read)(void))
{
	struct timespec before, after;
	uint64_t t;

	assert_int_equal(clock_gettime(clock, &before), 0);
	t = read();
	assert_int_equal(clock_gettime(clock, &after), 0);
	assert_true(t >= ts_ns(&before));
	assert_true(t <= ts_ns(&after));
}

static void test_clock_mono_ns_reads_the_monotonic_clock(void **state)
{
	(void)state;
	assert_between_reads(CLOCK_MONOTONIC, clock_mono_ns);
}

static void test_clock_real_ns_reads_unix_time(void **state)
{
	(void)state;
	assert_between_reads(CLOCK_REALTIME, clock_real_ns);
	/* After 2020-01-01: a Unix time, not an uptime. */
	assert_true(clock_real_ns() > 1577836800ull * NS_PER_S);
}

static void test_clock_ns_gives_zero_for_a_bad_clock(void **state)
{
	(void)state;
	assert_int_equal(clock_ns((clockid_t)-1000), 0);
}

static void test_clock_units_are_unsigned_64_bit(void **state)
{
	(void)state;
	assert_int_equal(sizeof(NS_PER_US), 8);
	assert_int_equal(sizeof(NS_PER_MS), 8);
	assert_int_equal(sizeof(NS_PER_S), 8);
	assert_true(NS_PER_MS * 1000 == NS_PER_S && NS_PER_US * 1000 == NS_PER_MS);
	/* Unsigned: a negative int promoted against them wraps rather than going below zero. */
	assert_true(-1 * NS_PER_MS > NS_PER_S);
}

static void test_clock_after_ms_carries_into_seconds(void **state)
{
	struct timespec t;
	uint64_t before, after;
	unsigned int ms;

	(void)state;
	for (ms = 0; ms < 2600; ms += 433) {
		before = clock_mono_ns();
		t = clock_after_ms(CLOCK_MONOTONIC, ms);
		after = clock_mono_ns();
		assert_true(t.tv_nsec >= 0 && t.tv_nsec < 1000000000L);
		assert_true(ts_ns(&t) >= before + ms * NS_PER_MS);
		assert_true(ts_ns(&t) <= after + ms * NS_PER_MS);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_clock_mono_ns_reads_the_monotonic_clock),
		cmocka_unit_test(test_clock_real_ns_reads_unix_time),
		cmocka_unit_test(test_clock_ns_gives_zero_for_a_bad_clock),
		cmocka_unit_test(test_clock_units_are_unsigned_64_bit),
		cmocka_unit_test(test_clock_after_ms_carries_into_seconds),
	};

	return cmocka_run_group_tests_name("clock", tests, NULL, NULL);
}
