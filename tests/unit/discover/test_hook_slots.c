// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Unit tests for the hook-file table's fair-share rule: free slots first, a full table shared
 * between users, the file that leaves, and no two users taking slots from each other in turn. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "discover/hook_slots.h"

#define N 8

static void fill(struct hook_slot *s, uid_t uid)
{
	for (int i = 0; i < N; i++)
		s[i] = (struct hook_slot){ .in_use = 1, .uid = uid, .users = 3 };
}

static void test_hook_slots_free_slot_first(void **state)
{
	struct hook_slot s[N];
	struct hook_slot_pick p;

	(void)state;
	fill(s, 1000);
	s[5].in_use = 0;
	assert_int_equal(hook_slots_pick(s, N, 0, &p), 0);
	assert_int_equal(p.slot, 5);
	assert_false(p.reclaim);
}

/* One user holds the whole table: root (or another user) takes back the file with the fewest
 * processes. */
static void test_hook_slots_full_table_reclaims_from_the_hog(void **state)
{
	struct hook_slot s[N];
	struct hook_slot_pick p;

	(void)state;
	fill(s, 1000);
	s[6].users = 1;
	assert_int_equal(hook_slots_pick(s, N, 0, &p), 0);
	assert_true(p.reclaim);
	assert_int_equal(p.slot, 6);
	assert_int_equal(p.from, 1000);
	assert_int_equal(p.share, N / 2);
	/* The hog itself gets nothing more. */
	assert_int_equal(hook_slots_pick(s, N, 1000, &p), -ENOSPC);
}

/* Two users at their share: neither takes from the other, a third one below its share does. */
static void test_hook_slots_users_at_their_share_keep_their_slots(void **state)
{
	struct hook_slot s[N];
	struct hook_slot_pick p;
	int i;

	(void)state;
	fill(s, 1000);
	for (i = 0; i < N / 2; i++)
		s[i].uid = 0;
	assert_int_equal(hook_slots_pick(s, N, 0, &p), -ENOSPC);
	assert_int_equal(hook_slots_pick(s, N, 1000, &p), -ENOSPC);
	assert_int_equal(hook_slots_pick(s, N, 2000, &p), 0);
	assert_true(p.reclaim);
	assert_int_equal(p.share, N / 3);
}

/* Reclaiming converges: a user below its share fills up to it, then stops. */
static void test_hook_slots_reclaim_stops_at_the_share(void **state)
{
	struct hook_slot s[N];
	struct hook_slot_pick p;
	int taken = 0;

	(void)state;
	fill(s, 1000);
	while (!hook_slots_pick(s, N, 0, &p)) {
		assert_true(p.reclaim);
		s[p.slot] = (struct hook_slot){ .in_use = 1, .uid = 0, .users = 1 };
		assert_true(++taken <= N);
	}
	assert_int_equal(taken, N / 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hook_slots_free_slot_first),
		cmocka_unit_test(test_hook_slots_full_table_reclaims_from_the_hog),
		cmocka_unit_test(test_hook_slots_users_at_their_share_keep_their_slots),
		cmocka_unit_test(test_hook_slots_reclaim_stops_at_the_share),
	};

	return cmocka_run_group_tests_name("hook_slots", tests, NULL, NULL);
}
