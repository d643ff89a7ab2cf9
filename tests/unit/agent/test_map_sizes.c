// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Unit tests for map_sizes: per-window map sizes follow CPUs x frequency x drain period, stay
 * powers of two within their bounds, and sizes given as options win. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "agent/map_sizes.h"

static void test_map_sizes_small_node(void **state)
{
	struct map_demand d = { .ncpus = 2, .frequency = 100, .drain_ms = 1000 };
	struct map_sizes s = map_sizes_compute(&d);

	(void)state;
	assert_int_equal(map_sizes_period_samples(&d), 200);
	/* 16 periods of 200 samples: 3200, the next power of two; two stacks per sample. */
	assert_int_equal(s.counts, 4096);
	assert_int_equal(s.stacks, 8192);
	d.frequency = 19;
	s = map_sizes_compute(&d);
	assert_int_equal(s.counts, MAP_SIZES_MIN_COUNTS);
	assert_int_equal(s.stacks, MAP_SIZES_MIN_STACKS);
}

static void test_map_sizes_grow_with_cpus_frequency_and_period(void **state)
{
	struct map_demand d = { .ncpus = 8, .frequency = 100, .drain_ms = 1000 };
	struct map_sizes s = map_sizes_compute(&d);

	(void)state;
	assert_int_equal(s.counts, 16384);
	assert_int_equal(s.stacks, 32768);
	d.ncpus = 4;
	d.drain_ms = 250; /* a shorter period holds fewer samples */
	s = map_sizes_compute(&d);
	assert_int_equal(s.counts, 2048);
	assert_int_equal(s.stacks, 4096);
	d.drain_ms = 100;
	s = map_sizes_compute(&d);
	assert_int_equal(s.counts, MAP_SIZES_MIN_COUNTS);
	assert_int_equal(s.stacks, MAP_SIZES_MIN_STACKS);
}

static void test_map_sizes_are_capped(void **state)
{
	struct map_demand d = { .ncpus = 4096, .frequency = 1000, .drain_ms = 10000 };
	struct map_sizes s = map_sizes_compute(&d);

	(void)state;
	assert_int_equal(s.counts, MAP_SIZES_AUTO_MAX_COUNTS);
	assert_int_equal(s.stacks, MAP_SIZES_AUTO_MAX_STACKS);
}

static void test_map_sizes_options_win(void **state)
{
	struct map_demand d = {
		.ncpus = 64,
		.frequency = 100,
		.drain_ms = 1000,
		.sample_entries = 300,
		.stack_entries = 100000,
	};
	struct map_sizes s = map_sizes_compute(&d);

	(void)state;
	assert_int_equal(s.counts, 300);
	assert_int_equal(s.stacks, 100000);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_map_sizes_small_node),
		cmocka_unit_test(test_map_sizes_grow_with_cpus_frequency_and_period),
		cmocka_unit_test(test_map_sizes_are_capped),
		cmocka_unit_test(test_map_sizes_options_win),
	};

	return cmocka_run_group_tests_name("map_sizes", tests, NULL, NULL);
}
