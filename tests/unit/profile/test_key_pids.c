// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Unit tests for the distinct pids of a drain's keys. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "profile/key_pids.h"

/* user_stack_hash 0: the key has no user stack. */
static struct sample_key key(uint32_t pid, uint64_t user_stack_hash)
{
	struct sample_key k;

	memset(&k, 0, sizeof(k));
	k.pid = pid;
	k.user_stack_hash = user_stack_hash;
	return k;
}

/* Keys of one process scattered among others (hash order) give that process once; the busiest
 * comes first, and one key with user frames is enough to need its symbols. */
static void test_scattered_keys_give_each_pid_once_busiest_first(void **state)
{
	struct sample_key keys[] = { key(7, 0), key(3, 1), key(7, 0), key(0, 2),
				     key(5, 4), key(7, 9), key(3, 2), key(7, 0) };
	struct key_pid out[8];
	size_t n;

	(void)state;
	n = key_pids_distinct(keys, 8, out);
	assert_int_equal(n, 3); /* pid 0 (the idle task) is left out */
	assert_int_equal(out[0].pid, 7);
	assert_int_equal(out[0].keys, 4);
	assert_true(out[0].user);
	assert_int_equal(out[1].pid, 3);
	assert_int_equal(out[1].keys, 2);
	assert_int_equal(out[2].pid, 5);
	assert_int_equal(out[2].keys, 1);
}

static void test_kernel_only_pid_needs_no_symbols(void **state)
{
	struct sample_key keys[] = { key(9, 0), key(9, 0) };
	struct key_pid out[2];

	(void)state;
	assert_int_equal(key_pids_distinct(keys, 2, out), 1);
	assert_false(out[0].user);
	assert_int_equal(key_pids_distinct(keys, 0, out), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_scattered_keys_give_each_pid_once_busiest_first),
		cmocka_unit_test(test_kernel_only_pid_needs_no_symbols),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
