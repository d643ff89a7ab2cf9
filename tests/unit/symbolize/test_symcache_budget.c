// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Unit tests for the symbol budget of symcache: many files' symbol tables read in one drain under
 * a small budget. The bytes held stay within it after every lookup, what does not fit waits for
 * a later drain (counted), and a file whose table alone is larger is refused (counted). */
#define _GNU_SOURCE
#include <limits.h>
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

#include "fixture_build.h"
#include "symbolize/symcache.h"
#include "text_file.h"
#include "tmpdir.h"

#define NCOPIES 12
#define LIB_BASE 0x7f1200000000ull
#define LIB_STRIDE 0x1000000ull
#define PID 100

struct test_state {
	struct fixture_set fs; /* built once per group */
	char *root; /* fresh per test: the fake proc root and the library's copies */
	uint64_t lib_entry; /* symfix_lib_entry's ELF address in the library */
	struct symcache *sc;
};

static int group_setup(void **state)
{
	struct test_state *s = calloc(1, sizeof(*s));

	if (!s || fixture_build(&s->fs) ||
	    fixture_nm(s->fs.lib, "symfix_lib_entry", &s->lib_entry)) {
		if (s)
			fixture_release(&s->fs);
		free(s);
		return -1;
	}
	*state = s;
	return 0;
}

static int group_teardown(void **state)
{
	struct test_state *s = *state;

	fixture_release(&s->fs);
	free(s);
	return 0;
}

/* A fake process mapping NCOPIES copies of the library (each its own inode: its own module). */
static int setup(void **state)
{
	struct test_state *s = *state;
	char path[PATH_MAX], maps[16384] = "";
	int i;

	s->root = tmpdir_new("symbudget");
	if (!s->root)
		return -1;
	for (i = 0; i < NCOPIES; i++) {
		snprintf(path, sizeof(path), "%s/libcopy%d.so", s->root, i);
		if (fixture_sh("cp %s %s", s->fs.lib, path) ||
		    fixture_maps_lines(path, LIB_BASE + i * LIB_STRIDE, maps, sizeof(maps)))
			return -1;
	}
	snprintf(path, sizeof(path), "%s/%d", s->root, PID);
	if (mkdir(path, 0755))
		return -1;
	snprintf(path, sizeof(path), "%s/%d/maps", s->root, PID);
	text_file_write(path, maps);
	snprintf(path, sizeof(path), "%s/%d/root", s->root, PID);
	return symlink("/", path) ? -1 : 0;
}

static int teardown(void **state)
{
	struct test_state *s = *state;

	symcache_free(s->sc);
	s->sc = NULL;
	tmpdir_remove(s->root);
	s->root = NULL;
	return 0;
}

static struct symcache *new_cache(struct test_state *s, size_t budget)
{
	struct symcache_limits lim = {
		.max_modules = 64,
		.max_pids = 8,
		.max_bytes = budget,
		.max_addrs = 1, /* every lookup goes to the modules */
		.max_dwarf_bytes = 1, /* DWARF refused: lookups read the symbol tables */
		.proc_root = s->root,
		.debug_root = s->fs.debug_root,
		.perf_map_dir = "/tmp",
	};

	s->sc = symcache_new(&lim);
	assert_non_null(s->sc);
	return s->sc;
}

static uint64_t copy_addr(const struct test_state *s, int i)
{
	return LIB_BASE + i * LIB_STRIDE + s->lib_entry;
}

static struct symcache_stats stats(const struct test_state *s)
{
	struct symcache_stats st;

	symcache_get_stats(s->sc, &st);
	return st;
}

/* The bytes one copy holds once its table is read, measured without a budget. */
static size_t one_table_bytes(struct test_state *s)
{
	struct sym_frame f;
	size_t opened, bytes;

	new_cache(s, 0);
	assert_int_equal(symcache_prepare_pid(s->sc, PID), 0);
	opened = stats(s).symbol_bytes;
	symcache_resolve_user(s->sc, PID, copy_addr(s, 0), &f);
	assert_int_equal(f.nlines, 1);
	assert_string_equal(f.lines[0].function, "symfix_lib_entry");
	bytes = stats(s).symbol_bytes - opened + opened / NCOPIES;
	symcache_free(s->sc);
	s->sc = NULL;
	assert_true(bytes > 1024); /* .symtab, .strtab and the index at least */
	return bytes;
}

/* One drain asks for all copies under a budget of three and a half tables: the first three are
 * read, the rest wait (counted as deferred), and the bytes never pass the budget. Later drains
 * close the least recently used tables to make room (counted) and name every copy in the end. */
static void test_symbol_budget_holds_within_one_drain(void **state)
{
	struct test_state *s = *state;
	size_t table = one_table_bytes(s), budget = table * 7 / 2;
	int named[NCOPIES] = { 0 }, left = NCOPIES, rounds = 0, i;
	struct symcache_stats st;
	struct sym_frame f;

	new_cache(s, budget);
	assert_int_equal(symcache_prepare_pid(s->sc, PID), 0);
	assert_true(stats(s).symbol_bytes <= budget);
	symcache_new_round(s->sc);
	for (i = 0; i < NCOPIES; i++) {
		symcache_resolve_user(s->sc, PID, copy_addr(s, i), &f);
		st = stats(s);
		assert_true(st.symbol_bytes <= budget);
		assert_true(f.has_mapping); /* deferred or not, the frame keeps its file */
		if (f.nlines) {
			assert_string_equal(f.lines[0].function, "symfix_lib_entry");
			named[i] = 1;
			left--;
		}
	}
	st = stats(s);
	assert_int_equal(NCOPIES - left, 3);
	assert_true(st.symbol_deferred >= NCOPIES - 3);
	assert_int_equal(st.symbol_refused, 0);
	/* The tables read this drain stay open for it: asked again, none is reopened or reread. */
	for (i = 0; i < NCOPIES; i++) {
		if (!named[i])
			continue;
		symcache_resolve_user(s->sc, PID, copy_addr(s, i), &f);
		assert_int_equal(f.nlines, 1);
		assert_string_equal(f.lines[0].function, "symfix_lib_entry");
	}
	assert_int_equal(stats(s).symbol_bytes, st.symbol_bytes);
	assert_int_equal(stats(s).hits, st.hits + 3);

	while (left && rounds++ < NCOPIES) {
		symcache_new_round(s->sc);
		for (i = 0; i < NCOPIES; i++) {
			if (named[i])
				continue;
			symcache_resolve_user(s->sc, PID, copy_addr(s, i), &f);
			assert_true(stats(s).symbol_bytes <= budget);
			if (f.nlines) {
				assert_string_equal(f.lines[0].function, "symfix_lib_entry");
				named[i] = 1;
				left--;
			}
		}
	}
	st = stats(s);
	assert_int_equal(left, 0);
	assert_true(rounds <= NCOPIES / 3 + 1); /* three tables' worth each drain */
	assert_true(st.symbol_evictions >= NCOPIES - 3);
	assert_true(st.symbol_bytes <= budget);
}

/* A table larger than the whole budget is not read: refused once while its file stays open
 * (counted once, not per frame), its frames keep their file and build id, and the other files'
 * tables still fit and answer. */
static void test_symbol_budget_refuses_a_table_larger_than_itself(void **state)
{
	struct test_state *s = *state;
	size_t table = one_table_bytes(s), budget = table - 64;
	struct symcache_stats st;
	uint64_t opens_deferred;
	struct sym_frame f;
	int i;

	new_cache(s, budget);
	assert_int_equal(symcache_prepare_pid(s->sc, PID), 0);
	opens_deferred = stats(s).symbol_deferred; /* the snapshot's opens beyond the budget */
	for (i = 0; i < 3; i++) {
		symcache_new_round(s->sc);
		symcache_resolve_user(s->sc, PID, copy_addr(s, 0), &f);
		assert_int_equal(f.nlines, 0);
		assert_true(f.has_mapping);
		assert_non_null(f.mapping.build_id);
		symcache_resolve_user(s->sc, PID, copy_addr(s, 1), &f);
		assert_int_equal(f.nlines, 0);
		st = stats(s);
		assert_true(st.symbol_bytes <= budget);
	}
	assert_int_equal(st.symbol_refused, 2); /* one per file, not per frame or drain */
	assert_int_equal(st.symbol_deferred, opens_deferred); /* the lookups wait for nothing */
}

/* A budget smaller than an open file's own record: no file is opened (each open counted as
 * deferred), frames keep their mapping, nothing is held. */
static void test_symbol_budget_too_small_to_open_defers(void **state)
{
	struct test_state *s = *state;
	struct symcache_stats st;
	struct sym_frame f;

	new_cache(s, 1);
	symcache_resolve_user(s->sc, PID, copy_addr(s, 0), &f);
	assert_int_equal(f.nlines, 0);
	assert_true(f.has_mapping);
	st = stats(s);
	assert_int_equal(st.modules, 0);
	assert_int_equal(st.symbol_bytes, 0);
	assert_true(st.symbol_deferred >= NCOPIES); /* the snapshot's opens and the lookup's */
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_symbol_budget_holds_within_one_drain),
		T(test_symbol_budget_refuses_a_table_larger_than_itself),
		T(test_symbol_budget_too_small_to_open_defers),
	};

	return cmocka_run_group_tests_name("symcache_budget", tests, group_setup, group_teardown);
}
