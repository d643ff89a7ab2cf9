// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Unit tests for the per-file parse verdicts: a file is parsed once however often it is
 * met, again when it changes, the LRU's bound is kept and counted, and files of owners other
 * than root are parsed on the thread, one owner holding at most half its queue. A counting
 * parser stands in for the ELF readers. The first two tests run as root (root's files are
 * parsed by the caller). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "util/file_verdicts.h"
#include "tmpdir.h"

struct parsed {
	int calls_at_parse; /* which parse produced this value */
};

static int parse_calls;

static int counting_parse(int fd, const char *name, void *out)
{
	struct parsed *p = out;

	(void)fd;
	p->calls_at_parse = ++parse_calls;
	return strstr(name, "notpython") ? -ENOENT : 0;
}

/* A new file of len bytes in dir, opened for reading. */
static int new_file(const char *dir, int i, size_t len)
{
	char path[512], buf[64] = { 0 };
	int fd;

	snprintf(path, sizeof(path), "%s/f%d", dir, i);
	fd = open(path, O_CREAT | O_TRUNC | O_RDWR | O_CLOEXEC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, buf, len), (ssize_t)len);
	return fd;
}

/* The caller parses root's files itself: the first two tests need theirs to be root's. */
static int need_root(void **state)
{
	(void)state;
	if (geteuid() != 0) {
		printf("  skip: the files must be root's\n");
		skip();
	}
	return 0;
}

static void test_parsed_once_per_file(void **state)
{
	char *dir = tmpdir_new("verdicts");
	struct file_verdicts *v = file_verdicts_new(8, sizeof(struct parsed), "test");
	struct file_verdicts_stats st;
	struct parsed p;
	int fd = new_file(dir, 0, 10), i;

	(void)state;
	parse_calls = 0;
	for (i = 0; i < 100; i++) {
		memset(&p, 0, sizeof(p));
		assert_int_equal(file_verdicts_read(v, fd, "libpython3.11.so", counting_parse, &p),
				 0);
		assert_int_equal(p.calls_at_parse, 1); /* the remembered value */
	}
	/* A failing verdict is remembered too. */
	assert_int_equal(file_verdicts_read(v, fd, "notpython", counting_parse, &p), -ENOENT);
	assert_int_equal(file_verdicts_read(v, fd, "notpython", counting_parse, &p), -ENOENT);
	assert_int_equal(parse_calls, 2); /* another name is another verdict */
	/* The file grew: parsed again. */
	assert_int_equal(write(fd, "x", 1), 1);
	assert_int_equal(file_verdicts_read(v, fd, "notpython", counting_parse, &p), -ENOENT);
	assert_int_equal(parse_calls, 3);
	file_verdicts_get_stats(v, &st);
	assert_int_equal(st.parsed, 3);
	assert_int_equal(st.hits, 100);
	assert_int_equal(st.deferred, 0);
	close(fd);
	file_verdicts_free(v);
	tmpdir_remove(dir);
}

static void test_bounded_and_counted(void **state)
{
	char *dir = tmpdir_new("verdicts");
	struct file_verdicts *v = file_verdicts_new(4, sizeof(struct parsed), "test");
	struct file_verdicts_stats st;
	struct parsed p;
	int fds[6], i;

	(void)state;
	parse_calls = 0;
	for (i = 0; i < 6; i++) {
		fds[i] = new_file(dir, i, 1);
		assert_int_equal(file_verdicts_read(v, fds[i], "ruby", counting_parse, &p), 0);
	}
	file_verdicts_get_stats(v, &st);
	assert_int_equal(st.evicted, 2);
	/* The newest four are remembered, the two oldest parsed again. */
	assert_int_equal(file_verdicts_read(v, fds[5], "ruby", counting_parse, &p), 0);
	assert_int_equal(parse_calls, 6);
	assert_int_equal(file_verdicts_read(v, fds[0], "ruby", counting_parse, &p), 0);
	assert_int_equal(parse_calls, 7);
	for (i = 0; i < 6; i++)
		close(fds[i]);
	file_verdicts_free(v);
	tmpdir_remove(dir);
}

/* Parses on the parsing thread wait while hold is set. */
static volatile int hold;
static pthread_t parse_thread;
static volatile int parse_started;

static int held_parse(int fd, const char *name, void *out)
{
	parse_started = 1;
	while (hold)
		usleep(1000);
	parse_thread = pthread_self();
	return counting_parse(fd, name, out);
}

/* Asks until the verdict is there (the thread parsed it); fails after 10 s. */
static int read_when_parsed(struct file_verdicts *v, int fd, file_parse_fn parse)
{
	struct parsed p;
	int err, i;

	for (i = 0; i < 10000; i++) {
		err = file_verdicts_read(v, fd, "libruby.so", parse, &p);
		if (err != -EBUSY)
			return err;
		usleep(1000);
	}
	fail_msg("no verdict after 10 s");
	return -1;
}

static void test_other_owners_files_parse_off_the_caller(void **state)
{
	char *dir = tmpdir_new("verdicts");
	struct file_verdicts *v = file_verdicts_new(64, sizeof(struct parsed), "test");
	struct file_verdicts_stats st;
	struct parsed p;
	int fds[FILE_VERDICTS_JOBS / 2 + 3], i, n = FILE_VERDICTS_JOBS / 2 + 3;

	(void)state;
	if (geteuid() != 0) {
		file_verdicts_free(v);
		tmpdir_remove(dir);
		printf("  skip: giving files to other owners needs root\n");
		skip();
	}
	parse_calls = 0;
	hold = 1;
	/* One owner's files: half the queue is theirs, the rest are refused (and counted). */
	for (i = 0; i < n - 1; i++) {
		fds[i] = new_file(dir, i, 1);
		assert_int_equal(fchown(fds[i], 65534, 65534), 0);
		assert_int_equal(file_verdicts_read(v, fds[i], "libruby.so", held_parse, &p),
				 -EBUSY);
	}
	file_verdicts_get_stats(v, &st);
	assert_int_equal(st.refused, n - 1 - FILE_VERDICTS_JOBS / 2);
	/* Another owner's file still gets a place. */
	fds[n - 1] = new_file(dir, n - 1, 1);
	assert_int_equal(fchown(fds[n - 1], 65533, 65533), 0);
	assert_int_equal(file_verdicts_read(v, fds[n - 1], "libruby.so", held_parse, &p), -EBUSY);
	file_verdicts_get_stats(v, &st);
	assert_int_equal(st.refused, n - 1 - FILE_VERDICTS_JOBS / 2);
	assert_int_equal(parse_calls, 0);
	hold = 0;
	/* Asked again, each is parsed (the refused ones queued now), on the thread, once. */
	for (i = 0; i < n; i++)
		assert_int_equal(read_when_parsed(v, fds[i], held_parse), 0);
	assert_int_equal(parse_calls, n);
	assert_false(pthread_equal(parse_thread, pthread_self()));
	for (i = 0; i < n; i++) {
		assert_int_equal(file_verdicts_read(v, fds[i], "libruby.so", held_parse, &p), 0);
		close(fds[i]);
	}
	assert_int_equal(parse_calls, n);
	file_verdicts_free(v);
	tmpdir_remove(dir);
}

static double mono_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* The exit asks every parser to stop at once, then frees them one after another: a parse that
 * outlasts its stop is waited for until 300 ms after that request, not 300 ms from the free, so
 * that several parsers never add up their waits. */
static void test_stop_bounds_the_wait_from_the_request(void **state)
{
	char *dir = tmpdir_new("verdicts");
	struct file_verdicts *v = file_verdicts_new(4, sizeof(struct parsed), "test");
	struct parsed p;
	double t0, took;
	int fd, i;

	(void)state;
	if (geteuid() != 0) {
		file_verdicts_free(v);
		tmpdir_remove(dir);
		printf("  skip: giving a file to another owner needs root\n");
		skip();
	}
	hold = 1;
	parse_started = 0;
	fd = new_file(dir, 0, 1);
	assert_int_equal(fchown(fd, 65534, 65534), 0);
	assert_int_equal(file_verdicts_read(v, fd, "libruby.so", held_parse, &p), -EBUSY);
	for (i = 0; !parse_started && i < 10000; i++)
		usleep(1000);
	assert_true(parse_started);
	file_verdicts_stop(v);
	usleep(250000); /* the agent writes its last window meanwhile */
	t0 = mono_s();
	file_verdicts_free(v); /* the parse is still held: v is left to its thread */
	took = mono_s() - t0;
	printf("  free waited %.3f s, 0.25 s after the stop request\n", took);
	assert_true(took < 0.2);
	hold = 0; /* the thread ends its parse and returns */
	close(fd);
	tmpdir_remove(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_parsed_once_per_file, need_root),
		cmocka_unit_test_setup(test_bounded_and_counted, need_root),
		cmocka_unit_test(test_other_owners_files_parse_off_the_caller),
		cmocka_unit_test(test_stop_bounds_the_wait_from_the_request),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
