// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Unit tests for perf_map: JIT map files and the container (NSpid) path, on a fake proc root. */
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

#include "symbolize/perf_map.h"
#include "tmpdir.h"
#include "text_file.h"

static int setup(void **state)
{
	*state = tmpdir_new("perfmap");
	return *state ? 0 : -1;
}

static void test_perf_map_finds_entries_and_later_entry_wins(void **state)
{
	char path[4096];
	uint64_t start, size;
	struct perf_map *pm;

	snprintf(path, sizeof(path), "%s/perf-1.map", (char *)*state);
	text_file_write(path, "7f0000001000 100 LazyCompile:*foo /app/x.js:3\n"
			      "7f0000000000 40 stub_a\n"
			      "this line is junk\n"
			      "7f0000002000 0 empty_entry\n"
			      "7f0000001000 20 recompiled_foo\n");
	pm = perf_map_new(path);
	assert_non_null(pm);
	assert_int_equal(perf_map_count(pm), 2);
	assert_string_equal(perf_map_find(pm, 0x7f0000000010, &start, &size), "stub_a");
	assert_int_equal(start, 0x7f0000000000);
	assert_int_equal(size, 0x40);
	assert_null(perf_map_find(pm, 0x7f0000000040, NULL, NULL));
	assert_string_equal(perf_map_find(pm, 0x7f000000101f, NULL, NULL), "recompiled_foo");
	assert_null(perf_map_find(pm, 0x7f0000001020, NULL, NULL));
	assert_null(perf_map_find(pm, 0x1000, NULL, NULL));
	perf_map_free(pm);
}

static void test_perf_map_keeps_spaces_in_names(void **state)
{
	char path[4096];
	struct perf_map *pm;

	snprintf(path, sizeof(path), "%s/perf-2.map", (char *)*state);
	text_file_write(path, "1000 10 Interpreter frame for (a b)\r\n");
	pm = perf_map_new(path);
	assert_non_null(pm);
	assert_string_equal(perf_map_find(pm, 0x1005, NULL, NULL), "Interpreter frame for (a b)");
	perf_map_free(pm);
}

static void test_perf_map_path_uses_innermost_nspid(void **state)
{
	const char *root = *state;
	char dir[2048], path[4096], want[4096];

	snprintf(dir, sizeof(dir), "%s/4242", root);
	assert_int_equal(mkdir(dir, 0755), 0);
	snprintf(path, sizeof(path), "%s/status", dir);
	text_file_write(path, "Name:\tjava\nPid:\t4242\nNSpid:\t4242\t17\t7\nPPid:\t1\n");
	assert_int_equal(perf_map_nspid(root, 4242), 7);
	assert_int_equal(perf_map_path(root, "/tmp", 4242, path, sizeof(path)), 0);
	snprintf(want, sizeof(want), "%s/4242/root/tmp/perf-7.map", root);
	assert_string_equal(path, want);

	snprintf(path, sizeof(path), "%s/status", dir);
	text_file_write(path, "Name:\told\nPid:\t4242\n"); /* kernels without NSpid */
	assert_int_equal(perf_map_nspid(root, 4242), 4242);
	assert_int_equal(perf_map_nspid(root, 999), -ENOENT);
}

static void test_perf_map_reads_through_container_root(void **state)
{
	const char *root = *state;
	char path[4096];
	struct perf_map *pm;

	snprintf(path, sizeof(path), "%s/77", root);
	assert_int_equal(mkdir(path, 0755), 0);
	snprintf(path, sizeof(path), "%s/77/status", root);
	text_file_write(path, "NSpid:\t77\t1\n");
	snprintf(path, sizeof(path), "%s/77/root", root);
	assert_int_equal(mkdir(path, 0755), 0);
	snprintf(path, sizeof(path), "%s/77/root/tmp", root);
	assert_int_equal(mkdir(path, 0755), 0);
	snprintf(path, sizeof(path), "%s/77/root/tmp/perf-1.map", root);
	text_file_write(path, "5000 100 jitted_in_container\n");
	assert_int_equal(perf_map_path(root, "/tmp", 77, path, sizeof(path)), 0);
	pm = perf_map_new(path);
	assert_non_null(pm);
	assert_string_equal(perf_map_find(pm, 0x5080, NULL, NULL), "jitted_in_container");
	perf_map_free(pm);
	assert_null(perf_map_new("/nonexistent/perf-1.map"));
	assert_int_equal(errno, ENOENT);
}

/* A perf map is the process's input: caps on bytes and lines, over-long lines skipped, and a
 * huge (sparse) file read only up to the byte cap. */
static void test_perf_map_stops_at_byte_and_line_caps(void **state)
{
	struct perf_map_limits lim = { .max_bytes = 64, .max_lines = 1000 };
	char path[4096], longline[PERF_MAP_MAX_LINE + 100];
	struct perf_map *pm;
	int fd, capped = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/perf-2.map", (char *)*state);
	f = fopen(path, "w");
	assert_non_null(f);
	memset(longline, 'x', sizeof(longline) - 1);
	longline[sizeof(longline) - 1] = '\0';
	fprintf(f, "1000 10 first\n%s\n2000 10 after_long\n3000 10 third", longline);
	fclose(f);
	fd = open(path, O_RDONLY);
	assert_true(fd >= 0);
	pm = perf_map_read_fd(fd, NULL, &capped); /* defaults: everything fits */
	assert_non_null(pm);
	assert_false(capped);
	assert_int_equal(perf_map_count(pm), 3);
	assert_string_equal(perf_map_find(pm, 0x2001, NULL, NULL), "after_long");
	assert_string_equal(perf_map_find(pm, 0x3001, NULL, NULL), "third"); /* no newline */
	perf_map_free(pm);
	assert_int_equal(lseek(fd, 0, SEEK_SET), 0);
	pm = perf_map_read_fd(fd, &lim, &capped); /* 64 bytes: only the first line */
	assert_non_null(pm);
	assert_true(capped);
	assert_int_equal(perf_map_count(pm), 1);
	perf_map_free(pm);
	close(fd);

	/* 8 GB of nothing (sparse): read stops at the cap. */
	snprintf(path, sizeof(path), "%s/perf-3.map", (char *)*state);
	fd = open(path, O_RDWR | O_CREAT, 0644);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "1000 10 a\n2000 10 b\n3000 10 c\n", 30), 30);
	assert_int_equal(ftruncate(fd, 8ull << 30), 0);
	assert_int_equal(lseek(fd, 0, SEEK_SET), 0);
	lim = (struct perf_map_limits){ .max_bytes = 1 << 20, .max_lines = 2 };
	capped = 0;
	pm = perf_map_read_fd(fd, &lim, &capped);
	assert_non_null(pm);
	assert_true(capped);
	assert_int_equal(perf_map_count(pm), 2); /* the line cap */
	perf_map_free(pm);
	close(fd);
}

static void test_perf_map_refuses_fifo_and_device_symlink(void **state)
{
	char path[4096];

	snprintf(path, sizeof(path), "%s/perf-4.map", (char *)*state);
	assert_int_equal(mkfifo(path, 0644), 0);
	assert_null(perf_map_new(path)); /* returns at once: no writer needed */
	assert_int_equal(errno, EINVAL);
	snprintf(path, sizeof(path), "%s/perf-5.map", (char *)*state);
	assert_int_equal(symlink("/dev/zero", path), 0);
	assert_null(perf_map_new(path));
	assert_int_equal(errno, ELOOP);
}

static void append_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "a");

	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

/* Lines a JIT appends are read from where the last read stopped: an unfinished last line is read
 * again once complete, a new entry at a known address replaces the old one, and the caps count
 * the whole file. */
static void test_perf_map_append_reads_only_new_lines(void **state)
{
	struct perf_map_limits lim = { .max_bytes = 4096, .max_lines = 6 };
	struct perf_map *pm;
	char path[4096];
	int fd, capped = 0;

	snprintf(path, sizeof(path), "%s/perf-2.map", (char *)*state);
	text_file_write(path, "1000 10 first\n3000 10 third\n50");
	fd = open(path, O_RDONLY);
	pm = perf_map_read_fd(fd, &lim, &capped);
	assert_non_null(pm);
	assert_int_equal(perf_map_count(pm), 2); /* "50": a line without its size yet */
	assert_int_equal(perf_map_offset(pm), strlen("1000 10 first\n3000 10 third\n"));
	append_file(path, "00 10 fifth\n2000 10 second\n1000 8 first_again\n");
	assert_int_equal(perf_map_append_fd(pm, fd, &lim, &capped), 0);
	assert_false(capped);
	assert_int_equal(perf_map_count(pm), 4);
	assert_string_equal(perf_map_find(pm, 0x5004, NULL, NULL), "fifth");
	assert_string_equal(perf_map_find(pm, 0x2004, NULL, NULL), "second");
	assert_string_equal(perf_map_find(pm, 0x1004, NULL, NULL), "first_again");
	assert_string_equal(perf_map_find(pm, 0x3004, NULL, NULL), "third");
	/* Nothing new: nothing read. Then the line cap (6 lines in all) stops the next append. */
	assert_int_equal(perf_map_append_fd(pm, fd, &lim, &capped), 0);
	assert_int_equal(perf_map_count(pm), 4);
	append_file(path, "6000 10 sixth\n7000 10 seventh\n");
	assert_int_equal(perf_map_append_fd(pm, fd, &lim, &capped), 0);
	assert_true(capped);
	assert_string_equal(perf_map_find(pm, 0x6004, NULL, NULL), "sixth");
	assert_null(perf_map_find(pm, 0x7004, NULL, NULL));
	close(fd);
	perf_map_free(pm);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_perf_map_finds_entries_and_later_entry_wins,
						setup, tmpdir_teardown),
		cmocka_unit_test_setup_teardown(test_perf_map_keeps_spaces_in_names, setup,
						tmpdir_teardown),
		cmocka_unit_test_setup_teardown(test_perf_map_path_uses_innermost_nspid, setup,
						tmpdir_teardown),
		cmocka_unit_test_setup_teardown(test_perf_map_stops_at_byte_and_line_caps, setup,
						tmpdir_teardown),
		cmocka_unit_test_setup_teardown(test_perf_map_refuses_fifo_and_device_symlink,
						setup, tmpdir_teardown),
		cmocka_unit_test_setup_teardown(test_perf_map_append_reads_only_new_lines, setup,
						tmpdir_teardown),
		cmocka_unit_test_setup_teardown(test_perf_map_reads_through_container_root, setup,
						tmpdir_teardown),
	};

	return cmocka_run_group_tests_name("perf_map", tests, NULL, NULL);
}
