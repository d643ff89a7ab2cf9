// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Unit tests for user/discover/scan_queue.c. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>

#include "discover/scan_queue.h"

static void test_scan_queue_pops_only_due_entries_in_order(void **state)
{
	struct scan_queue *q = malloc(sizeof(*q));
	pid_t pid;

	(void)state;
	scan_queue_init(q);
	assert_int_equal(scan_queue_next_due(q), UINT64_MAX);
	assert_int_equal(scan_queue_push(q, 10, 100), 0);
	assert_int_equal(scan_queue_push(q, 11, 200), 0);
	assert_int_equal(scan_queue_next_due(q), 100);
	assert_int_equal(scan_queue_pop_due(q, 99, &pid), 0);
	assert_int_equal(scan_queue_pop_due(q, 150, &pid), 1);
	assert_int_equal(pid, 10);
	assert_int_equal(scan_queue_pop_due(q, 150, &pid), 0);
	assert_int_equal(scan_queue_pop_due(q, 200, &pid), 1);
	assert_int_equal(pid, 11);
	free(q);
}

static void test_scan_queue_counts_overflow_when_full(void **state)
{
	struct scan_queue *q = malloc(sizeof(*q));
	pid_t pid;
	int i;

	(void)state;
	scan_queue_init(q);
	for (i = 0; i < SCAN_QUEUE_CAP; i++)
		assert_int_equal(scan_queue_push(q, i + 1, i), 0);
	assert_int_equal(scan_queue_push(q, 99999, 0), -ENOSPC);
	assert_int_equal(q->overflows, 1);
	/* Wraps around correctly after draining some. */
	assert_int_equal(scan_queue_pop_due(q, UINT64_MAX, &pid), 1);
	assert_int_equal(pid, 1);
	assert_int_equal(scan_queue_push(q, 77, SCAN_QUEUE_CAP), 0);
	for (i = 1; i < SCAN_QUEUE_CAP; i++)
		assert_int_equal(scan_queue_pop_due(q, UINT64_MAX, &pid), 1);
	assert_int_equal(scan_queue_pop_due(q, UINT64_MAX, &pid), 1);
	assert_int_equal(pid, 77);
	free(q);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_scan_queue_pops_only_due_entries_in_order),
		cmocka_unit_test(test_scan_queue_counts_overflow_when_full),
	};

	return cmocka_run_group_tests_name("scan_queue", tests, NULL, NULL);
}
