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

	assert_int_equal(
		local_out_write(dir, T0, 1, "checkout", data, sizeof(data), path, sizeof(path)), 0);
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
		{ T0 - 1000000, 1 }, /* 1 ms earlier */
		{ T0, 9 },
		{ T0 + 999000000, 2 }, /* same second, later ms */
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

/* Another kind of profile sits beside the CPU one of the same window, named after its kind. */
static void test_local_out_names_kind_after_service(void **state)
{
	char *names[4];
	size_t n;

	assert_int_equal(local_out_write(*state, T0, 1, "svc", data, sizeof(data), NULL, 0), 0);
	assert_int_equal(
		local_out_write_kind(*state, T0, 2, "svc", "off_cpu", data, sizeof(data), NULL, 0),
		0);
	n = list_dir(*state, names, 4);
	assert_int_equal(n, 2);
	assert_string_equal(names[0], "20231114T221320.123Z-000001-svc.pb.gz");
	assert_string_equal(names[1], "20231114T221320.123Z-000002-svc.off_cpu.pb.gz");
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
	assert_int_equal(
		local_out_write(*state, T0, 1, "s", data, sizeof(data), path, sizeof(path)),
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

/* A directory deleted under a running agent is created again at the next write, and counted. */
static void test_local_out_recreates_a_deleted_directory(void **state)
{
	char dir[4096], path[4200], *names[4];
	struct local_out lo;
	size_t n;

	snprintf(dir, sizeof(dir), "%s/a/out", (char *)*state);
	assert_int_equal(local_out_open(&lo, dir), 0);
	assert_int_equal(local_out_put(&lo, T0, 1, "s", NULL, data, sizeof(data)), 0);
	snprintf(path, sizeof(path), "%s/20231114T221320.123Z-000001-s.pb.gz", dir);
	assert_int_equal(unlink(path), 0);
	assert_int_equal(rmdir(dir), 0);
	snprintf(path, sizeof(path), "%s/a", (char *)*state);
	assert_int_equal(rmdir(path), 0); /* its parent too, as `rm -r` would */
	assert_int_equal(local_out_put(&lo, T0, 2, "s", NULL, data, sizeof(data)), 0);
	assert_int_equal(lo.dir_recreated, 1);
	assert_int_equal(rmdir(path) == 0, 0); /* not empty: the profile is there */
	n = list_dir(dir, names, 4);
	assert_int_equal(n, 1);
	assert_string_equal(names[0], "20231114T221320.123Z-000002-s.pb.gz");
	free_names(names, n);
	assert_int_equal(local_out_put(&lo, T0, 3, "s", NULL, data, sizeof(data)), 0);
	assert_int_equal(lo.dir_recreated, 1); /* it was there this time */
}

/* What a SIGKILL between create and rename leaves is removed at start; nothing else is. */
static void test_local_out_open_removes_only_our_temp_files(void **state)
{
	static const char *const ours[] = {
		".20231114T221320.123Z-000001-checkout.pb.gz.tmp",
		".20261121T052244.867Z-1234567-a.b_c-d.pb.gz.tmp",
	};
	static const char *const kept[] = {
		"20231114T221320.123Z-000001-checkout.pb.gz", /* a profile */
		".20231114T221320.123Z-000001-x.pb.gz.tmp.bak", /* not our suffix */
		".2023111xT221320.123Z-000001-x.pb.gz.tmp", /* not our stamp */
		".20231114T221320.123Z-01-x.pb.gz.tmp", /* short sequence */
		"notes.tmp", /* somebody else's */
	};
	char dir[4096], path[4200], target[4200], *names[16];
	struct local_out lo;
	size_t i, n;

	snprintf(dir, sizeof(dir), "%s", (char *)*state);
	for (i = 0; i < 2; i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, ours[i]);
		touch(path);
	}
	for (i = 0; i < sizeof(kept) / sizeof(kept[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, kept[i]);
		touch(path);
	}
	/* A symlink and a directory with our name are not ours to delete (nor to follow). */
	snprintf(target, sizeof(target), "%s/target", dir);
	touch(target);
	snprintf(path, sizeof(path), "%s/.20231114T221320.123Z-000009-link.pb.gz.tmp", dir);
	assert_int_equal(symlink(target, path), 0);
	snprintf(path, sizeof(path), "%s/.20231114T221320.123Z-000009-dir.pb.gz.tmp", dir);
	assert_int_equal(mkdir(path, 0755), 0);

	assert_int_equal(local_out_open(&lo, dir), 0);
	assert_int_equal(lo.temp_removed, 2);
	n = list_dir(dir, names, 16);
	assert_int_equal(n, sizeof(kept) / sizeof(kept[0]) + 3);
	for (i = 0; i < n; i++)
		if (strstr(names[i], "checkout.pb.gz.tmp") || strstr(names[i], "a.b_c-d"))
			fail_msg("%s was not removed", names[i]);
	free_names(names, n);
	assert_int_equal(access(target, F_OK), 0);
	assert_int_equal(local_out_remove_temp(dir), 0);
	snprintf(path, sizeof(path), "%s/missing", dir);
	assert_int_equal(local_out_remove_temp(path), -ENOENT);
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
		cmocka_unit_test_setup_teardown(test_local_out_names_kind_after_service, setup_dir,
						teardown_dir),
		cmocka_unit_test_setup_teardown(test_local_out_sanitises_service_names, setup_dir,
						teardown_dir),
		cmocka_unit_test_setup_teardown(test_local_out_unwritable_dir_gives_errno,
						setup_dir, teardown_dir),
		cmocka_unit_test_setup_teardown(test_local_out_recreates_a_deleted_directory,
						setup_dir, teardown_dir),
		cmocka_unit_test_setup_teardown(test_local_out_open_removes_only_our_temp_files,
						setup_dir, teardown_dir),
	};

	return cmocka_run_group_tests_name("local_out", tests, NULL, NULL);
}
