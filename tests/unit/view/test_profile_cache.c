// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* profile_cache over a real directory (data_dir's listing): good profiles decoded and kept
 * under the budget (evictions counted); empty, truncated and corrupt files skipped, each
 * reported once with its reason, and never read twice. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "tmpdir.h"
#include "view/data_dir.h"
#include "view/profile_cache.h"
#include "view_fixture.h"

#define GOOD_CPU "20261125T101500.000Z-000000-shop.pb.gz"
#define GOOD_OFF "20261125T101500.000Z-000001-shop.off_cpu.pb.gz"
#define GOOD_NEXT "20261125T101510.000Z-000002-shop.pb.gz"
#define TRUNCATED "20261125T101520.000Z-000004-shop.pb.gz"
#define CORRUPT "20261125T101530.000Z-000006-shop.pb.gz"
#define EMPTY "20261125T101540.000Z-000008-shop.pb.gz"

struct fixture {
	char *dir;
	struct data_dir dd;
	struct problems pr;
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	uint8_t *cpu, *off, junk[300];
	size_t cpu_len, off_len, i;

	f->dir = tmpdir_new("view-cache");
	cpu = view_fixture_profile("cpu", 1, &cpu_len);
	off = view_fixture_profile("off_cpu", 1, &off_len);
	for (i = 0; i < sizeof(junk); i++)
		junk[i] = (uint8_t)(i * 31 + 7);
	if (!f->dir || !cpu || !off || view_fixture_write(f->dir, GOOD_CPU, cpu, cpu_len) ||
	    view_fixture_write(f->dir, GOOD_OFF, off, off_len) ||
	    view_fixture_write(f->dir, GOOD_NEXT, cpu, cpu_len) ||
	    view_fixture_write(f->dir, TRUNCATED, cpu, cpu_len / 2) ||
	    view_fixture_write(f->dir, CORRUPT, junk, sizeof(junk)) ||
	    view_fixture_write(f->dir, EMPTY, "", 0) ||
	    view_fixture_write(f->dir, ".20261125T101550.000Z-000010-shop.pb.gz.tmp", cpu, 10) ||
	    view_fixture_write(f->dir, "shop.spans.jsonl.1", "{}\n", 3) ||
	    view_fixture_write(f->dir, "notes.txt", "x", 1))
		return -1;
	free(cpu);
	free(off);
	*state = f;
	return data_dir_scan(&f->dd, f->dir, 100, &f->pr);
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	data_dir_release(&f->dd);
	tmpdir_remove(f->dir);
	free(f);
	return 0;
}

static long index_of(const struct data_dir *dd, const char *name)
{
	size_t i;

	for (i = 0; i < dd->nprofiles; i++)
		if (!strcmp(dd->profiles[i].name, name))
			return (long)i;
	return -1;
}

static void test_data_dir_lists_profiles_and_logs_by_name(void **state)
{
	struct fixture *f = *state;
	size_t n;
	long first;

	/* The empty file is reported, the temp file and notes.txt are not profiles. */
	assert_int_equal(f->dd.nprofiles, 5);
	assert_int_equal(f->dd.nlogs, 1);
	assert_string_equal(f->dd.logs[0].stem, "shop");
	assert_int_equal(f->pr.total, 1);
	assert_string_equal(f->pr.list[0].file, EMPTY);
	assert_string_equal(f->pr.list[0].why, "empty file");
	first = data_dir_find(&f->dd, "shop", VIEW_KIND_CPU, &n);
	assert_int_equal(n, 4);
	assert_string_equal(f->dd.profiles[first].name, GOOD_CPU);
	assert_true(f->dd.profiles[first + 1].start_ns - f->dd.profiles[first].start_ns ==
		    10000000000LL);
	first = data_dir_find(&f->dd, "shop", VIEW_KIND_OFF_CPU, &n);
	assert_int_equal(n, 1);
	assert_string_equal(f->dd.profiles[first].name, GOOD_OFF);
	assert_int_equal(data_dir_find(&f->dd, "nope", VIEW_KIND_CPU, &n), -1);
}

static void test_profile_cache_skips_bad_files_once(void **state)
{
	struct fixture *f = *state;
	struct profile_cache *pc = profile_cache_new(f->dd.nprofiles, 1 << 20, 1 << 20);
	struct profile_cache_stats st;
	const struct view_profile *p;
	int round;

	assert_non_null(pc);
	for (round = 0; round < 2; round++) {
		p = profile_cache_get(pc, f->dir, &f->dd, index_of(&f->dd, GOOD_CPU), &f->pr);
		assert_non_null(p);
		assert_int_equal(p->nsamples, 2);
		assert_null(
			profile_cache_get(pc, f->dir, &f->dd, index_of(&f->dd, TRUNCATED), &f->pr));
		assert_null(
			profile_cache_get(pc, f->dir, &f->dd, index_of(&f->dd, CORRUPT), &f->pr));
	}
	profile_cache_get_stats(pc, &st);
	assert_int_equal(st.loads, 1);
	assert_int_equal(st.hits, 1);
	assert_int_equal(st.failed, 2);
	/* The empty file from the listing, then the two read here, each once. */
	assert_int_equal(f->pr.total, 3);
	assert_string_equal(f->pr.list[1].file, TRUNCATED);
	assert_non_null(strstr(f->pr.list[1].why, "truncated"));
	assert_string_equal(f->pr.list[2].file, CORRUPT);
	profile_cache_free(pc);
}

static void test_profile_cache_evicts_under_its_budget(void **state)
{
	struct fixture *f = *state;
	struct profile_cache *pc = profile_cache_new(f->dd.nprofiles, 1, 1 << 20);
	struct profile_cache_stats st;

	/* A budget smaller than one profile: each holds until the next one is read. */
	assert_non_null(profile_cache_get(pc, f->dir, &f->dd, index_of(&f->dd, GOOD_CPU), &f->pr));
	assert_non_null(profile_cache_get(pc, f->dir, &f->dd, index_of(&f->dd, GOOD_OFF), &f->pr));
	assert_non_null(profile_cache_get(pc, f->dir, &f->dd, index_of(&f->dd, GOOD_NEXT), &f->pr));
	profile_cache_get_stats(pc, &st);
	assert_int_equal(st.loads, 3);
	assert_int_equal(st.evictions, 2);
	assert_true(st.bytes > 0 && st.bytes < 1 << 20);
	profile_cache_free(pc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_data_dir_lists_profiles_and_logs_by_name,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_profile_cache_skips_bad_files_once, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_profile_cache_evicts_under_its_budget, setup,
						teardown),
	};

	return cmocka_run_group_tests_name("profile_cache", tests, NULL, NULL);
}
