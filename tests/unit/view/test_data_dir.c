// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* data_dir: an output directory listed from file names alone. An empty directory lists nothing
 * (and hands qsort() no NULL array: UBSan caught `spanprof view` doing that); profiles come out
 * sorted by service, kind and window start, and other names are left out. */
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

#include "view/data_dir.h"

static int setup(void **state)
{
	char *dir = strdup("/tmp/spanprof-data-dir-XXXXXX");

	if (!dir || !mkdtemp(dir)) {
		free(dir);
		return -1;
	}
	*state = dir;
	return 0;
}

static int teardown(void **state)
{
	char cmd[256];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", (char *)*state);
	free(*state);
	return system(cmd) == 0 ? 0 : -1;
}

static void touch(const char *dir, const char *name)
{
	char path[512];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "x", 1), 1); /* not empty: empty files are reported */
	close(fd);
}

static void test_empty_directory_lists_nothing(void **state)
{
	struct problems pr = { 0 };
	struct data_dir dd = { 0 };

	assert_int_equal(data_dir_scan(&dd, *state, 100, &pr), 0);
	assert_int_equal(dd.nprofiles, 0);
	assert_int_equal(dd.nlogs, 0);
	assert_int_equal(pr.total, 0);
	data_dir_release(&dd);
}

static void test_profiles_sorted_and_other_names_left_out(void **state)
{
	struct problems pr = { 0 };
	struct data_dir dd = { 0 };

	touch(*state, "20261126T080002.000Z-2-shop.pb.gz");
	touch(*state, "20261126T080001.000Z-1-shop.pb.gz");
	touch(*state, "20261126T080001.000Z-1-cart.off_cpu.pb.gz");
	touch(*state, "shop.spans.jsonl");
	touch(*state, "notes.txt");
	touch(*state, ".20261126T080003.000Z-3-shop.pb.gz"); /* a file being written */

	assert_int_equal(data_dir_scan(&dd, *state, 100, &pr), 0);
	assert_int_equal(dd.nprofiles, 3);
	assert_int_equal(dd.nlogs, 1);
	assert_string_equal(dd.profiles[0].stem, "cart");
	assert_string_equal(dd.profiles[1].stem, "shop");
	assert_string_equal(dd.profiles[2].stem, "shop");
	assert_true(dd.profiles[1].start_ns < dd.profiles[2].start_ns);
	assert_string_equal(dd.logs[0].stem, "shop");
	data_dir_release(&dd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_empty_directory_lists_nothing, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_profiles_sorted_and_other_names_left_out,
						setup, teardown),
	};

	return cmocka_run_group_tests_name("data_dir", tests, NULL, NULL);
}
