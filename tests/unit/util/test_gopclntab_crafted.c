// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Unit tests for gopclntab's search by name on crafted tables built in memory: it finds what
 * real tables hold and stays linear in the table whatever the rows say. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cmocka.h>

#include "util/gopclntab.h"

#define HEADER 72
#define FUNC_SIZE 48

/* A Go 1.20 table: nfunc rows; row i's _func names names[i % nnames] (NUL-separated names
 * stored once at the start of the name table). */
static uint8_t *build(uint64_t nfunc, const char *const *names, size_t nnames, size_t *len)
{
	uint64_t hdr[8] = { 0 }, functab, funcs, i, name_off[8], off = 0;
	uint8_t *t;
	size_t k;

	assert_true(nnames <= 8);
	for (k = 0; k < nnames; k++) {
		name_off[k] = off;
		off += strlen(names[k]) + 1;
	}
	functab = (HEADER + off + 7) & ~7ull;
	funcs = functab + (nfunc + 1) * 8;
	*len = funcs + nnames * FUNC_SIZE;
	t = calloc(1, *len);
	assert_non_null(t);
	memcpy(t, &(uint32_t){ 0xfffffff1u }, 4);
	t[6] = 1;
	t[7] = 8;
	hdr[0] = nfunc;
	hdr[1] = 1;
	hdr[2] = 0x1000;
	hdr[3] = hdr[4] = hdr[5] = hdr[6] = HEADER;
	hdr[7] = functab;
	memcpy(t + 8, hdr, sizeof(hdr));
	for (k = 0; k < nnames; k++) {
		int32_t nameoff = (int32_t)name_off[k];

		strcpy((char *)t + HEADER + name_off[k], names[k]);
		memcpy(t + funcs + k * FUNC_SIZE + 4, &nameoff, 4);
	}
	for (i = 0; i <= nfunc; i++) {
		uint32_t row[2] = { (uint32_t)(i * 16),
				    (uint32_t)(funcs + (i % nnames) * FUNC_SIZE - functab) };

		memcpy(t + functab + i * 8, row, sizeof(row));
	}
	return t;
}

static void test_find_name_exact_and_suffix(void **state)
{
	static const char *const names[] = { "main.main", "runtime.morestack",
					     "example.com/app/hook.spanprofGoSpanSet" };
	struct gopclntab t;
	struct gopclntab_func f;
	size_t len;
	uint8_t *data = build(3, names, 3, &len);

	(void)state;
	assert_int_equal(gopclntab_init(&t, data, len, 0x1000), 0);
	assert_int_equal(gopclntab_find_name(&t, "runtime.morestack", 0, &f), 0);
	assert_string_equal(f.name, "runtime.morestack");
	assert_int_equal(f.entry, 0x1010);
	assert_int_equal(f.end, 0x1020);
	assert_int_equal(gopclntab_find_name(&t, ".spanprofGoSpanSet", 1, &f), 0);
	assert_string_equal(f.name, names[2]);
	assert_int_equal(gopclntab_find_name(&t, "morestack", 0, &f), -ENOENT);
	assert_int_equal(gopclntab_find_name(&t, "runtime.morestack", 1, &f), -ENOENT);
	free(data);
}

/* Every row naming one long string: the bytes compared are capped, not rows x length. */
static void test_find_name_stops_at_its_budget(void **state)
{
	char *name = malloc(60001);
	const char *names[] = { name };
	struct gopclntab t;
	struct gopclntab_func f;
	struct timespec a, b;
	size_t len;
	uint8_t *data;

	(void)state;
	assert_non_null(name);
	memset(name, 'a', 60000);
	name[60000] = '\0';
	data = build(400000, names, 1, &len);
	assert_int_equal(gopclntab_init(&t, data, len, 0x1000), 0);
	clock_gettime(CLOCK_MONOTONIC, &a);
	assert_int_equal(gopclntab_find_name(&t, ".spanprofGoSpanSet", 1, &f), -E2BIG);
	clock_gettime(CLOCK_MONOTONIC, &b);
	/* Without the budget: 400,000 x 60 KB = 24 GB compared. */
	printf("  gave up after %.1f ms\n",
	       (b.tv_sec - a.tv_sec) * 1e3 + (b.tv_nsec - a.tv_nsec) / 1e6);
	free(data);
	free(name);
}

/* Longer than a name may be: the table is malformed, found at its first row. */
static void test_name_longer_than_the_cap_is_malformed(void **state)
{
	char *name = malloc(GOPCLNTAB_NAME_MAX + 2);
	const char *names[] = { name };
	struct gopclntab t;
	struct gopclntab_func f;
	size_t len;
	uint8_t *data;

	(void)state;
	assert_non_null(name);
	memset(name, 'b', GOPCLNTAB_NAME_MAX + 1);
	name[GOPCLNTAB_NAME_MAX + 1] = '\0';
	data = build(10, names, 1, &len);
	assert_int_equal(gopclntab_init(&t, data, len, 0x1000), 0);
	assert_int_equal(gopclntab_func_at(&t, 0, &f), -ENOEXEC);
	assert_int_equal(gopclntab_find_name(&t, "x", 1, &f), -ENOEXEC);
	free(data);
	free(name);
}

static void test_too_many_functions_to_search(void **state)
{
	static const char *const names[] = { "a" };
	struct gopclntab t;
	struct gopclntab_func f;
	size_t len;
	uint8_t *data = build(GOPCLNTAB_MAX_SEARCH_FUNCS + 1, names, 1, &len);

	(void)state;
	assert_int_equal(gopclntab_init(&t, data, len, 0x1000), 0);
	assert_int_equal(gopclntab_find_name(&t, "a", 0, &f), -E2BIG);
	free(data);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_find_name_exact_and_suffix),
		cmocka_unit_test(test_find_name_stops_at_its_budget),
		cmocka_unit_test(test_name_longer_than_the_cap_is_malformed),
		cmocka_unit_test(test_too_many_functions_to_search),
	};

	return cmocka_run_group_tests_name("gopclntab_crafted", tests, NULL, NULL);
}
