// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Unit tests for the hook parse queue: one user holds at most half of it (its files beyond are
 * refused, counted, and its process handed back once a parse finishes) while another user's
 * file still gets a place; and users take turns at the parser, so another user's file goes
 * right after the parse in progress, not after the first user's queued files. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "discover/hook_parser.h"
#include "parser_bombs.h"
#include "tmpdir.h"

#define FLOODER 1000
#define OTHER 1001
#define HALF (HOOK_PARSER_JOBS / 2)

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int submit_fd(struct hook_parser *p, uid_t uid, pid_t pid, uint64_t inode, int fd)
{
	struct hook_parse_request req = {
		.dev = 1, .inode = inode, .uid = uid, .pid = pid, .fd = fd, .path = "test"
	};

	return hook_parser_submit(p, &req);
}

/* Submits an open /dev/null (its parse fails at once; its job holds a place until polled). */
static int submit_null(struct hook_parser *p, uid_t uid, pid_t pid, uint64_t inode)
{
	int fd = open("/dev/null", O_RDONLY | O_CLOEXEC), err;

	assert_true(fd >= 0);
	err = submit_fd(p, uid, pid, inode, fd);
	if (err)
		close(fd); /* refused: the caller keeps its descriptor */
	return err;
}

struct finished {
	uint64_t inodes[HOOK_PARSER_JOBS];
	size_t n;
};

/* Drops every result, noting the order in which the polls saw them. */
static int note_finished(void *ctx, const struct hook_parse_result *res)
{
	struct finished *f = ctx;

	if (f->n < HOOK_PARSER_JOBS)
		f->inodes[f->n++] = res->inode;
	return 0;
}

/* Polls every 2 ms until want results were seen (10 s at most); returns the pids handed back
 * for a rescan in rescan[] (how many in *nrescan). */
static void poll_until(struct hook_parser *p, struct finished *f, size_t want, pid_t *rescan,
		       size_t *nrescan)
{
	double end = now_s() + 10;
	size_t n;

	while (f->n < want && now_s() < end) {
		n = hook_parser_poll(p, 0, note_finished, f, rescan + *nrescan, 64 - *nrescan);
		*nrescan += n;
		usleep(2000);
	}
	assert_int_equal(f->n, want);
}

static int contains(const pid_t *pids, size_t n, pid_t pid)
{
	for (size_t i = 0; i < n; i++)
		if (pids[i] == pid)
			return 1;
	return 0;
}

static void test_one_user_holds_at_most_half_the_queue(void **state)
{
	struct hook_parser *p = hook_parser_new();
	struct hook_parser_stats st;
	struct finished f = { .n = 0 };
	pid_t rescan[64];
	size_t nrescan = 0;
	int i;

	(void)state;
	assert_non_null(p);
	for (i = 0; i < HALF; i++)
		assert_int_equal(submit_null(p, FLOODER, 100, i + 1), 0);
	/* Half the queue is free, but not for this user: refused, counted, its pid noted. */
	assert_int_equal(submit_null(p, FLOODER, 101, 500), -ENOSPC);
	assert_int_equal(submit_null(p, FLOODER, 102, 501), -ENOSPC);
	hook_parser_get_stats(p, &st);
	assert_int_equal(st.deferred, 2);
	/* Root and another user still get a place. */
	assert_int_equal(submit_null(p, 0, 200, 600), 0);
	assert_int_equal(submit_null(p, OTHER, 300, 601), 0);
	hook_parser_get_stats(p, &st);
	assert_int_equal(st.deferred, 2);
	/* Once parses finish (and are dropped), the processes turned away are handed back for
	 * a rescan, and the user's next file finds room. */
	poll_until(p, &f, HALF + 2, rescan, &nrescan);
	assert_true(contains(rescan, nrescan, 101));
	assert_true(contains(rescan, nrescan, 102));
	assert_int_equal(submit_null(p, FLOODER, 101, 500), 0);
	hook_parser_free(p);
}

/* Crafted hook files whose parse takes the parser a while (a .gopclntab of 48 MiB whose rows
 * all name one 60 KB string: the parser spends its name budget on each). */
#define SLOW_ROWS 500000
#define SLOW_NAME 60000
#define SLOW_TABLE (48ull << 20)

static int open_slow(const char *dir, int i)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/slow-%d.so", dir, i);
	assert_int_equal(parser_bomb_gopclntab_sized(path, SLOW_ROWS, SLOW_NAME, SLOW_TABLE), 0);
	return open(path, O_RDONLY | O_CLOEXEC);
}

/* One user queues four slow files, then another user one: the other user's file is parsed
 * second, right after the first user's first, not fifth. */
static void test_users_take_turns_at_the_parser(void **state)
{
	char *dir = tmpdir_new("hook-parser");
	struct hook_parser *p;
	struct finished f = { .n = 0 };
	pid_t rescan[64];
	size_t nrescan = 0;
	int fds[5], i;

	(void)state;
	assert_non_null(dir);
	for (i = 0; i < 5; i++) {
		fds[i] = open_slow(dir, i);
		assert_true(fds[i] >= 0);
	}
	p = hook_parser_new();
	assert_non_null(p);
	for (i = 0; i < 4; i++)
		assert_int_equal(submit_fd(p, FLOODER, 100, i + 1, fds[i]), 0);
	assert_int_equal(submit_fd(p, OTHER, 300, 99, fds[4]), 0);
	poll_until(p, &f, 5, rescan, &nrescan);
	printf("  parse order (inodes): %llu %llu %llu %llu %llu\n",
	       (unsigned long long)f.inodes[0], (unsigned long long)f.inodes[1],
	       (unsigned long long)f.inodes[2], (unsigned long long)f.inodes[3],
	       (unsigned long long)f.inodes[4]);
	assert_int_equal(f.inodes[0], 1);
	assert_int_equal(f.inodes[1], 99);
	hook_parser_free(p);
	tmpdir_remove(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_one_user_holds_at_most_half_the_queue),
		cmocka_unit_test(test_users_take_turns_at_the_parser),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
