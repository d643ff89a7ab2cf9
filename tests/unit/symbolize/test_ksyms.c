// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Unit tests for ksyms: kallsyms files written by the test, plus the machine's own. */
#define _GNU_SOURCE
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "symbolize/ksyms.h"
#include "tmpdir.h"

struct ks_state {
	char *dir;
	char path[4096];
};

static int setup(void **state)
{
	struct ks_state *s = calloc(1, sizeof(*s));

	if (!s)
		return -1;
	s->dir = tmpdir_new("ksyms");
	if (!s->dir) {
		free(s);
		return -1;
	}
	snprintf(s->path, sizeof(s->path), "%s/kallsyms", s->dir);
	*state = s;
	return 0;
}

static int teardown(void **state)
{
	struct ks_state *s = *state;

	tmpdir_remove(s->dir);
	free(s);
	return 0;
}

static const char *write_file(void **state, const char *text)
{
	struct ks_state *s = *state;
	FILE *f = fopen(s->path, "w");

	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	return s->path;
}

static void test_ksyms_finds_nearest_lower_symbol_unsorted_input(void **state)
{
	struct ksyms *ks = ksyms_new(write_file(state, "ffffffff81002000 T schedule\n"
						       "ffffffff81000000 T _stext\n"
						       "ffffffff81001000 t do_idle\n"
						       "ffffffff82000000 D some_data\n"
						       "ffffffff81003000 W weak_fn\n"));
	struct ksym k;

	assert_non_null(ks);
	assert_int_equal(ksyms_count(ks), 4); /* data symbols are not code */
	assert_false(ksyms_find(ks, 0xffffffff80ffffffull, &k));
	assert_true(ksyms_find(ks, 0xffffffff81001abcull, &k));
	assert_string_equal(k.name, "do_idle");
	assert_int_equal(k.addr, 0xffffffff81001000ull);
	assert_null(k.module);
	assert_true(ksyms_find(ks, 0xffffffff81002000ull, &k));
	assert_string_equal(k.name, "schedule");
	assert_true(ksyms_find(ks, 0xffffffff81003010ull, &k));
	assert_string_equal(k.name, "weak_fn");
	/* Entries and names, nothing more: 16 bytes a symbol plus the names (the pool grew as
	 * an mmapped block, trimmed to whole pages). */
	assert_true(ksyms_bytes(ks) >= 4 * 16 + sizeof("schedule_stextdo_idleweak_fn") - 1);
	assert_true(ksyms_bytes(ks) <= 4 * 16 + 4096);
	ksyms_free(ks);
}

static void test_ksyms_reports_module_names(void **state)
{
	struct ksyms *ks = ksyms_new(write_file(state, "ffffffff81000000 T _stext\n"
						       "ffffffffc0100000 t ext4_readdir\t[ext4]\n"
						       "ffffffffc0100400 T ext4_sync_fs\t[ext4]\n"
						       "ffffffffc0200000 t xfs_bmap\t[xfs]\n"));
	struct ksym k;

	assert_non_null(ks);
	assert_true(ksyms_find(ks, 0xffffffffc0100410ull, &k));
	assert_string_equal(k.name, "ext4_sync_fs");
	assert_string_equal(k.module, "ext4");
	assert_true(ksyms_find(ks, 0xffffffffc0200001ull, &k));
	assert_string_equal(k.name, "xfs_bmap");
	assert_string_equal(k.module, "xfs");
	ksyms_free(ks);
}

static void test_ksyms_refuses_all_zero_addresses(void **state)
{
	struct ksyms *ks = ksyms_new(write_file(state, "0000000000000000 T _stext\n"
						       "0000000000000000 T schedule\n"));

	assert_null(ks);
	assert_int_equal(errno, EACCES);
}

static void test_ksyms_reports_missing_and_empty_files(void **state)
{
	assert_null(ksyms_new("/nonexistent/kallsyms"));
	assert_int_equal(errno, ENOENT);
	assert_null(ksyms_new(write_file(state, "not kallsyms at all\n\n")));
	assert_int_equal(errno, ENODATA);
}

static void test_ksyms_loads_this_kernel(void **state)
{
	struct ksyms *ks;
	struct ksym k;

	(void)state;
	ks = ksyms_new("/proc/kallsyms");
	if (!ks && errno == EACCES)
		skip(); /* kptr_restrict hides addresses on this machine */
	assert_non_null(ks);
	assert_true(ksyms_count(ks) > 1000);
	assert_true(ksyms_find(ks, UINT64_MAX, &k));
	assert_true(ksyms_find(ks, k.addr, &k));
	printf("  %zu text symbols in %zu bytes\n", ksyms_count(ks), ksyms_bytes(ks));
	assert_true(ksyms_bytes(ks) < ksyms_count(ks) * 64);
	ksyms_free(ks);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(
			test_ksyms_finds_nearest_lower_symbol_unsorted_input, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ksyms_reports_module_names, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ksyms_refuses_all_zero_addresses, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_ksyms_reports_missing_and_empty_files, setup,
						teardown),
		cmocka_unit_test(test_ksyms_loads_this_kernel),
	};

	return cmocka_run_group_tests_name("ksyms", tests, NULL, NULL);
}
