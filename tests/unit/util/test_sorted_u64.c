// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Unit tests for sorted_u64: the upper bound over records sorted by a uint64_t field, checked
 * against a linear count for every value around the keys, with equal keys, at both ends and in
 * an empty array. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "util/sorted_u64.h"

struct rec {
	uint32_t tag;
	uint64_t key;
	uint8_t pad[5];
};

static size_t linear(const struct rec *r, size_t n, uint64_t v)
{
	size_t i, c = 0;

	for (i = 0; i < n; i++)
		c += r[i].key <= v;
	return c;
}

static void test_matches_a_linear_count(void **state)
{
	static const struct rec r[] = { { 1, 10, { 0 } }, { 2, 20, { 0 } }, { 3, 20, { 0 } },
					{ 4, 20, { 0 } }, { 5, 35, { 0 } }, { 6, 40, { 0 } } };
	size_t n = sizeof(r) / sizeof(r[0]), got;
	uint64_t v;

	(void)state;
	for (v = 0; v <= 45; v++) {
		got = sorted_u64_upper_bound(r, n, sizeof(r[0]), offsetof(struct rec, key), v);
		assert_int_equal(got, linear(r, n, v));
	}
	/* Equal keys: one past the last of them. */
	assert_int_equal(sorted_u64_upper_bound(r, n, sizeof(r[0]), offsetof(struct rec, key), 20),
			 4);
	assert_int_equal(
		sorted_u64_upper_bound(r, n, sizeof(r[0]), offsetof(struct rec, key), UINT64_MAX),
		n);
}

static void test_empty(void **state)
{
	(void)state;
	assert_int_equal(
		sorted_u64_upper_bound(NULL, 0, sizeof(struct rec), offsetof(struct rec, key), 5),
		0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_matches_a_linear_count),
		cmocka_unit_test(test_empty),
	};

	return cmocka_run_group_tests_name("sorted_u64", tests, NULL, NULL);
}
