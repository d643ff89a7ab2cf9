// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Unit tests for proc_file: FIFOs, devices, symlinks (final, intermediate, escaping a root) and
 * foreign owners are refused without blocking; regular files open. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "util/proc_file.h"
#include "tmpdir.h"
#include "text_file.h"

static int setup(void **state)
{
	*state = tmpdir_new("procfile");
	return *state ? 0 : -1;
}

static void test_proc_file_refuses_fifo_without_blocking(void **state)
{
	char path[512];
	struct timespec t0, t1;

	snprintf(path, sizeof(path), "%s/fifo", (char *)*state);
	assert_int_equal(mkfifo(path, 0644), 0);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	/* No writer: a blocking open would never return. */
	assert_int_equal(proc_file_open(NULL, path, 0, NULL), -EINVAL);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	assert_true(t1.tv_sec - t0.tv_sec < 2);
}

static void test_proc_file_refuses_devices_and_symlinks(void **state)
{
	char path[512], dir[512];

	assert_int_equal(proc_file_open(NULL, "/dev/zero", 0, NULL), -EINVAL);
	snprintf(path, sizeof(path), "%s/zero", (char *)*state);
	assert_int_equal(symlink("/dev/zero", path), 0);
	assert_int_equal(proc_file_open(NULL, path, 0, NULL), -ELOOP);
	/* A symlinked directory on the way: refused only when no symlink at all is allowed. */
	snprintf(dir, sizeof(dir), "%s/real", (char *)*state);
	assert_int_equal(mkdir(dir, 0755), 0);
	snprintf(path, sizeof(path), "%s/real/file", (char *)*state);
	text_file_write(path, "x");
	snprintf(path, sizeof(path), "%s/linkdir", (char *)*state);
	assert_int_equal(symlink(dir, path), 0);
	snprintf(path, sizeof(path), "%s/linkdir/file", (char *)*state);
	assert_int_equal(proc_file_open(NULL, path, PROC_FILE_NO_SYMLINKS, NULL), -ELOOP);
	{
		int fd = proc_file_open(NULL, path, 0, NULL);

		assert_true(fd >= 0);
		close(fd);
	}
}

/* An absolute symlink inside a process's root resolves inside that root, never to our files. */
static void test_proc_file_keeps_symlinks_inside_the_root(void **state)
{
	char root[256], path[512];
	struct stat st;
	int fd;

	snprintf(root, sizeof(root), "%s/root", (char *)*state);
	assert_int_equal(mkdir(root, 0755), 0);
	snprintf(path, sizeof(path), "%s/etc", root);
	assert_int_equal(mkdir(path, 0755), 0);
	snprintf(path, sizeof(path), "%s/etc/hostname", root);
	text_file_write(path, "inside\n");
	snprintf(path, sizeof(path), "%s/lib", root);
	assert_int_equal(symlink("/etc", path), 0); /* a container's "/lib -> /etc" */
	fd = proc_file_open(root, "/lib/hostname", 0, &st);
	assert_true(fd >= 0);
	{
		char buf[16] = "";

		assert_int_equal(read(fd, buf, sizeof(buf) - 1), 7);
		assert_string_equal(buf, "inside\n");
	}
	close(fd);
	assert_int_equal(proc_file_open(root, "/../../../../etc/passwd", 0, NULL), -ENOENT);
}

static void test_proc_file_checks_the_owner_from_status(void **state)
{
	char proc[256], path[512], root[256];
	int fd;

	snprintf(proc, sizeof(proc), "%s/proc", (char *)*state);
	snprintf(path, sizeof(path), "%s/42", proc);
	assert_int_equal(mkdir(proc, 0755), 0);
	assert_int_equal(mkdir(path, 0755), 0);
	snprintf(path, sizeof(path), "%s/42/status", proc);
	text_file_write(path, "Name:\tjit\nUid:\t1234\t1234\t1234\t1234\n");
	snprintf(root, sizeof(root), "%s/root", (char *)*state);
	assert_int_equal(mkdir(root, 0755), 0);
	snprintf(path, sizeof(path), "%s/perf-42.map", root);
	text_file_write(path, "1000 10 f\n");
	/* Owned by us (root), not by uid 1234. */
	assert_int_equal(proc_file_open_owned(proc, 42, root, "/perf-42.map", NULL), -EPERM);
	assert_int_equal(chown(path, 1234, 1234), 0);
	fd = proc_file_open_owned(proc, 42, root, "/perf-42.map", NULL);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(proc_file_open_owned(proc, 43, root, "/perf-42.map", NULL), -ENOENT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_proc_file_refuses_fifo_without_blocking, setup,
						tmpdir_teardown),
		cmocka_unit_test_setup_teardown(test_proc_file_refuses_devices_and_symlinks, setup,
						tmpdir_teardown),
		cmocka_unit_test_setup_teardown(test_proc_file_keeps_symlinks_inside_the_root,
						setup, tmpdir_teardown),
		cmocka_unit_test_setup_teardown(test_proc_file_checks_the_owner_from_status, setup,
						tmpdir_teardown),
	};

	return cmocka_run_group_tests_name("proc_file", tests, NULL, NULL);
}
