// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Unit tests for elf_guard: header caps (a million section headers, extended numbering), reading
 * without mmap, DWARF size accounting and sealed private copies. */
#define _GNU_SOURCE
#include <elf.h>
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
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "util/elf_guard.h"
#include "fixture_build.h"
#include "tmpdir.h"
#include "crafted_elf.h"

static void test_elf_guard_refuses_a_million_sections_at_once(void **state)
{
	const struct fixture_set *fs = *state;
	char path[4096];
	struct timespec t0, t1;
	int fd;

	snprintf(path, sizeof(path), "%s/million.so", fs->dir);
	assert_int_equal(crafted_elf_extend_sections(fs->lib, path, 1000000), 0);
	fd = open(path, O_RDONLY);
	assert_true(fd >= 0);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	assert_int_equal(elf_guard_check(fd), -E2BIG);
	assert_null(elf_guard_begin(fd));
	assert_int_equal(errno, E2BIG);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	/* Decided from the headers alone: microseconds, not the seconds libelf takes (the bound
	 * leaves room for a loaded machine). */
	assert_true((t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000 < 500);
	close(fd);
}

static void test_elf_guard_refuses_tables_past_the_end(void **state)
{
	const struct fixture_set *fs = *state;
	char path[4096];
	int fd;

	/* 100 headers claimed, none written: the table ends past the file. */
	snprintf(path, sizeof(path), "%s/short.so", fs->dir);
	assert_int_equal(crafted_elf_extend_sections(fs->lib, path, 100), 0);
	assert_int_equal(fixture_sh("truncate -s -512 %s", path), 0);
	fd = open(path, O_RDONLY);
	assert_true(fd >= 0);
	assert_int_equal(elf_guard_check(fd), -EINVAL);
	close(fd);
}

static void test_elf_guard_reads_a_real_library_without_mapping_it(void **state)
{
	const struct fixture_set *fs = *state;
	char maps[64], line[4096];
	int fd, mapped = 0;
	FILE *f;
	Elf *elf;

	fd = open(fs->lib, O_RDONLY);
	assert_true(fd >= 0);
	assert_int_equal(elf_guard_check(fd), 0);
	elf = elf_guard_begin(fd);
	assert_non_null(elf);
	assert_true(elf_guard_dwarf_bytes(elf, fd) > 0); /* built with -g */
	snprintf(maps, sizeof(maps), "/proc/%d/maps", (int)getpid());
	f = fopen(maps, "r");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f))
		mapped |= strstr(line, fs->lib) != NULL;
	fclose(f);
	assert_false(mapped);
	elf_end(elf);
	close(fd);
}

static void test_elf_guard_private_copy_is_sealed(void **state)
{
	const struct fixture_set *fs = *state;
	struct stat a, b;
	int fd, copy;

	fd = open(fs->lib, O_RDONLY);
	assert_true(fd >= 0);
	assert_int_equal(elf_guard_private_copy(fd, 16), -E2BIG);
	copy = elf_guard_private_copy(fd, 1 << 30);
	assert_true(copy >= 0);
	assert_int_equal(fstat(fd, &a), 0);
	assert_int_equal(fstat(copy, &b), 0);
	assert_int_equal(a.st_size, b.st_size);
	assert_int_equal(ftruncate(copy, 0), -1); /* sealed */
	assert_int_equal(errno, EPERM);
	close(copy);
	close(fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_elf_guard_refuses_a_million_sections_at_once),
		cmocka_unit_test(test_elf_guard_refuses_tables_past_the_end),
		cmocka_unit_test(test_elf_guard_reads_a_real_library_without_mapping_it),
		cmocka_unit_test(test_elf_guard_private_copy_is_sealed),
	};

	return cmocka_run_group_tests_name("elf_guard", tests, fixture_group_setup,
					   fixture_group_teardown);
}
