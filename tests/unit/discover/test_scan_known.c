// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Unit tests for user/discover/scan_known.c. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>

#include "discover/scan_known.h"

static void test_scan_known_first_rescan_is_full_then_skips_read_pids(void **state)
{
	struct scan_known k;
	pid_t pid;
	int read = 0;

	(void)state;
	assert_int_equal(scan_known_init(&k, 2000), 0);
	assert_int_equal(scan_known_begin(&k, 0, 1), 1);
	for (pid = 1; pid <= 1000; pid++) {
		assert_false(scan_known_skip(&k, pid)); /* a full rescan reads every pid */
		assert_int_equal(scan_known_add(&k, pid), 0);
	}
	assert_int_equal(scan_known_begin(&k, 0, 1), 0);
	/* Known pids are left alone, but for the rescan's slice: 1000 / 64 rounded up is 16, so a
	 * sixteenth of them (a tenth on a node of up to 640). */
	assert_int_equal(k.modulus, 16);
	for (pid = 1; pid <= 1000; pid++)
		if (!scan_known_skip(&k, pid)) {
			assert_int_equal(pid % k.modulus, k.slice);
			read++;
		}
	assert_in_range(read, 1000 / 16, 1000 / 16 + 1);
	assert_false(scan_known_skip(&k, 1001 + (k.slice + 1) % k.modulus));
	assert_int_equal(k.skipped, 1000 - read);
	assert_int_equal(k.read, 1000 + read + 1);
	assert_int_equal(k.full_rescans, 1);
	assert_int_equal(k.rescans, 2);
	scan_known_release(&k);
}

static void test_scan_known_lost_event_or_missing_mmap_events_read_all(void **state)
{
	struct scan_known k;

	(void)state;
	assert_int_equal(scan_known_init(&k, 16), 0);
	assert_int_equal(scan_known_begin(&k, 5, 1), 1);
	scan_known_add(&k, 42);
	assert_int_equal(scan_known_begin(&k, 5, 1), 0);
	assert_true(scan_known_skip(&k, 42));
	/* An event lost since the last rescan: any process may have changed unseen. */
	assert_int_equal(scan_known_begin(&k, 6, 1), 1);
	assert_false(scan_known_skip(&k, 42));
	scan_known_add(&k, 42);
	/* Without the code-mapping events a dlopen raises nothing: every rescan reads all. */
	assert_int_equal(scan_known_begin(&k, 6, 0), 1);
	assert_false(scan_known_skip(&k, 42));
	assert_int_equal(k.full_rescans, 3);
	scan_known_release(&k);
}

/* Every known pid is read once in SCAN_KNOWN_FULL_EVERY rescans, and each rescan reads the same
 * share of them: no rescan reads all of them again. */
static void test_scan_known_reads_each_known_pid_once_every_full_every_rescans(void **state)
{
	int reads[100] = { 0 }, i, per, full = 0;
	struct scan_known k;
	pid_t pid;

	(void)state;
	assert_int_equal(scan_known_init(&k, 200), 0);
	assert_int_equal(scan_known_begin(&k, 0, 1), 1);
	for (pid = 1; pid <= 100; pid++)
		scan_known_add(&k, pid);
	for (i = 0; i < 3 * SCAN_KNOWN_FULL_EVERY; i++) {
		full += scan_known_begin(&k, 0, 1);
		per = 0;
		for (pid = 1; pid <= 100; pid++)
			if (!scan_known_skip(&k, pid)) {
				reads[pid - 1]++;
				per++;
			}
		assert_int_equal(per, 100 / SCAN_KNOWN_FULL_EVERY);
	}
	assert_int_equal(full, 0);
	for (pid = 1; pid <= 100; pid++)
		assert_int_equal(reads[pid - 1], 3);
	assert_int_equal(k.count, 100); /* a slice's read leaves the pid known */
	scan_known_release(&k);
}

/* On a node of many known processes a rescan reads about SCAN_KNOWN_SLICE_MAX of them again, and
 * each of them still once every modulus rescans; every tenth rescan checks liveness. */
static void test_scan_known_slice_is_bounded_on_a_large_node(void **state)
{
	static unsigned char reads[8000];
	int i, per, most = 0, liveness = 0;
	struct scan_known k;
	pid_t pid;

	(void)state;
	assert_int_equal(scan_known_init(&k, 8000), 0);
	assert_int_equal(scan_known_begin(&k, 0, 1), 1);
	assert_true(scan_known_liveness_due(&k));
	for (pid = 1; pid <= 8000; pid++)
		scan_known_add(&k, pid);
	for (i = 0; i < 2 * 125; i++) {
		assert_int_equal(scan_known_begin(&k, 0, 1), 0);
		assert_int_equal(k.modulus, 8000 / SCAN_KNOWN_SLICE_MAX);
		liveness += scan_known_liveness_due(&k);
		per = 0;
		for (pid = 1; pid <= 8000; pid++)
			if (!scan_known_skip(&k, pid)) {
				reads[pid - 1]++;
				per++;
			}
		most = per > most ? per : most;
	}
	assert_int_equal(most, SCAN_KNOWN_SLICE_MAX);
	for (pid = 1; pid <= 8000; pid++)
		assert_int_equal(reads[pid - 1], 2);
	assert_int_equal(liveness, 2 * 125 / SCAN_KNOWN_FULL_EVERY);
	scan_known_release(&k);
}

/* Forgetting keeps every other pid findable, also along shared probe runs. */
static void test_scan_known_forget_keeps_the_others(void **state)
{
	struct scan_known k;
	pid_t pid;

	(void)state;
	assert_int_equal(scan_known_init(&k, 4096), 0);
	scan_known_begin(&k, 0, 1);
	for (pid = 1; pid <= 4096; pid++)
		assert_int_equal(scan_known_add(&k, pid * 8192), 0); /* many collide */
	for (pid = 1; pid <= 4096; pid += 2)
		scan_known_forget(&k, pid * 8192);
	scan_known_forget(&k, 77); /* never added: nothing happens */
	assert_int_equal(k.count, 2048);
	assert_int_equal(scan_known_begin(&k, 0, 1), 0); /* slice 1: holds no even pid */
	for (pid = 1; pid <= 4096; pid++)
		assert_int_equal(scan_known_skip(&k, pid * 8192), !(pid & 1));
	scan_known_release(&k);
}

static void test_scan_known_full_set_is_counted_and_read_each_time(void **state)
{
	struct scan_known k;

	(void)state;
	assert_int_equal(scan_known_init(&k, 2), 0);
	scan_known_begin(&k, 0, 1);
	assert_int_equal(scan_known_add(&k, 1), 0);
	assert_int_equal(scan_known_add(&k, 2), 0);
	assert_int_equal(scan_known_add(&k, 2), 0); /* already in: no room needed */
	assert_int_equal(scan_known_add(&k, 3), -ENOSPC);
	assert_int_equal(k.untracked, 1);
	scan_known_begin(&k, 0, 1);
	assert_false(scan_known_skip(&k, 3));
	scan_known_release(&k);
	assert_int_equal(scan_known_init(&k, 0), -EINVAL);
}

/* Only a complete scan lets rescans skip a pid (13: in neither of the next two rescans' slices); a partial one (or an event-raised one) undoes an
 * earlier complete one, so the next rescan reads the pid again. */
static void test_scan_known_partial_scan_leaves_pid_to_the_rescan(void **state)
{
	struct scan_known k;

	(void)state;
	assert_int_equal(scan_known_init(&k, 16), 0);
	assert_int_equal(scan_known_begin(&k, 0, 1), 1);
	assert_int_equal(scan_known_scanned(&k, 10, 0), 0);
	assert_int_equal(scan_known_scanned(&k, 13, 1), 0);
	assert_int_equal(scan_known_begin(&k, 0, 1), 0);
	assert_false(scan_known_skip(&k, 10));
	assert_true(scan_known_skip(&k, 13));
	assert_int_equal(scan_known_scanned(&k, 13, 0), 0); /* a later scan left work undone */
	assert_int_equal(scan_known_begin(&k, 0, 1), 0);
	assert_false(scan_known_skip(&k, 13));
	assert_int_equal(k.count, 0);
	scan_known_release(&k);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_scan_known_first_rescan_is_full_then_skips_read_pids),
		cmocka_unit_test(test_scan_known_lost_event_or_missing_mmap_events_read_all),
		cmocka_unit_test(
			test_scan_known_reads_each_known_pid_once_every_full_every_rescans),
		cmocka_unit_test(test_scan_known_slice_is_bounded_on_a_large_node),
		cmocka_unit_test(test_scan_known_forget_keeps_the_others),
		cmocka_unit_test(test_scan_known_full_set_is_counted_and_read_each_time),
		cmocka_unit_test(test_scan_known_partial_scan_leaves_pid_to_the_rescan),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
