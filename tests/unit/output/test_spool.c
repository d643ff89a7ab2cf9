// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Unit tests for the on-disk spool: requests survive a reopen, come back oldest first, stay
 * within the byte bound, expire by age, and the directory is guarded against a second agent. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "output/spool.h"
#include "tmpdir.h"

static int setup(void **state)
{
	*state = tmpdir_new("spool");
	return *state ? 0 : -1;
}

static struct spool *open_spool(const char *dir, size_t max, size_t *evicted)
{
	struct spool *s = NULL;
	size_t ev = 0;

	assert_int_equal(spool_open(dir, max, &s, &ev), 0);
	assert_non_null(s);
	if (evicted)
		*evicted = ev;
	else
		assert_int_equal(ev, 0);
	return s;
}

/* A body of len bytes, every byte `fill`. */
static void put(struct spool *s, int64_t ts, size_t len, int fill)
{
	uint8_t *body = malloc(len);
	size_t evicted;

	assert_non_null(body);
	memset(body, fill, len);
	assert_int_equal(spool_put(s, ts, body, len, &evicted), 0);
	free(body);
}

/* Takes the oldest, checks its time, size and fill, and deletes it. */
static void take_expect(struct spool *s, int64_t ts, size_t len, int fill)
{
	struct spool_entry e;
	uint8_t *body = NULL;
	size_t n = 0, i;
	int gone;

	assert_int_equal(spool_take(s, &e, &body, &n, &gone), 0);
	assert_int_equal(e.ts_ns, ts);
	assert_int_equal(n, len);
	for (i = 0; i < n; i++)
		assert_int_equal(body[i], fill);
	free(body);
	spool_done(s);
}

static size_t files_in(const char *dir, const char *suffix)
{
	char cmd[4200];
	FILE *p;
	size_t n = 0;

	snprintf(cmd, sizeof(cmd), "ls -A '%s' | grep -c -- '%s$'", dir, suffix);
	p = popen(cmd, "r");
	assert_non_null(p);
	assert_int_equal(fscanf(p, "%zu", &n), 1);
	pclose(p);
	return n;
}

static void test_spool_survives_reopen(void **state)
{
	struct spool *s = open_spool(*state, 1 << 20, NULL);

	put(s, 1000, 300, 'a');
	put(s, 2000, 200, 'b');
	put(s, 3000, 100, 'c');
	spool_close(s);
	s = open_spool(*state, 1 << 20, NULL);
	assert_int_equal(spool_count(s), 3);
	assert_int_equal(spool_bytes(s), 600);
	take_expect(s, 1000, 300, 'a');
	take_expect(s, 2000, 200, 'b');
	take_expect(s, 3000, 100, 'c');
	assert_int_equal(spool_count(s), 0);
	spool_close(s);
	assert_int_equal(files_in(*state, ".push"), 0);
}

static void test_spool_gives_oldest_first(void **state)
{
	struct spool *s = open_spool(*state, 1 << 20, NULL);
	struct spool_entry e;

	put(s, 30, 10, '3');
	put(s, 10, 10, '1');
	put(s, 20, 10, '2');
	put(s, 10, 10, '4'); /* same time: written later, sent later */
	assert_int_equal(spool_peek(s, &e), 0);
	assert_int_equal(e.ts_ns, 10);
	take_expect(s, 10, 10, '1');
	take_expect(s, 10, 10, '4');
	take_expect(s, 20, 10, '2');
	take_expect(s, 30, 10, '3');
	assert_int_equal(spool_peek(s, &e), -ENOENT);
	spool_close(s);
}

static void test_spool_evicts_oldest_to_stay_within_bound(void **state)
{
	struct spool *s = open_spool(*state, 1000, NULL);
	uint8_t body[300] = { 0 };
	size_t evicted;

	put(s, 1, 300, 1);
	put(s, 2, 300, 2);
	put(s, 3, 300, 3);
	assert_int_equal(spool_put(s, 4, body, sizeof(body), &evicted), 0);
	assert_int_equal(evicted, 1);
	assert_true(spool_bytes(s) <= 1000);
	assert_int_equal(spool_count(s), 3);
	take_expect(s, 2, 300, 2); /* 1 is gone */
	assert_int_equal(files_in(*state, ".push"), 2);
	spool_close(s);
}

static void test_spool_refuses_older_request_when_full(void **state)
{
	struct spool *s = open_spool(*state, 600, NULL);
	uint8_t body[300] = { 0 };
	size_t evicted;

	put(s, 10, 300, 1);
	put(s, 20, 300, 2);
	assert_int_equal(spool_put(s, 5, body, sizeof(body), &evicted), -ENOSPC);
	assert_int_equal(evicted, 0);
	assert_int_equal(spool_count(s), 2);
	assert_int_equal(spool_put(s, 1, body, 601, &evicted), -EFBIG);
	assert_int_equal(files_in(*state, ".push"), 2);
	spool_close(s);
}

static void test_spool_expires_by_age_but_not_the_taken_one(void **state)
{
	struct spool *s = open_spool(*state, 1 << 20, NULL);
	struct spool_entry e;
	uint8_t *body = NULL;
	size_t n;
	int gone;

	put(s, 100, 10, 1);
	put(s, 200, 10, 2);
	put(s, 300, 10, 3);
	put(s, 400, 10, 4);
	assert_int_equal(spool_take(s, &e, &body, &n, &gone), 0);
	free(body);
	assert_int_equal(spool_expire(s, 300), 1); /* 200 only: 100 is taken, 300 is not older */
	assert_int_equal(spool_count(s), 3);
	spool_untake(s);
	assert_int_equal(spool_expire(s, 300), 1);
	assert_int_equal(spool_count(s), 2);
	take_expect(s, 300, 10, 3);
	assert_int_equal(files_in(*state, ".push"), 1);
	spool_close(s);
}

static void test_spool_untake_keeps_request_for_retry(void **state)
{
	struct spool *s = open_spool(*state, 1 << 20, NULL);
	struct spool_entry e;
	uint8_t *body = NULL;
	size_t n;
	int gone;

	put(s, 7, 50, 'x');
	assert_int_equal(spool_take(s, &e, &body, &n, &gone), 0);
	free(body);
	assert_int_equal(spool_take(s, &e, &body, &n, &gone), -ENOENT); /* one at a time */
	assert_int_equal(spool_bytes(s), 50); /* still counted */
	spool_untake(s);
	take_expect(s, 7, 50, 'x');
	spool_close(s);
}

static void touch(const char *dir, const char *name, size_t len)
{
	char path[4200];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	assert_non_null(f);
	while (len--)
		fputc('z', f);
	fclose(f);
}

static void test_spool_cleans_temp_files_and_ignores_foreign_ones(void **state)
{
	struct spool *s;

	char link[4200], target[4200];

	touch(*state, ".tmp-00000000000000000001-0000000000000000.push", 10);
	touch(*state, ".tmp-notes", 10); /* not named like ours */
	touch(*state, "notes.txt", 10);
	touch(*state, "123.push", 10);
	/* A symlink with our temp name: removed neither it nor, above all, what it points to. */
	snprintf(target, sizeof(target), "%s/target.txt", (char *)*state);
	snprintf(link, sizeof(link), "%s/.tmp-00000000000000000002-0000000000000000.push",
		 (char *)*state);
	touch(*state, "target.txt", 3);
	assert_int_equal(symlink(target, link), 0);
	s = open_spool(*state, 1 << 20, NULL);
	assert_int_equal(spool_count(s), 0);
	assert_int_equal(files_in(*state, ".tmp-00000000000000000001.*"), 0);
	spool_close(s);
	assert_int_equal(files_in(*state, ".tmp-notes"), 1);
	assert_int_equal(files_in(*state, ".tmp-00000000000000000002.*"), 1);
	assert_int_equal(files_in(*state, "target.txt"), 1);
	assert_int_equal(files_in(*state, "notes.txt"), 1);
	assert_int_equal(files_in(*state, "123.push"), 1);
}

static void test_spool_shrinks_to_a_smaller_bound_on_open(void **state)
{
	struct spool *s = open_spool(*state, 1 << 20, NULL);
	size_t evicted;

	put(s, 1, 300, 1);
	put(s, 2, 300, 2);
	put(s, 3, 300, 3);
	spool_close(s);
	s = open_spool(*state, 500, &evicted);
	assert_int_equal(evicted, 2);
	assert_int_equal(spool_bytes(s), 300);
	take_expect(s, 3, 300, 3);
	spool_close(s);
}

static void test_spool_is_locked_against_a_second_agent(void **state)
{
	struct spool *s = open_spool(*state, 1 << 20, NULL), *t = NULL;
	size_t evicted;

	assert_int_equal(spool_open(*state, 1 << 20, &t, &evicted), -EBUSY);
	assert_null(t);
	spool_close(s);
	s = open_spool(*state, 1 << 20, NULL); /* released on close */
	spool_close(s);
}

static void test_spool_never_reuses_a_name_after_reopen(void **state)
{
	struct spool *s = open_spool(*state, 1 << 20, NULL);

	put(s, 5, 10, 1);
	put(s, 5, 10, 2);
	spool_close(s);
	s = open_spool(*state, 1 << 20, NULL);
	put(s, 5, 10, 3);
	assert_int_equal(spool_count(s), 3);
	take_expect(s, 5, 10, 1);
	take_expect(s, 5, 10, 2);
	take_expect(s, 5, 10, 3);
	spool_close(s);
}

static void test_spool_drops_request_it_cannot_read(void **state)
{
	struct spool *s = open_spool(*state, 1 << 20, NULL);
	char cmd[4200];
	struct spool_entry e;
	uint8_t *body = NULL;
	size_t n;
	int gone;

	put(s, 1, 100, 1);
	put(s, 2, 100, 2);
	/* Someone cuts the oldest file short behind the spool's back. */
	snprintf(cmd, sizeof(cmd), "truncate -s 10 '%s'/00000000000000000001-*.push",
		 (char *)*state);
	assert_int_equal(system(cmd), 0);
	assert_int_equal(spool_take(s, &e, &body, &n, &gone), -EIO);
	assert_int_equal(gone, 1);
	assert_int_equal(spool_count(s), 1);
	assert_int_equal(spool_bytes(s), 100);
	take_expect(s, 2, 100, 2);
	spool_close(s);
}

static void test_spool_creates_missing_directories(void **state)
{
	char dir[4200];
	struct spool *s;
	struct stat st;

	snprintf(dir, sizeof(dir), "%s/a/b/spool", (char *)*state);
	s = open_spool(dir, 1 << 20, NULL);
	assert_int_equal(stat(dir, &st), 0);
	assert_true(S_ISDIR(st.st_mode));
	put(s, 1, 1, 1);
	spool_close(s);
}

#define T(name) cmocka_unit_test_setup_teardown(name, setup, tmpdir_teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_spool_survives_reopen),
		T(test_spool_gives_oldest_first),
		T(test_spool_evicts_oldest_to_stay_within_bound),
		T(test_spool_refuses_older_request_when_full),
		T(test_spool_expires_by_age_but_not_the_taken_one),
		T(test_spool_untake_keeps_request_for_retry),
		T(test_spool_cleans_temp_files_and_ignores_foreign_ones),
		T(test_spool_shrinks_to_a_smaller_bound_on_open),
		T(test_spool_is_locked_against_a_second_agent),
		T(test_spool_never_reuses_a_name_after_reopen),
		T(test_spool_drops_request_it_cannot_read),
		T(test_spool_creates_missing_directories),
	};

	return cmocka_run_group_tests_name("spool", tests, NULL, NULL);
}
