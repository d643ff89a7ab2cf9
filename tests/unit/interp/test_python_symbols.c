// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Unit tests for python_symbols: fake CPython 3.12 code objects built in this process's own memory
 * and read back through /proc/self/mem; a changed code object at the same address is never shown
 * under its old name. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "interp/interp_budget.h"
#include "interp/python_stack.h"
#include "interp/python_symbols.h"

#define STATE_COMPACT_ASCII ((1u << 5) | (1u << 6))

struct fake_str {
	uint8_t raw[40 + 64];
};

struct fake_bytes {
	uint8_t raw[32 + 16];
};

static uint8_t code[256];
static struct fake_str name, qualname, file, other_name;
static struct fake_bytes table;

static void make_str(struct fake_str *s, const char *text)
{
	int64_t len = strlen(text);
	uint32_t state = STATE_COMPACT_ASCII;

	memset(s, 0, sizeof(*s));
	memcpy(s->raw + 16, &len, sizeof(len));
	memcpy(s->raw + 32, &state, sizeof(state));
	memcpy(s->raw + 40, text, len + 1);
}

static void set_ptr(size_t off, const void *p)
{
	uint64_t v = (uint64_t)(uintptr_t)p;

	memcpy(code + off, &v, sizeof(v));
}

/* A 3.12 code object: first line 10, one location entry (code 13: line + 2) for 8 units. */
static void make_code(void)
{
	static const uint8_t entry[] = { 0xef, 0x04 };
	int32_t first = 10;
	int64_t tlen = sizeof(entry);

	memset(code, 0, sizeof(code));
	make_str(&name, "price_cart");
	make_str(&qualname, "Cart.price_cart");
	make_str(&file, "/srv/app/cart.py");
	make_str(&other_name, "parse_order");
	memset(&table, 0, sizeof(table));
	memcpy(table.raw + 16, &tlen, sizeof(tlen));
	memcpy(table.raw + 32, entry, sizeof(entry));
	memcpy(code + 68, &first, sizeof(first));
	set_ptr(112, &file);
	set_ptr(120, &name);
	set_ptr(128, &qualname);
	set_ptr(136, &table);
}

static uint64_t ptr_at(size_t off)
{
	uint64_t v;

	memcpy(&v, code + off, sizeof(v));
	return v;
}

/* The check BPF computes from the code object as it is now (3.12 offsets). */
static uint32_t check_now(void)
{
	return SPANPROF_PY_CHECK(ptr_at(120), ptr_at(112), ptr_at(128), ptr_at(136));
}

static struct interp_frame frame_now(uint32_t lasti)
{
	struct interp_frame f = { .code = (uint64_t)(uintptr_t)code,
				  .firstlineno = 10,
				  .lasti = lasti };

	f.check = check_now();
	return f;
}

static void test_reads_name_file_line(void **state)
{
	const struct python_offsets *off = python_offsets_for(3, 12);
	struct python_symbols *ps = python_symbols_new("/proc", 4, NULL);
	struct interp_frame f;
	struct sym_line l;

	(void)state;
	make_code();
	f = frame_now(3);
	python_symbols_resolve(ps, getpid(), off, &f, &l);
	assert_string_equal(l.function, "Cart.price_cart");
	assert_string_equal(l.file, "/srv/app/cart.py");
	assert_int_equal(l.line, 12); /* 10, then the entry's +2 */
	python_symbols_free(ps);
}

static void test_reused_code_object_is_not_misnamed(void **state)
{
	const struct python_offsets *off = python_offsets_for(3, 12);
	struct python_symbols *ps = python_symbols_new("/proc", 4, NULL);
	struct interp_frame f;
	struct sym_line l;

	(void)state;
	make_code();
	f = frame_now(0);
	python_symbols_resolve(ps, getpid(), off, &f, &l);
	assert_string_equal(l.function, "Cart.price_cart");
	/* The object is freed and another function's code lands at the same address, same line. */
	set_ptr(120, &other_name);
	set_ptr(128, &other_name);
	f = frame_now(0);
	python_symbols_resolve(ps, getpid(), off, &f, &l);
	assert_string_equal(l.function, "parse_order");
	/* BPF saw the old object but it changed before the agent read it: not named at all. */
	f.check ^= 1;
	python_symbols_resolve(ps, getpid(), off, &f, &l);
	assert_string_equal(l.function, "[python code gone]");
	assert_null(l.file);
	python_symbols_free(ps);
}

/* exec-generated code (dataclass, namedtuple): a new code object at the freed one's address
 * with the same interned name and file and the same first line, but its own qualified name
 * and line table. */
static void test_reused_code_object_with_new_qualname_is_read_anew(void **state)
{
	const struct python_offsets *off = python_offsets_for(3, 12);
	struct python_symbols *ps = python_symbols_new("/proc", 4, NULL);
	struct fake_str qual2;
	struct fake_bytes table2;
	struct interp_frame f;
	struct sym_line l;

	(void)state;
	make_code();
	f = frame_now(0);
	python_symbols_resolve(ps, getpid(), off, &f, &l);
	assert_string_equal(l.function, "Cart.price_cart");
	make_str(&qual2, "Order.price_cart");
	table2 = table;
	set_ptr(128, &qual2);
	set_ptr(136, &table2);
	f = frame_now(0);
	python_symbols_resolve(ps, getpid(), off, &f, &l);
	assert_string_equal(l.function, "Order.price_cart");
	python_symbols_free(ps);
}

static void test_hostile_lengths(void **state)
{
	const struct python_offsets *off = python_offsets_for(3, 12);
	struct python_symbols *ps = python_symbols_new("/proc", 4, NULL);
	int64_t huge = INT64_MAX;
	struct interp_frame f;
	struct sym_line l;

	(void)state;
	make_code();
	memcpy(name.raw + 16, &huge, sizeof(huge)); /* cut to the buffer, not read past it */
	memcpy(qualname.raw + 16, &huge, sizeof(huge));
	memcpy(table.raw + 16, &huge, sizeof(huge)); /* too long: first line shown */
	f = frame_now(3);
	python_symbols_resolve(ps, getpid(), off, &f, &l);
	assert_non_null(l.function);
	assert_int_equal(l.line, 10);
	python_symbols_free(ps);
}

static uint64_t bytes_held(const struct python_symbols *ps)
{
	struct python_symbols_stats st;

	python_symbols_get_stats(ps, &st);
	return st.bytes;
}

/* A line table of len bytes (one location entry, then padding) into t, set on the code object. */
static void set_table(struct fake_bytes *t, int64_t len)
{
	*t = table;
	memcpy(t->raw + 16, &len, sizeof(len));
	set_ptr(136, t);
}

/* The byte count follows what the cache holds: each entry adds its fixed size plus its line
 * table, and a replaced, evicted or stale entry gives all of it back. */
static void test_bytes_follow_inserts_and_evictions(void **state)
{
	const struct python_offsets *off = python_offsets_for(3, 12);
	struct python_symbols *ps = python_symbols_new("/proc", 1, NULL);
	const uint64_t entry = python_symbols_entry_bytes();
	struct python_symbols_stats st;
	struct fake_bytes table5;
	int32_t first = 20;
	struct interp_frame f;
	struct sym_line l;
	uint64_t empty;

	(void)state;
	make_code();
	empty = bytes_held(ps);
	assert_true(empty > 0); /* the cache and its hash */
	f = frame_now(3);
	python_symbols_resolve(ps, getpid(), off, &f, &l);
	assert_int_equal(bytes_held(ps), empty + entry + 2);
	python_symbols_resolve(ps, getpid(), off, &f, &l); /* a hit holds nothing more */
	assert_int_equal(bytes_held(ps), empty + entry + 2);
	/* Same key, new line table: the old entry is dropped and the new one read. */
	set_table(&table5, 5);
	f = frame_now(3);
	python_symbols_resolve(ps, getpid(), off, &f, &l);
	assert_string_equal(l.function, "Cart.price_cart");
	assert_int_equal(bytes_held(ps), empty + entry + 5);
	/* Another key with the cache full: the oldest is evicted. */
	set_table(&table5, 2);
	memcpy(code + 68, &first, sizeof(first));
	f = frame_now(3);
	f.firstlineno = 20;
	python_symbols_resolve(ps, getpid(), off, &f, &l);
	assert_int_equal(l.line, 22);
	python_symbols_get_stats(ps, &st);
	assert_int_equal(st.evictions, 1);
	assert_int_equal(st.bytes, empty + entry + 2);
	/* Changed before it was read again: dropped, nothing held. */
	f.check ^= 1;
	python_symbols_resolve(ps, getpid(), off, &f, &l);
	assert_string_equal(l.function, "[python code gone]");
	assert_int_equal(bytes_held(ps), empty);
	/* A line table too long to keep: the entry alone. */
	set_table(&table5, PYTHON_SYMBOLS_TABLE_MAX + 1);
	f = frame_now(3);
	f.firstlineno = 20;
	python_symbols_resolve(ps, getpid(), off, &f, &l);
	assert_int_equal(l.line, 20);
	assert_int_equal(bytes_held(ps), empty + entry);
	python_symbols_free(ps); /* ASan: nothing left behind */
}

/* A line table of TABLE_BYTES (one location entry, then zeros), for the budget test. */
#define TABLE_BYTES 1000
static struct {
	uint8_t raw[32 + TABLE_BYTES];
} big_table;

/* Code object i: the fake code object with first line 100 + i and the big line table. */
static struct interp_frame frame_of(int i)
{
	int32_t first = 100 + i;
	int64_t len = TABLE_BYTES;
	struct interp_frame f;

	memcpy(big_table.raw, table.raw, sizeof(table.raw));
	memcpy(big_table.raw + 16, &len, sizeof(len));
	memcpy(code + 68, &first, sizeof(first));
	set_ptr(136, &big_table);
	f = frame_now(3);
	f.firstlineno = (uint32_t)first;
	return f;
}

/* The caches' fixed bytes and the budget's own at start, for a cache of max_entries. */
static uint64_t fixed_bytes(size_t max_entries)
{
	struct interp_budget *b = interp_budget_new(1 << 20);
	struct python_symbols *ps = python_symbols_new("/proc", max_entries, b);
	struct interp_budget_stats st;

	interp_budget_get_stats(b, &st);
	python_symbols_free(ps);
	interp_budget_free(b);
	return st.held;
}

/* Under a byte budget for three entries, inserting twelve keeps the three most recent: every
 * insert past it evicts the least recently used, the bytes held never pass the budget, and an
 * evicted code object is read again, under its name, when it comes back. */
static void test_budget_evicts_least_recent_and_holds_its_bound(void **state)
{
	const struct python_offsets *off = python_offsets_for(3, 12);
	const uint64_t entry = python_symbols_entry_bytes() + TABLE_BYTES;
	const uint64_t max = fixed_bytes(64) + 3 * entry + entry / 2;
	struct interp_budget *b = interp_budget_new(max);
	struct python_symbols *ps = python_symbols_new("/proc", 64, b);
	struct python_symbols_stats st;
	struct interp_budget_stats bs;
	uint64_t empty;
	struct interp_frame f;
	struct sym_line l;
	int i;

	(void)state;
	assert_non_null(ps);
	make_code();
	empty = bytes_held(ps);
	for (i = 0; i < 12; i++) {
		f = frame_of(i);
		python_symbols_resolve(ps, getpid(), off, &f, &l);
		assert_string_equal(l.function, "Cart.price_cart");
		assert_int_equal(l.line, 102 + i); /* first line, then the entry's +2 */
		python_symbols_get_stats(ps, &st);
		interp_budget_get_stats(b, &bs);
		assert_true(bs.held <= max);
		assert_int_equal(st.bytes + bs.own_bytes, bs.held); /* every byte counted once */
	}
	python_symbols_get_stats(ps, &st);
	assert_int_equal(st.bytes, empty + 3 * entry);
	assert_int_equal(st.evictions, 9);
	assert_int_equal(st.refused, 0);
	/* the newest is still cached; the oldest was evicted and is read again */
	f = frame_of(11);
	python_symbols_resolve(ps, getpid(), off, &f, &l);
	f = frame_of(0);
	python_symbols_resolve(ps, getpid(), off, &f, &l);
	assert_string_equal(l.function, "Cart.price_cart");
	python_symbols_get_stats(ps, &st);
	assert_int_equal(st.hits, 1);
	assert_int_equal(st.misses, 13);
	assert_int_equal(st.evictions, 10);
	interp_budget_get_stats(b, &bs);
	assert_int_equal(bs.evictions, 10);
	python_symbols_free(ps);
	interp_budget_get_stats(b, &bs);
	assert_int_equal(bs.held, bs.own_bytes); /* all given back */
	assert_int_equal(bs.users, 0);
	interp_budget_free(b);
}

/* A code object larger than the whole budget is refused: it is still named (read at each use),
 * nothing cached is evicted for it, and nothing of it stays held. */
static void test_entry_over_budget_named_but_not_cached(void **state)
{
	const struct python_offsets *off = python_offsets_for(3, 12);
	const uint64_t max = fixed_bytes(64) + python_symbols_entry_bytes() + 600;
	struct interp_budget *b = interp_budget_new(max);
	struct python_symbols *ps = python_symbols_new("/proc", 64, b);
	struct python_symbols_stats st;
	struct interp_budget_stats bs;
	struct interp_frame f;
	struct sym_line l;
	uint64_t one;
	int i;

	(void)state;
	make_code();
	f = frame_now(3); /* a 2-byte table: fits */
	python_symbols_resolve(ps, getpid(), off, &f, &l);
	one = bytes_held(ps);
	for (i = 0; i < 2; i++) {
		f = frame_of(1);
		python_symbols_resolve(ps, getpid(), off, &f, &l);
		assert_string_equal(l.function, "Cart.price_cart");
		assert_string_equal(l.file, "/srv/app/cart.py");
		assert_int_equal(l.line, 103);
	}
	python_symbols_get_stats(ps, &st);
	assert_int_equal(st.refused, 2);
	assert_int_equal(st.evictions, 0);
	assert_int_equal(st.bytes, one);
	interp_budget_get_stats(b, &bs);
	assert_int_equal(bs.refused, 2);
	assert_true(bs.held <= max);
	python_symbols_free(ps); /* ASan: the uncached table was freed */
	interp_budget_free(b);
}

/* One sample's stack of ten distinct code objects, for the per-sample test: every third has a
 * line table larger than its user's share (refused), the others SMALL_TABLE bytes. */
#define STACK_DEPTH 10
#define SMALL_TABLE 100
#define LARGE_TABLE 8000
static struct {
	uint8_t code[256];
	struct fake_str name, file;
} deep[STACK_DEPTH];
static struct {
	uint8_t raw[32 + SMALL_TABLE];
} small_table;
static struct {
	uint8_t raw[32 + LARGE_TABLE];
} large_table;

static void set_deep_ptr(int i, size_t off, const void *p)
{
	uint64_t v = (uint64_t)(uintptr_t)p;

	memcpy(deep[i].code + off, &v, sizeof(v));
}

/* Code object i: "fn_i" in "/srv/app/mod_i.py", first line 200 + 10 * i; its frame at lasti 3
 * (line first + 2). */
static struct interp_frame deep_frame(int i)
{
	const void *t = i % 3 ? (const void *)&small_table : (const void *)&large_table;
	int32_t first = 200 + 10 * i;
	struct interp_frame f = { 0 };
	char text[32];

	memset(deep[i].code, 0, sizeof(deep[i].code));
	snprintf(text, sizeof(text), "fn_%d", i);
	make_str(&deep[i].name, text);
	snprintf(text, sizeof(text), "/srv/app/mod_%d.py", i);
	make_str(&deep[i].file, text);
	memcpy(deep[i].code + 68, &first, sizeof(first));
	set_deep_ptr(i, 112, &deep[i].file);
	set_deep_ptr(i, 120, &deep[i].name);
	set_deep_ptr(i, 128, &deep[i].name);
	set_deep_ptr(i, 136, t);
	f.code = (uint64_t)(uintptr_t)deep[i].code;
	f.firstlineno = (uint32_t)first;
	f.lasti = 3;
	f.check = SPANPROF_PY_CHECK((uint64_t)(uintptr_t)&deep[i].name,
				    (uint64_t)(uintptr_t)&deep[i].file,
				    (uint64_t)(uintptr_t)&deep[i].name, (uint64_t)(uintptr_t)t);
	return f;
}

static void make_tables(void)
{
	static const uint8_t entry[] = { 0xef, 0x04 }; /* line + 2 for 8 units */
	int64_t len = SMALL_TABLE;

	memset(&small_table, 0, sizeof(small_table));
	memcpy(small_table.raw + 16, &len, sizeof(len));
	memcpy(small_table.raw + 32, entry, sizeof(entry));
	len = LARGE_TABLE;
	memset(&large_table, 0, sizeof(large_table));
	memcpy(large_table.raw + 16, &len, sizeof(len));
	memcpy(large_table.raw + 32, entry, sizeof(entry));
}

/* Merges the frames idx[0..n) (innermost first) into an empty native stack: all outermost. */
static struct stack_resolve *merge_frames(struct python_symbols *ps, const int *idx, int n)
{
	struct python_proc proc = { .off = python_offsets_for(3, 12) };
	struct stack_resolve *r = calloc(1, sizeof(*r));
	struct interp_stack py = { .nframes = (uint32_t)n };
	uint64_t dropped = 0;
	int i;

	assert_non_null(r);
	for (i = 0; i < n; i++)
		py.frames[i] = deep_frame(idx[i]);
	python_stack_merge(r, ps, getpid(), &proc, &py, &dropped);
	assert_int_equal(dropped, 0);
	assert_int_equal(r->nframes, n);
	return r;
}

/* Each merged frame shows its own code object's name, file and line. */
static void expect_own_names(const struct stack_resolve *r, const int *idx, int n)
{
	char want[32];
	int i;

	for (i = 0; i < n; i++) {
		snprintf(want, sizeof(want), "fn_%d", idx[i]);
		assert_string_equal(r->frames[i].lines[0].function, want);
		snprintf(want, sizeof(want), "/srv/app/mod_%d.py", idx[i]);
		assert_string_equal(r->frames[i].lines[0].file, want);
		assert_int_equal(r->frames[i].lines[0].line, 200 + 10 * idx[i] + 2);
	}
}

/* Two users, and a sample deeper than this one's share of the budget: within the one merge,
 * large code objects are refused (each named from the cache's single refused slot) and small
 * ones past the share evict the entries earlier frames were named from. Every frame still shows
 * its own name, file and line, and nothing freed is read (ASan), because the merge copies each
 * frame's strings into the stack before it names the next frame. The bytes stay within the
 * budget, and a second merge of the same stack names it the same way. */
static void test_deep_sample_keeps_every_frame_named(void **state)
{
	static const int all[STACK_DEPTH] = { 0, 1, 2, 3, 4, 5, 6, 7, 8, 9 };
	const uint64_t small = python_symbols_entry_bytes() + SMALL_TABLE;
	const uint64_t room = 7 * small; /* this user's share: three and a half small entries */
	const uint64_t max = fixed_bytes(64) + room;
	struct interp_budget *b = interp_budget_new(max);
	struct python_symbols *ps = python_symbols_new("/proc", 64, b);
	struct python_symbols_stats st;
	struct interp_budget_stats bs;
	struct stack_resolve *r;
	const uid_t other = 4242;

	(void)state;
	assert_non_null(ps);
	assert_true(getuid() != other);
	make_tables();
	/* Another user holds the other half (a cache without eviction: it stays). */
	assert_int_equal(interp_budget_take(b, INTERP_CACHE_RUBY, other, room / 2 - 64), 0);
	r = merge_frames(ps, all, STACK_DEPTH);
	expect_own_names(r, all, STACK_DEPTH);
	python_symbols_get_stats(ps, &st);
	interp_budget_get_stats(b, &bs);
	assert_int_equal(st.misses, STACK_DEPTH);
	assert_int_equal(st.refused, 4); /* the large ones: over the share */
	assert_int_equal(bs.fair_refused, 4);
	assert_int_equal(st.evictions, 3); /* the small ones past three: frames 1, 2 and 4 went */
	assert_true(bs.held <= max);
	assert_int_equal(st.bytes + bs.own_bytes + room / 2 - 64, bs.held);
	free(r);
	r = merge_frames(ps, all, STACK_DEPTH);
	expect_own_names(r, all, STACK_DEPTH);
	interp_budget_get_stats(b, &bs);
	assert_true(bs.held <= max);
	free(r);
	python_symbols_free(ps); /* ASan: the refused entries' tables were freed */
	interp_budget_give(b, INTERP_CACHE_RUBY, other, room / 2 - 64);
	interp_budget_get_stats(b, &bs);
	assert_int_equal(bs.held, bs.own_bytes);
	interp_budget_free(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_reads_name_file_line),
		cmocka_unit_test(test_reused_code_object_is_not_misnamed),
		cmocka_unit_test(test_reused_code_object_with_new_qualname_is_read_anew),
		cmocka_unit_test(test_hostile_lengths),
		cmocka_unit_test(test_bytes_follow_inserts_and_evictions),
		cmocka_unit_test(test_budget_evicts_least_recent_and_holds_its_bound),
		cmocka_unit_test(test_entry_over_budget_named_but_not_cached),
		cmocka_unit_test(test_deep_sample_keeps_every_frame_named),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
