// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Unit tests for the hook registry's growing tables: the table of processes starts small,
 * doubles as processes are tracked and keeps what each holds across a growth, stops at its
 * limit and counts the processes refused there; the set of files without a hook grows the same
 * way and forgets everything once full. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "agent/hook_negative.h"
#include "agent/hook_pids.h"

/* What process pid holds in these tests: files derived from the pid. */
static void give_files(struct hook_pid *p)
{
	unsigned int k;

	p->nfiles = 1 + (unsigned int)p->pid % HOOK_PID_FILES;
	for (k = 0; k < p->nfiles; k++)
		p->files[k] = (unsigned int)p->pid * 10 + k;
	p->go.labels_offset = (uint32_t)p->pid;
}

static void assert_holds_its_files(const struct hook_pids *t, pid_t pid)
{
	struct hook_pid *p = hook_pids_find(t, pid);
	unsigned int k;

	assert_non_null(p);
	assert_int_equal(p->pid, pid);
	assert_int_equal(p->nfiles, 1 + (unsigned int)pid % HOOK_PID_FILES);
	for (k = 0; k < p->nfiles; k++)
		assert_int_equal(p->files[k], (unsigned int)pid * 10 + k);
	assert_int_equal(p->go.labels_offset, (uint32_t)pid);
}

static void add_with_files(struct hook_pids *t, pid_t pid)
{
	struct hook_pid *p = NULL;

	assert_null(hook_pids_find(t, pid));
	assert_int_equal(hook_pids_add(t, pid, &p), 0);
	assert_non_null(p);
	assert_int_equal(p->pid, pid);
	assert_int_equal(p->nfiles, 0);
	give_files(p);
}

/* 5000 processes: the table doubles from its start size, and every process is found with its
 * own files after each growth. */
static void test_pids_grow_and_keep_their_files(void **state)
{
	struct hook_pids t;
	size_t grown_before;
	pid_t pid;

	(void)state;
	assert_int_equal(hook_pids_init(&t, 32768), 0);
	assert_int_equal(t.cap, HOOK_PIDS_START);
	for (pid = 1000; pid < 6000; pid++) {
		grown_before = t.grown;
		add_with_files(&t, pid);
		if (t.grown != grown_before) {
			/* Just grown: everything added before is still right. */
			pid_t q;

			for (q = 1000; q <= pid; q++)
				assert_holds_its_files(&t, q);
		}
	}
	assert_int_equal(t.count, 5000);
	assert_true(t.cap >= 5000 && t.cap < 2 * 5000);
	assert_int_equal(t.cap, (size_t)HOOK_PIDS_START << t.grown);
	assert_true(t.grown >= 6);
	for (pid = 1000; pid < 6000; pid++)
		assert_holds_its_files(&t, pid);
	assert_null(hook_pids_find(&t, 999));
	assert_null(hook_pids_find(&t, 6000));
	assert_int_equal(t.full, 0);
	hook_pids_release(&t);
}

/* A removed process is no longer found, its slot is used again before the table grows, and
 * the used range shrinks when its last processes go. */
static void test_pids_reuse_freed_slots(void **state)
{
	struct hook_pids t;
	pid_t pid;

	(void)state;
	assert_int_equal(hook_pids_init(&t, 32768), 0);
	for (pid = 1; pid <= HOOK_PIDS_START; pid++)
		add_with_files(&t, pid);
	assert_int_equal(t.cap, HOOK_PIDS_START);
	hook_pids_remove(&t, hook_pids_find(&t, 10));
	assert_null(hook_pids_find(&t, 10));
	assert_int_equal(t.count, HOOK_PIDS_START - 1);
	add_with_files(&t, 5000);
	assert_int_equal(t.cap, HOOK_PIDS_START);
	assert_int_equal(t.grown, 0);
	assert_holds_its_files(&t, 5000);
	assert_holds_its_files(&t, 11);
	for (pid = HOOK_PIDS_START; pid > 40; pid--)
		hook_pids_remove(&t, hook_pids_find(&t, pid));
	assert_int_equal(t.end, 40);
	assert_holds_its_files(&t, 40);
	hook_pids_release(&t);
}

/* At its limit (not a power-of-two step from the start) the table holds exactly that many
 * processes, refuses the next one with -ENOSPC and counts it; a slot freed is taken again. */
static void test_pids_limit_is_counted(void **state)
{
	const size_t max = 300;
	struct hook_pids t;
	struct hook_pid *p;
	pid_t pid;

	(void)state;
	assert_int_equal(hook_pids_init(&t, max), 0);
	for (pid = 1; pid <= (pid_t)max; pid++)
		add_with_files(&t, pid);
	assert_int_equal(t.cap, max);
	assert_int_equal(t.full, 0);
	assert_int_equal(hook_pids_add(&t, 9999, &p), -ENOSPC);
	assert_int_equal(hook_pids_add(&t, 9998, &p), -ENOSPC);
	assert_int_equal(t.full, 2);
	assert_int_equal(t.cap, max);
	assert_null(hook_pids_find(&t, 9999));
	for (pid = 1; pid <= (pid_t)max; pid++)
		assert_holds_its_files(&t, pid);
	hook_pids_remove(&t, hook_pids_find(&t, 7));
	add_with_files(&t, 9999);
	assert_holds_its_files(&t, 9999);
	assert_int_equal(t.full, 2);
	hook_pids_release(&t);
}

/* A limit below the start size is the table's only size. */
static void test_pids_small_limit(void **state)
{
	struct hook_pids t;
	struct hook_pid *p;

	(void)state;
	assert_int_equal(hook_pids_init(&t, 2), 0);
	assert_int_equal(t.cap, 2);
	add_with_files(&t, 1);
	add_with_files(&t, 2);
	assert_int_equal(hook_pids_add(&t, 3, &p), -ENOSPC);
	assert_int_equal(t.full, 1);
	hook_pids_release(&t);
}

/* The set of files without a hook: 20000 files make it grow from its start size, each is still
 * found, others are not. */
static void test_negative_grows_and_finds_every_file(void **state)
{
	struct hook_negative s;
	uint64_t i;

	(void)state;
	assert_int_equal(hook_negative_init(&s, 65536), 0);
	assert_int_equal(s.cap, HOOK_NEGATIVE_START);
	for (i = 1; i <= 20000; i++) {
		hook_negative_add(&s, i % 7, i * 4096);
		assert_true(hook_negative_has(&s, i % 7, i * 4096));
	}
	assert_int_equal(s.count, 20000);
	assert_true(s.cap >= 4 * 20000 && s.cap <= s.max_cap);
	assert_true(s.grown > 0);
	for (i = 1; i <= 20000; i++) {
		assert_true(hook_negative_has(&s, i % 7, i * 4096));
		assert_false(hook_negative_has(&s, i % 7 + 1, i * 4096));
		assert_false(hook_negative_has(&s, i % 7, i * 4096 + 1));
	}
	hook_negative_add(&s, 1, 4096); /* there already */
	assert_int_equal(s.count, 20000);
	assert_int_equal(s.resets, 0);
	hook_negative_release(&s);
}

/* Full (max files), the set forgets everything before remembering the next, and counts it. */
static void test_negative_forgets_all_when_full(void **state)
{
	struct hook_negative s;
	uint64_t i;

	(void)state;
	assert_int_equal(hook_negative_init(&s, 100), 0);
	for (i = 1; i <= 100; i++)
		hook_negative_add(&s, 0, i);
	assert_int_equal(s.count, 100);
	assert_true(s.cap <= s.max_cap && s.max_cap >= 200);
	assert_int_equal(s.resets, 0);
	hook_negative_add(&s, 0, 101);
	assert_int_equal(s.resets, 1);
	assert_int_equal(s.count, 1);
	assert_true(hook_negative_has(&s, 0, 101));
	assert_false(hook_negative_has(&s, 0, 1));
	hook_negative_release(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pids_grow_and_keep_their_files),
		cmocka_unit_test(test_pids_reuse_freed_slots),
		cmocka_unit_test(test_pids_limit_is_counted),
		cmocka_unit_test(test_pids_small_limit),
		cmocka_unit_test(test_negative_grows_and_finds_every_file),
		cmocka_unit_test(test_negative_forgets_all_when_full),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
