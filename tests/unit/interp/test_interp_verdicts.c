// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Unit tests for the per-file interpreter verdicts: a file is parsed once however often it is
 * met, again when it changes, the LRU's bound is kept and counted, and parses beyond the
 * second's budget are put off and counted. A counting parser stands in for the ELF readers. */
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
#include <unistd.h>
#include <cmocka.h>

#include "interp/interp_verdicts.h"
#include "tmpdir.h"

#define SECOND_NS 1000000000ull

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

static void test_parsed_once_per_file(void **state)
{
	char *dir = tmpdir_new("verdicts");
	struct interp_verdicts *v = interp_verdicts_new(8, sizeof(struct parsed), SECOND_NS);
	struct interp_verdicts_stats st;
	struct parsed p;
	int fd = new_file(dir, 0, 10), i;

	(void)state;
	parse_calls = 0;
	for (i = 0; i < 100; i++) {
		memset(&p, 0, sizeof(p));
		assert_int_equal(
			interp_verdicts_read(v, fd, "libpython3.11.so", counting_parse, &p), 0);
		assert_int_equal(p.calls_at_parse, 1); /* the remembered value */
	}
	/* A failing verdict is remembered too. */
	assert_int_equal(interp_verdicts_read(v, fd, "notpython", counting_parse, &p), -ENOENT);
	assert_int_equal(interp_verdicts_read(v, fd, "notpython", counting_parse, &p), -ENOENT);
	assert_int_equal(parse_calls, 2); /* another name is another verdict */
	/* The file grew: parsed again. */
	assert_int_equal(write(fd, "x", 1), 1);
	assert_int_equal(interp_verdicts_read(v, fd, "notpython", counting_parse, &p), -ENOENT);
	assert_int_equal(parse_calls, 3);
	interp_verdicts_get_stats(v, &st);
	assert_int_equal(st.parsed, 3);
	assert_int_equal(st.hits, 100);
	assert_int_equal(st.deferred, 0);
	close(fd);
	interp_verdicts_free(v);
	tmpdir_remove(dir);
}

static void test_bounded_and_counted(void **state)
{
	char *dir = tmpdir_new("verdicts");
	struct interp_verdicts *v = interp_verdicts_new(4, sizeof(struct parsed), SECOND_NS);
	struct interp_verdicts_stats st;
	struct parsed p;
	int fds[6], i;

	(void)state;
	parse_calls = 0;
	for (i = 0; i < 6; i++) {
		fds[i] = new_file(dir, i, 1);
		assert_int_equal(interp_verdicts_read(v, fds[i], "ruby", counting_parse, &p), 0);
	}
	interp_verdicts_get_stats(v, &st);
	assert_int_equal(st.evicted, 2);
	/* The newest four are remembered, the two oldest parsed again. */
	assert_int_equal(interp_verdicts_read(v, fds[5], "ruby", counting_parse, &p), 0);
	assert_int_equal(parse_calls, 6);
	assert_int_equal(interp_verdicts_read(v, fds[0], "ruby", counting_parse, &p), 0);
	assert_int_equal(parse_calls, 7);
	for (i = 0; i < 6; i++)
		close(fds[i]);
	interp_verdicts_free(v);
	tmpdir_remove(dir);
}

static void test_budget_defers_new_files(void **state)
{
	char *dir = tmpdir_new("verdicts");
	/* 1 ns a second: the first parse of a second uses it up. */
	struct interp_verdicts *v = interp_verdicts_new(8, sizeof(struct parsed), 1);
	struct interp_verdicts_stats st;
	struct parsed p;
	int a = new_file(dir, 0, 1), b = new_file(dir, 1, 2);

	(void)state;
	if (geteuid() == 0) {
		/* Files owned by root are never put off: hand the two to another owner. */
		assert_int_equal(fchown(a, 65534, 65534), 0);
		assert_int_equal(fchown(b, 65534, 65534), 0);
	}
	parse_calls = 0;
	assert_int_equal(interp_verdicts_read(v, a, "ruby", counting_parse, &p), 0);
	assert_int_equal(interp_verdicts_read(v, b, "ruby", counting_parse, &p), -EBUSY);
	/* A remembered verdict costs no budget. */
	assert_int_equal(interp_verdicts_read(v, a, "ruby", counting_parse, &p), 0);
	assert_int_equal(parse_calls, 1);
	interp_verdicts_get_stats(v, &st);
	assert_int_equal(st.deferred, 1);
	if (geteuid() == 0) {
		/* One owned by root is parsed at once. */
		int r = new_file(dir, 2, 3);

		assert_int_equal(fchown(r, 0, 0), 0);
		assert_int_equal(interp_verdicts_read(v, r, "ruby", counting_parse, &p), 0);
		assert_int_equal(parse_calls, 2);
		parse_calls = 1;
		close(r);
	}
	/* The next second has budget again. */
	usleep(1100 * 1000);
	assert_int_equal(interp_verdicts_read(v, b, "ruby", counting_parse, &p), 0);
	assert_int_equal(parse_calls, 2);
	close(a);
	close(b);
	interp_verdicts_free(v);
	tmpdir_remove(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parsed_once_per_file),
		cmocka_unit_test(test_bounded_and_counted),
		cmocka_unit_test(test_budget_defers_new_files),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
