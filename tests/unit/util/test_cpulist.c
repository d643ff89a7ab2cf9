// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Unit tests for user/util/cpulist.c. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdlib.h>
#include <errno.h>
#include <cmocka.h>

#include "util/cpulist.h"

static void test_cpulist_parses_ranges_and_singles(void **state)
{
	bool *mask;
	int n;

	(void)state;
	assert_int_equal(cpulist_parse("0-2,5,7-8\n", &mask, &n), 0);
	assert_int_equal(n, 9);
	assert_true(mask[0] && mask[1] && mask[2] && !mask[3] && !mask[4] && mask[5]);
	assert_true(!mask[6] && mask[7] && mask[8]);
	free(mask);
	assert_int_equal(cpulist_parse("0", &mask, &n), 0);
	assert_int_equal(n, 1);
	free(mask);
}

static void test_cpulist_rejects_malformed_text(void **state)
{
	bool *mask;
	int n;

	(void)state;
	assert_int_equal(cpulist_parse("", &mask, &n), -EINVAL);
	assert_int_equal(cpulist_parse("3-1", &mask, &n), -EINVAL);
	assert_int_equal(cpulist_parse("a", &mask, &n), -EINVAL);
	assert_int_equal(cpulist_parse("1,,2", &mask, &n), -EINVAL);
	assert_int_equal(cpulist_parse("0-99999", &mask, &n), -EINVAL);
	assert_null(mask);
}

static void test_cpulist_reads_this_machines_online_cpus(void **state)
{
	bool *mask;
	int n;

	(void)state;
	assert_int_equal(cpulist_read("/sys/devices/system/cpu/online", &mask, &n), 0);
	assert_true(n >= 1 && mask[0]);
	free(mask);
	assert_int_equal(cpulist_read("/nonexistent/online", &mask, &n), -ENOENT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cpulist_parses_ranges_and_singles),
		cmocka_unit_test(test_cpulist_rejects_malformed_text),
		cmocka_unit_test(test_cpulist_reads_this_machines_online_cpus),
	};

	return cmocka_run_group_tests_name("cpulist", tests, NULL, NULL);
}
