// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Unit tests for addr_cache: what a hit gives back, the three key words, the bound (emptied
 * whole when full), growth from a small table and strings owned by the cache. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "symbolize/addr_cache.h"

#define MAX_ENTRIES 4

static int setup(void **state)
{
	*state = addr_cache_new(MAX_ENTRIES);
	return *state ? 0 : -1;
}

static int teardown(void **state)
{
	addr_cache_free(*state);
	return 0;
}

static struct addr_cache_key key(uint64_t dev, uint64_t inode, uint64_t offset)
{
	struct addr_cache_key k;

	memset(&k, 0, sizeof(k));
	k.dev = dev;
	k.inode = inode;
	k.offset = offset;
	return k;
}

/* A frame of one line in function fn (file and line fixed). */
static struct sym_frame frame_of(const char *fn)
{
	struct sym_frame f;

	memset(&f, 0, sizeof(f));
	f.nlines = 1;
	f.lines[0].function = fn;
	f.lines[0].file = "main.c";
	f.lines[0].line = 42;
	return f;
}

/* 1 when key hits and its innermost function is fn. */
static int hits_with(struct addr_cache *c, struct addr_cache_key k, const char *fn)
{
	const char *build_id;
	struct sym_frame out;

	memset(&out, 0, sizeof(out));
	if (!addr_cache_get(c, &k, &out, &build_id))
		return 0;
	return out.nlines >= 1 && out.lines[0].function && !strcmp(out.lines[0].function, fn);
}

static void test_addr_cache_hit_returns_lines_and_build_id(void **state)
{
	struct addr_cache *c = *state;
	struct addr_cache_key k = key(8, 1234, 0x1040);
	struct sym_frame in, out;
	const char *build_id = NULL;

	memset(&in, 0, sizeof(in));
	in.nlines = 2;
	in.lines[0] = (struct sym_line){ "inlined_helper", "util.h", 7 };
	in.lines[1] = (struct sym_line){ "caller", NULL, 0 };
	addr_cache_put(c, &k, &in, "abcdef01");
	memset(&out, 0, sizeof(out));
	assert_int_equal(addr_cache_get(c, &k, &out, &build_id), 1);
	assert_int_equal(out.nlines, 2);
	assert_string_equal(out.lines[0].function, "inlined_helper");
	assert_string_equal(out.lines[0].file, "util.h");
	assert_int_equal(out.lines[0].line, 7);
	assert_string_equal(out.lines[1].function, "caller");
	assert_null(out.lines[1].file); /* NULL stays NULL, not "" */
	assert_int_equal(out.lines[1].line, 0);
	assert_string_equal(build_id, "abcdef01");
}

static void test_addr_cache_keeps_unsymbolized_and_no_build_id(void **state)
{
	struct addr_cache *c = *state;
	struct addr_cache_key k = key(1, 2, 3);
	struct sym_frame in, out;
	const char *build_id = "stale";

	memset(&in, 0, sizeof(in));
	addr_cache_put(c, &k, &in, NULL);
	out.nlines = 5;
	assert_int_equal(addr_cache_get(c, &k, &out, &build_id), 1);
	assert_int_equal(out.nlines, 0); /* a known miss is cached too */
	assert_null(build_id);
}

static void test_addr_cache_key_needs_device_inode_and_offset(void **state)
{
	struct addr_cache *c = *state;
	struct sym_frame f = frame_of("target");

	addr_cache_put(c, &(struct addr_cache_key){ .dev = 8, .inode = 100, .offset = 0x10 }, &f,
		       NULL);
	assert_true(hits_with(c, key(8, 100, 0x10), "target"));
	assert_false(hits_with(c, key(9, 100, 0x10), "target"));
	assert_false(hits_with(c, key(8, 101, 0x10), "target"));
	assert_false(hits_with(c, key(8, 100, 0x11), "target"));
	assert_int_equal(addr_cache_count(c), 1);
}

static void test_addr_cache_first_put_of_a_key_wins(void **state)
{
	struct addr_cache *c = *state;
	struct sym_frame first = frame_of("first"), second = frame_of("second");
	struct addr_cache_key k = key(1, 1, 1);

	addr_cache_put(c, &k, &first, NULL);
	addr_cache_put(c, &k, &second, NULL);
	assert_true(hits_with(c, k, "first"));
	assert_int_equal(addr_cache_count(c), 1);
}

static void test_addr_cache_empties_when_full(void **state)
{
	struct addr_cache *c = *state;
	struct sym_frame f = frame_of("fn");
	uint64_t i;

	for (i = 0; i < MAX_ENTRIES; i++)
		addr_cache_put(c, &(struct addr_cache_key){ .dev = 1, .inode = 1, .offset = i }, &f,
			       NULL);
	assert_int_equal(addr_cache_count(c), MAX_ENTRIES);
	for (i = 0; i < MAX_ENTRIES; i++)
		assert_true(hits_with(c, key(1, 1, i), "fn"));
	/* One more: the bound is kept by starting over, with only the new entry. */
	addr_cache_put(c, &(struct addr_cache_key){ .dev = 1, .inode = 1, .offset = 99 }, &f, NULL);
	assert_int_equal(addr_cache_count(c), 1);
	assert_true(hits_with(c, key(1, 1, 99), "fn"));
	for (i = 0; i < MAX_ENTRIES; i++)
		assert_false(hits_with(c, key(1, 1, i), "fn"));
}

static void test_addr_cache_copies_strings(void **state)
{
	struct addr_cache *c = *state;
	char fn[32] = "original", file[32] = "a.c", id[32] = "0011";
	struct sym_frame f, out;
	const char *build_id;

	memset(&f, 0, sizeof(f));
	f.nlines = 1;
	f.lines[0] = (struct sym_line){ fn, file, 1 };
	addr_cache_put(c, &(struct addr_cache_key){ .dev = 2, .inode = 2, .offset = 2 }, &f, id);
	strcpy(fn, "changed");
	strcpy(file, "b.c");
	strcpy(id, "ffff");
	memset(&out, 0, sizeof(out));
	assert_int_equal(
		addr_cache_get(c, &(struct addr_cache_key){ .dev = 2, .inode = 2, .offset = 2 },
			       &out, &build_id),
		1);
	assert_string_equal(out.lines[0].function, "original");
	assert_string_equal(out.lines[0].file, "a.c");
	assert_string_equal(build_id, "0011");
}

static void test_addr_cache_of_zero_entries_holds_one(void **state)
{
	struct addr_cache *c = addr_cache_new(0);
	struct sym_frame f = frame_of("only");

	(void)state;
	assert_non_null(c);
	addr_cache_put(c, &(struct addr_cache_key){ .dev = 1 }, &f, NULL);
	addr_cache_put(c, &(struct addr_cache_key){ .dev = 2 }, &f, NULL);
	assert_int_equal(addr_cache_count(c), 1);
	assert_true(hits_with(c, key(2, 0, 0), "only"));
	assert_false(hits_with(c, key(1, 0, 0), "only"));
	addr_cache_free(c);
	addr_cache_free(NULL);
}

/* A bound larger than the table's first size: the table doubles several times, every entry
 * stays found, and the bound still empties it. */
static void test_addr_cache_grows_to_its_bound_then_empties(void **state)
{
	const size_t max = 10000;
	struct addr_cache *c = addr_cache_new(max);
	struct sym_frame f = frame_of("grown");
	size_t i;

	(void)state;
	assert_non_null(c);
	for (i = 0; i < max; i++)
		addr_cache_put(c, &(struct addr_cache_key){ .dev = 3, .inode = 4, .offset = i }, &f,
			       "beef");
	assert_int_equal(addr_cache_count(c), max);
	for (i = 0; i < max; i++)
		assert_true(hits_with(c, key(3, 4, i), "grown"));
	addr_cache_put(c, &(struct addr_cache_key){ .dev = 3, .inode = 4, .offset = max }, &f,
		       NULL);
	assert_int_equal(addr_cache_count(c), 1);
	assert_true(hits_with(c, key(3, 4, max), "grown"));
	assert_false(hits_with(c, key(3, 4, 0), "grown"));
	for (i = 0; i < max - 1; i++) /* and grows again from its first size, up to max */
		addr_cache_put(c, &(struct addr_cache_key){ .dev = 5, .inode = 6, .offset = i }, &f,
			       NULL);
	assert_int_equal(addr_cache_count(c), max);
	assert_true(hits_with(c, key(5, 6, max - 2), "grown"));
	assert_true(hits_with(c, key(5, 6, 0), "grown"));
	addr_cache_free(c);
}

#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_addr_cache_hit_returns_lines_and_build_id),
		T(test_addr_cache_keeps_unsymbolized_and_no_build_id),
		T(test_addr_cache_key_needs_device_inode_and_offset),
		T(test_addr_cache_first_put_of_a_key_wins),
		T(test_addr_cache_empties_when_full),
		T(test_addr_cache_copies_strings),
		cmocka_unit_test(test_addr_cache_grows_to_its_bound_then_empties),
		cmocka_unit_test(test_addr_cache_of_zero_entries_holds_one),
	};

	return cmocka_run_group_tests_name("addr_cache", tests, NULL, NULL);
}
