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
	/* Addresses and names, nothing more: 8 bytes a symbol, one run, plus the names (the pool
	 * grew as an mmapped block, trimmed to whole pages). */
	assert_true(ksyms_bytes(ks) >= 4 * 8 + sizeof("schedule_stextdo_idleweak_fn") - 1);
	assert_true(ksyms_bytes(ks) <= 4 * 8 + 16 + 4096);
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

/* A function's padding symbol shares the function's name in the table, and still reads back
 * whole; so do aliases at one address, in file order. */
static void test_ksyms_padding_symbols_share_their_function_name(void **state)
{
	struct ksyms *ks = ksyms_new(write_file(state, "ffffffff81000ff0 t __pfx_do_idle\n"
						       "ffffffff81001000 t do_idle\n"
						       "ffffffff81001ff0 T __pfx_schedule\n"
						       "ffffffff81002000 T schedule\n"
						       "ffffffff81002000 T schedule_alias\n"
						       "ffffffff81003000 T __pfx_\n"));
	struct ksym k;

	assert_non_null(ks);
	assert_int_equal(ksyms_count(ks), 6);
	assert_true(ksyms_find(ks, 0xffffffff81000ff4ull, &k));
	assert_string_equal(k.name, "__pfx_do_idle");
	assert_int_equal(k.addr, 0xffffffff81000ff0ull);
	assert_true(ksyms_find(ks, 0xffffffff81001004ull, &k));
	assert_string_equal(k.name, "do_idle");
	assert_true(ksyms_find(ks, 0xffffffff81001ff0ull, &k));
	assert_string_equal(k.name, "__pfx_schedule");
	assert_true(ksyms_find(ks, 0xffffffff81002001ull, &k));
	assert_string_equal(k.name, "schedule_alias");
	assert_true(ksyms_find(ks, 0xffffffff81003000ull, &k));
	assert_string_equal(k.name, "__pfx_"); /* nothing after the prefix: a name of its own */
	/* "do_idle" and "schedule" once each, "schedule_alias" and "__pfx_" */
	assert_true(ksyms_bytes(ks) <= 6 * 8 + 16 + 4096);
	ksyms_free(ks);
}

/* Symbols more than 4 GiB apart (a 32-bit offset each) and modules in between. */
static void test_ksyms_far_apart_and_module_runs(void **state)
{
	struct ksyms *ks = ksyms_new(write_file(state, "0000000000001000 T low\n"
						       "ffffffff81000000 T _stext\n"
						       "ffffffffc0000000 t a_fn\t[a]\n"
						       "ffffffffc0001000 t b_fn\t[b]\n"
						       "ffffffffc0002000 t a_fn2\t[a]\n"
						       "ffffffffffff0000 T top\n"));
	struct ksym k;

	assert_non_null(ks);
	assert_false(ksyms_find(ks, 0xfff, &k));
	assert_true(ksyms_find(ks, 0x1000, &k));
	assert_string_equal(k.name, "low");
	assert_true(ksyms_find(ks, 0xffffffff80000000ull, &k)); /* far past low, below _stext */
	assert_string_equal(k.name, "low");
	assert_int_equal(k.addr, 0x1000);
	assert_true(ksyms_find(ks, 0xffffffff81000005ull, &k));
	assert_string_equal(k.name, "_stext");
	assert_null(k.module);
	assert_true(ksyms_find(ks, 0xffffffffc0000fffull, &k));
	assert_string_equal(k.name, "a_fn");
	assert_string_equal(k.module, "a");
	assert_true(ksyms_find(ks, 0xffffffffc0001000ull, &k));
	assert_string_equal(k.module, "b");
	assert_true(ksyms_find(ks, 0xffffffffc0003000ull, &k));
	assert_string_equal(k.name, "a_fn2");
	assert_string_equal(k.module, "a");
	assert_true(ksyms_find(ks, UINT64_MAX, &k));
	assert_string_equal(k.name, "top");
	assert_null(k.module);
	assert_int_equal(k.addr, 0xffffffffffff0000ull);
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
	assert_true(ksyms_bytes(ks) < ksyms_count(ks) * 32);
	ksyms_free(ks);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(
			test_ksyms_finds_nearest_lower_symbol_unsorted_input, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ksyms_reports_module_names, setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_ksyms_padding_symbols_share_their_function_name, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ksyms_far_apart_and_module_runs, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_ksyms_refuses_all_zero_addresses, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_ksyms_reports_missing_and_empty_files, setup,
						teardown),
		cmocka_unit_test(test_ksyms_loads_this_kernel),
	};

	return cmocka_run_group_tests_name("ksyms", tests, NULL, NULL);
}
