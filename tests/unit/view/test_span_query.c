// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* span_query: the page of spans it writes is the one a full sort gives (the top-k heap),
 * with the service, name and trace filters applied and counted. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <json-c/json.h>

#include "view/span_query.h"

#define SPANS 3000

static int setup(void **state)
{
	static struct view_store vs;
	struct view_span s = { 0 };
	uint32_t svc[2], name[3];
	uint64_t x = 12345;
	int i;

	memset(&vs, 0, sizeof(vs));
	if (span_table_init(&vs.spans, SPANS) ||
	    str_pool_intern(vs.spans.strs, "shop", 4, &svc[0]) ||
	    str_pool_intern(vs.spans.strs, "cart", 4, &svc[1]) ||
	    str_pool_intern(vs.spans.strs, "GET /a", 6, &name[0]) ||
	    str_pool_intern(vs.spans.strs, "GET /b", 6, &name[1]) ||
	    str_pool_intern(vs.spans.strs, "POST /c", 7, &name[2]))
		return -1;
	for (i = 0; i < SPANS; i++) {
		x = x * 6364136223846793005ull + 1442695040888963407ull;
		s.wall_ns = (x >> 33) % 100000; /* ties among 3000 spans */
		s.cpu_ns = (x >> 13) % 1000;
		s.service = svc[i % 2];
		s.name = name[i % 3];
		s.span_id = (uint64_t)i + 1;
		memset(s.trace_id, 0, sizeof(s.trace_id));
		s.trace_id[0] = (uint8_t)(i % 7 == 0 ? 0xab : 0x12);
		s.trace_id[15] = (uint8_t)i;
		if (span_table_add(&vs.spans, &s))
			return -1;
	}
	*state = &vs;
	return span_table_finish(&vs.spans);
}

static int teardown(void **state)
{
	span_table_release(&((struct view_store *)*state)->spans);
	return 0;
}

/* Runs q; returns the parsed answer (caller puts it). */
static struct json_object *run(const struct view_store *vs, const struct span_query *q)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct json_object *o;

	assert_non_null(f);
	assert_int_equal(span_query_write(vs, q, f), 0);
	fclose(f);
	o = json_tokener_parse(buf);
	free(buf);
	assert_non_null(o);
	return o;
}

static uint64_t field(struct json_object *row, const char *key)
{
	struct json_object *v;

	assert_true(json_object_object_get_ex(row, key, &v));
	return (uint64_t)json_object_get_int64(v);
}

/* The expected page: a full sort of the matching spans by (wall desc, index asc). */
static int cmp_expected(const void *a, const void *b)
{
	const struct view_span *x = *(const struct view_span *const *)a;
	const struct view_span *y = *(const struct view_span *const *)b;

	if (x->wall_ns != y->wall_ns)
		return x->wall_ns > y->wall_ns ? -1 : 1;
	return x < y ? -1 : 1;
}

static void check_page(const struct view_store *vs, const struct span_query *q, int want_shop)
{
	const struct view_span *exp[SPANS];
	struct json_object *o = run(vs, q), *rows, *row, *v;
	size_t i, n = 0;

	for (i = 0; i < vs->spans.n; i++)
		if (!want_shop || vs->spans.spans[i].service == 0)
			exp[n++] = &vs->spans.spans[i];
	qsort(exp, n, sizeof(exp[0]), cmp_expected);
	assert_int_equal(field(o, "matched"), n);
	assert_int_equal(field(o, "total"), SPANS);
	assert_true(json_object_object_get_ex(o, "rows", &rows));
	assert_int_equal(json_object_array_length(rows), q->limit);
	for (i = 0; i < q->limit; i++) {
		row = json_object_array_get_idx(rows, i);
		assert_int_equal(field(row, "wall_ns"), exp[q->offset + i]->wall_ns);
		assert_true(json_object_object_get_ex(row, "span_id", &v));
		assert_int_equal(strtoull(json_object_get_string(v), NULL, 16),
				 exp[q->offset + i]->span_id);
	}
	json_object_put(o);
}

static void test_span_query_pages_match_a_full_sort(void **state)
{
	struct span_query q = { .sort = SPAN_SORT_WALL, .limit = 50 };

	check_page(*state, &q, 0);
	q.offset = 100;
	check_page(*state, &q, 0);
	q.offset = 0;
	q.service = "shop";
	check_page(*state, &q, 1);
}

static void test_span_query_filters_by_name_and_trace(void **state)
{
	struct span_query q = { .sort = SPAN_SORT_CPU, .limit = 5000, .name = "get /" };
	struct json_object *o = run(*state, &q), *rows;
	uint64_t prev = UINT64_MAX, cpu;
	size_t i;

	/* Two names of three contain "get /" (case does not matter). */
	assert_int_equal(field(o, "matched"), 2000);
	assert_true(json_object_object_get_ex(o, "rows", &rows));
	for (i = 0; i < json_object_array_length(rows); i++) {
		cpu = field(json_object_array_get_idx(rows, i), "cpu_ns");
		assert_true(cpu <= prev);
		prev = cpu;
	}
	json_object_put(o);
	q = (struct span_query){ .limit = 10, .trace = "AB00" };
	o = run(*state, &q);
	assert_int_equal(field(o, "matched"), (SPANS + 6) / 7);
	json_object_put(o);
	q.trace = "ab000000000000000000000000000000ff"; /* longer than a trace id */
	o = run(*state, &q);
	assert_int_equal(field(o, "matched"), 0);
	json_object_put(o);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_span_query_pages_match_a_full_sort),
		cmocka_unit_test(test_span_query_filters_by_name_and_trace),
	};

	return cmocka_run_group_tests_name("span_query", tests, setup, teardown);
}
