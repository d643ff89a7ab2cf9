// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Unit tests for file_find: a needle anywhere in the range (also split across two reads), not
 * outside it, and a range that runs past the end of the file. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <cmocka.h>

#include "util/file_find.h"

#define FILE_BYTES (3 * FILE_FIND_CHUNK + 100)
static const char needle[] = ".spanprofGoSpanSet";

/* An anonymous file of FILE_BYTES zero bytes with the needle at `at` (none when at < 0). */
static int file_with_needle_at(long at)
{
	int fd = memfd_create("file-find", MFD_CLOEXEC);

	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, FILE_BYTES), 0);
	if (at >= 0)
		assert_int_equal(pwrite(fd, needle, strlen(needle), at), (ssize_t)strlen(needle));
	return fd;
}

static void test_file_find_sees_the_needle_anywhere_in_the_range(void **state)
{
	const long at[] = { 0,
			    1,
			    FILE_FIND_CHUNK - 5,
			    FILE_FIND_CHUNK,
			    2 * FILE_FIND_CHUNK - 1,
			    FILE_BYTES - (long)strlen(needle) };
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(at) / sizeof(at[0]); i++) {
		int fd = file_with_needle_at(at[i]);

		assert_int_equal(file_find(fd, 0, FILE_BYTES, needle, strlen(needle)), 1);
		close(fd);
	}
}

static void test_file_find_looks_only_inside_the_range(void **state)
{
	int fd = file_with_needle_at(FILE_FIND_CHUNK + 10);
	size_t n = strlen(needle);

	(void)state;
	assert_int_equal(file_find(fd, 0, FILE_FIND_CHUNK + 10 + n - 1, needle, n), 0);
	assert_int_equal(file_find(fd, FILE_FIND_CHUNK + 11, FILE_BYTES, needle, n), 0);
	assert_int_equal(file_find(fd, FILE_FIND_CHUNK + 10, n, needle, n), 1);
	/* a range past the end is searched as far as the file goes */
	assert_int_equal(file_find(fd, FILE_FIND_CHUNK, UINT64_MAX / 2, needle, n), 1);
	close(fd);
	fd = file_with_needle_at(-1);
	assert_int_equal(file_find(fd, 0, FILE_BYTES, needle, n), 0);
	assert_int_equal(file_find(fd, 0, FILE_BYTES, needle, 0), -EINVAL);
	close(fd);
	assert_int_equal(file_find(-1, 0, FILE_BYTES, needle, n), -EBADF);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_file_find_sees_the_needle_anywhere_in_the_range),
		cmocka_unit_test(test_file_find_looks_only_inside_the_range),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
