// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Unit tests for local_out: directory creation, atomic writes, time-sortable and sanitised file
 * names, and -errno on directories that cannot be written. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
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

#include "output/local_out.h"
#include "tmpdir.h"

#define T0 1700000000123456789LL /* 2023-11-14T22:13:20.123456789Z */

static const uint8_t data[] = { 0x1f, 0x8b, 0x08, 0x00, 'p', 'p' };

static int setup_dir(void **state)
{
	*state = tmpdir_new("local-out");
	return *state ? 0 : -1;
}

static int teardown_dir(void **state)
{
	tmpdir_remove(*state);
	return 0;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Sorted names of dir's entries (without . and ..); returns how many, up to max. */
static size_t list_dir(const char *dir, char **names, size_t max)
{
	struct dirent *de;
	size_t n = 0;
	DIR *d = opendir(dir);

	assert_non_null(d);
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		assert_true(n < max);
		names[n] = strdup(de->d_name);
		assert_non_null(names[n++]);
	}
	closedir(d);
	qsort(names, n, sizeof(*names), by_name);
	return n;
}

static void touch(const char *path)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	assert_int_equal(fclose(f), 0);
}

static void free_names(char **names, size_t n)
{
	while (n)
		free(names[--n]);
}

static void test_local_out_prepare_creates_parents(void **state)
{
	char path[4096], file[4096];
	struct stat st;

	snprintf(path, sizeof(path), "%s/a/b//c/", (char *)*state);
	assert_int_equal(local_out_prepare(path), 0);
	assert_int_equal(stat(path, &st), 0);
	assert_true(S_ISDIR(st.st_mode));
	assert_int_equal(local_out_prepare(path), 0); /* already there */
	snprintf(file, sizeof(file), "%s/a/file", (char *)*state);
	touch(file);
	assert_int_equal(local_out_prepare(file), -ENOTDIR);
	snprintf(path, sizeof(path), "%s/a/file/sub", (char *)*state);
	assert_int_equal(local_out_prepare(path), -ENOTDIR);
	assert_int_equal(local_out_prepare(""), -EINVAL);
}

static void test_local_out_writes_atomically_without_temp_files(void **state)
{
	const char *dir = *state;
	char path[4096], *names[4], buf[64];
	size_t n;
	FILE *f;

	assert_int_equal(local_out_write(dir, T0, 1, "checkout", data, sizeof(data), path,
					 sizeof(path)),
			 0);
	n = list_dir(dir, names, 4);
	assert_int_equal(n, 1);
	assert_string_equal(names[0], "20231114T221320.123Z-000001-checkout.pb.gz");
	assert_true(strncmp(path, dir, strlen(dir)) == 0);
	assert_string_equal(strrchr(path, '/') + 1, names[0]);
	f = fopen(path, "rb");
	assert_non_null(f);
	assert_int_equal(fread(buf, 1, sizeof(buf), f), sizeof(data));
	fclose(f);
	assert_memory_equal(buf, data, sizeof(data));
	free_names(names, n);
}

static void test_local_out_names_sort_by_time(void **state)
{
	/* Written out of order; expected order is by window start, then seq. */
	static const struct {
		int64_t ns;
		unsigned int seq;
	} w[] = {
		{ T0 + 86400000000000LL, 3 }, /* next day */
		{ T0, 10 },
		{ T0 - 1000000, 1 },          /* 1 ms earlier */
		{ T0, 9 },
		{ T0 + 999000000, 2 },        /* same second, later ms */
	};
	char *names[8];
	size_t i, n;

	for (i = 0; i < 5; i++)
		assert_int_equal(local_out_write(*state, w[i].ns, w[i].seq, "svc", data,
						 sizeof(data), NULL, 0),
				 0);
	n = list_dir(*state, names, 8);
	assert_int_equal(n, 5);
	assert_string_equal(names[0], "20231114T221320.122Z-000001-svc.pb.gz");
	assert_string_equal(names[1], "20231114T221320.123Z-000009-svc.pb.gz");
	assert_string_equal(names[2], "20231114T221320.123Z-000010-svc.pb.gz");
	assert_string_equal(names[3], "20231114T221321.122Z-000002-svc.pb.gz");
	assert_string_equal(names[4], "20231115T221320.123Z-000003-svc.pb.gz");
	free_names(names, n);
}

static void test_local_out_sanitises_service_names(void **state)
{
	char path[4096], *names[4];
	size_t n;

	assert_int_equal(local_out_write(*state, T0, 1, "my svc/../\xc3\xa9", data, sizeof(data),
					 path, sizeof(path)),
			 0);
	assert_int_equal(local_out_write(*state, T0, 2, "", data, sizeof(data), NULL, 0), 0);
	assert_int_equal(local_out_write(*state, T0, 3, NULL, data, sizeof(data), NULL, 0), 0);
	n = list_dir(*state, names, 4);
	assert_int_equal(n, 3);
	assert_string_equal(names[0], "20231114T221320.123Z-000001-my_svc_..___.pb.gz");
	assert_string_equal(names[1], "20231114T221320.123Z-000002-unknown_service.pb.gz");
	assert_string_equal(names[2], "20231114T221320.123Z-000003-unknown_service.pb.gz");
	free_names(names, n);
}

static void test_local_out_unwritable_dir_gives_errno(void **state)
{
	char missing[4096], file[4096], path[16], *names[4];
	size_t n;

	snprintf(missing, sizeof(missing), "%s/missing", (char *)*state);
	assert_int_equal(local_out_write(missing, T0, 1, "s", data, sizeof(data), NULL, 0),
			 -ENOENT);
	snprintf(file, sizeof(file), "%s/file", (char *)*state);
	touch(file);
	assert_int_equal(local_out_write(file, T0, 1, "s", data, sizeof(data), NULL, 0), -ENOTDIR);
	/* A path_out too small is refused before anything is written. */
	assert_int_equal(local_out_write(*state, T0, 1, "s", data, sizeof(data), path,
					 sizeof(path)),
			 -ENAMETOOLONG);
	/* Root ignores permission bits; only an unprivileged run can check EACCES. */
	if (geteuid() != 0) {
		assert_int_equal(chmod(*state, 0500), 0);
		assert_int_equal(local_out_write(*state, T0, 1, "s", data, sizeof(data), NULL, 0),
				 -EACCES);
		assert_int_equal(chmod(*state, 0700), 0);
	}
	n = list_dir(*state, names, 4);
	assert_int_equal(n, 1); /* only "file": no temp files left behind */
	assert_string_equal(names[0], "file");
	free_names(names, n);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_local_out_prepare_creates_parents, setup_dir,
						teardown_dir),
		cmocka_unit_test_setup_teardown(test_local_out_writes_atomically_without_temp_files,
						setup_dir, teardown_dir),
		cmocka_unit_test_setup_teardown(test_local_out_names_sort_by_time, setup_dir,
						teardown_dir),
		cmocka_unit_test_setup_teardown(test_local_out_sanitises_service_names, setup_dir,
						teardown_dir),
		cmocka_unit_test_setup_teardown(test_local_out_unwritable_dir_gives_errno,
						setup_dir, teardown_dir),
	};

	return cmocka_run_group_tests_name("local_out", tests, NULL, NULL);
}
