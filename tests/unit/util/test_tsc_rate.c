// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Unit tests for the time stamp counter's rate: the rate from two points, its conversion back
 * to ns on both sides of the point, the refusals (no ticks, time going back), and on x86-64 a
 * measured rate that converts a later counter reading to within a few us of the clock. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include <cmocka.h>

#include "util/clock.h"
#include "util/tsc_rate.h"

#define SHIFT 32

static void rate_of_a_known_counter(void **state)
{
	/* 2.5 ticks per ns: 0.4 ns per tick. */
	struct tsc_point a = { .tsc = 1000000, .ns = 5000000 };
	struct tsc_point b = { .tsc = 1000000 + 2500000000ull, .ns = 5000000 + 1000000000ull };
	uint64_t mult = tsc_rate_mult(&a, &b, SHIFT);

	(void)state;
	assert_true(mult > 0);
	/* 0.4 * 2^32, rounded. */
	assert_int_equal(mult, 1717986918ull);
	assert_int_equal(tsc_rate_ns(&a, mult, SHIFT, a.tsc), a.ns);
	assert_int_equal(tsc_rate_ns(&a, mult, SHIFT, a.tsc + 2500), a.ns + 1000 - 1);
	assert_int_equal(tsc_rate_ns(&a, mult, SHIFT, b.tsc), b.ns - 1);
	/* Before the point: counted back. */
	assert_true(tsc_rate_ns(&a, mult, SHIFT, a.tsc - 25000) <= a.ns - 10000 + 1);
	assert_true(tsc_rate_ns(&a, mult, SHIFT, a.tsc - 25000) >= a.ns - 10000 - 1);
}

static void no_rate_without_ticks_or_time(void **state)
{
	struct tsc_point a = { .tsc = 1000, .ns = 1000 };
	struct tsc_point same = a, back = { .tsc = 900, .ns = 2000 },
			 stopped = { .tsc = 2000, .ns = 1000 };

	(void)state;
	assert_int_equal(tsc_rate_mult(&a, &same, SHIFT), 0);
	assert_int_equal(tsc_rate_mult(&a, &back, SHIFT), 0);
	assert_int_equal(tsc_rate_mult(&a, &stopped, SHIFT), 0);
}

static void measured_rate_follows_the_clock(void **state)
{
	struct timespec pause = { .tv_nsec = 20 * NS_PER_MS };
	struct tsc_point a, b, c;
	uint64_t mult, ns;
	int64_t off;

	(void)state;
	if (tsc_point_read(&a) == -EOPNOTSUPP)
		skip(); /* no time stamp counter on this architecture: the hook never uses one */
	nanosleep(&pause, NULL);
	assert_int_equal(tsc_point_read(&b), 0);
	mult = tsc_rate_mult(&a, &b, SHIFT);
	assert_true(mult > 0);
	nanosleep(&pause, NULL);
	assert_int_equal(tsc_point_read(&c), 0);
	ns = tsc_rate_ns(&b, mult, SHIFT, c.tsc);
	off = (int64_t)(ns - c.ns);
	/* A 20 ms rate carried 20 ms on: the points' own error (tens of ns each, more when the
	 * reading thread is preempted between its reads on a loaded machine) dominates. */
	assert_true(off < 20000 && off > -20000);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(rate_of_a_known_counter),
		cmocka_unit_test(no_rate_without_ticks_or_time),
		cmocka_unit_test(measured_rate_follows_the_clock),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
