// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* span_file: span log lines into the table; corrupt lines counted and skipped, a line still
 * being written left alone, an empty file read as no spans, a full table counted. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "view/span_file.h"

#define REC(id, wall)                                                                 \
	"{\"service\":\"shop\",\"name\":\"GET /cart\",\"trace_id\":"                  \
	"\"4bf92f3577b34da6a3ce929d0e0e4736\",\"span_id\":\"" id "\",\"cpu_ns\":300," \
	"\"off_cpu_ns\":20,\"wall_ns\":" wall                                         \
	",\"start_ns\":1764067211503120455,\"pid\":7,\"tid\":8}"

static int setup(void **state)
{
	static struct span_table t;

	*state = &t;
	return span_table_init(&t, 4);
}

static int teardown(void **state)
{
	span_table_release(*state);
	return 0;
}

static int parse(struct span_table *t, const char *text, struct span_file_result *res)
{
	return span_file_parse(t, "shop", text, strlen(text), res);
}

static void test_span_file_reads_records(void **state)
{
	struct span_table *t = *state;
	struct span_file_result res;
	const struct view_span *s;

	assert_int_equal(parse(t, REC("00f067aa0ba902b7", "400") "\n", &res), 0);
	assert_int_equal(res.lines, 1);
	assert_int_equal(res.added, 1);
	assert_int_equal(res.bad, 0);
	s = &t->spans[0];
	assert_true(s->span_id == 0x00f067aa0ba902b7ull);
	assert_int_equal(s->trace_id[0], 0x4b);
	assert_int_equal(s->trace_id[15], 0x36);
	assert_int_equal(s->wall_ns, 400);
	assert_int_equal(s->cpu_ns, 300);
	assert_int_equal(s->off_cpu_ns, 20);
	assert_true(s->start_ns == 1764067211503120455ull);
	assert_string_equal(str_pool_get(t->strs, s->service), "shop");
	assert_string_equal(str_pool_get(t->strs, s->name), "GET /cart");
	assert_string_equal(str_pool_get(t->strs, s->stem), "shop");
}

/* Joins lines, each followed by a line feed, into buf. */
static const char *join(char *buf, size_t size, const char *const *lines, size_t n)
{
	size_t i, len = 0;

	buf[0] = '\0';
	for (i = 0; i < n; i++)
		len += snprintf(buf + len, size - len, "%s\n", lines[i]);
	return buf;
}

static void test_span_file_skips_corrupt_lines(void **state)
{
	static const char *const lines[] = {
		REC("0000000000000001", "1"),
		"not json",
		"{\"service\":\"shop\"}", /* fields missing */
		"[1,2]",
		REC("00000000000000zz", "1"), /* not hex */
		"",
		REC("0000000000000002", "2") " trailing",
		"\x01\xff",
		REC("0000000000000003", "3"),
	};
	struct span_table *t = *state;
	struct span_file_result res;
	char buf[4096];

	assert_int_equal(parse(t, join(buf, sizeof(buf), lines, 9), &res), 0);
	assert_int_equal(res.lines, 9);
	assert_int_equal(res.added, 2);
	assert_int_equal(res.bad, 7);
	assert_int_equal(res.first_bad, 2);
	assert_int_equal(t->n, 2);
}

/* Lines the agent's own format does not cover byte for byte (escapes, no start_ns, fields in
 * another order) are read through json-c, to the same result. */
static void test_span_file_reads_escaped_and_older_records(void **state)
{
	static const char *const lines[] = {
		"{\"service\":\"shop\",\"name\":\"GET \\\"x\\\" \\u00e9\",\"trace_id\":"
		"\"4bf92f3577b34da6a3ce929d0e0e4736\",\"span_id\":\"0000000000000001\",\"cpu_ns\":3,"
		"\"off_cpu_ns\":2,\"wall_ns\":9,\"pid\":7,\"tid\":8}",
		"{\"name\":\"GET /old\",\"service\":\"shop\",\"trace_id\":"
		"\"4bf92f3577b34da6a3ce929d0e0e4736\",\"span_id\":\"0000000000000002\",\"wall_ns\":5,"
		"\"cpu_ns\":1,\"off_cpu_ns\":1}",
	};
	struct span_table *t = *state;
	struct span_file_result res;
	char buf[1024];

	assert_int_equal(parse(t, join(buf, sizeof(buf), lines, 2), &res), 0);
	assert_int_equal(res.added, 2);
	assert_string_equal(str_pool_get(t->strs, t->spans[0].name), "GET \"x\" \xc3\xa9");
	assert_int_equal(t->spans[0].wall_ns, 9);
	assert_int_equal(t->spans[0].tid, 8);
	assert_string_equal(str_pool_get(t->strs, t->spans[1].name), "GET /old");
	assert_int_equal(t->spans[1].start_ns, 0);
	assert_true(t->spans[1].span_id == 2);
}

static void test_span_file_leaves_a_line_being_written(void **state)
{
	struct span_table *t = *state;
	struct span_file_result res;
	const char *text = REC("0000000000000001", "1") "\n" REC("0000000000000002", "2");

	/* The second record has no line feed yet: neither a span nor a bad line. */
	assert_int_equal(span_file_parse(t, "shop", text, strlen(text) - 10, &res), 0);
	assert_int_equal(res.added, 1);
	assert_int_equal(res.bad, 0);
	assert_int_equal(res.partial, 1);
}

static void test_span_file_reads_an_empty_file_as_no_spans(void **state)
{
	struct span_table *t = *state;
	struct span_file_result res;

	assert_int_equal(span_file_parse(t, "shop", "", 0, &res), 0);
	assert_int_equal(res.lines, 0);
	assert_int_equal(res.partial, 0);
	assert_int_equal(t->n, 0);
	assert_int_equal(span_table_finish(t), 0);
	assert_int_equal(t->nnames, 0);
}

static void test_span_file_counts_records_past_the_table(void **state)
{
	static const char *const lines[] = {
		REC("0000000000000001", "10"), REC("0000000000000002", "20"),
		REC("0000000000000003", "30"), REC("0000000000000004", "40"),
		REC("0000000000000005", "50"),
	};
	struct span_table *t = *state;
	struct span_file_result res;
	char buf[4096];

	assert_int_equal(parse(t, join(buf, sizeof(buf), lines, 5), &res), 0);
	assert_int_equal(res.added, 4);
	assert_int_equal(t->dropped, 1);
	/* Per-name figures over what was kept: nearest-rank p50 and p95. */
	assert_int_equal(span_table_finish(t), 0);
	assert_int_equal(t->nnames, 1);
	assert_int_equal(t->names[0].count, 4);
	assert_int_equal(t->names[0].wall_p50, 20);
	assert_int_equal(t->names[0].wall_p95, 40);
	assert_int_equal(t->names[0].cpu_sum, 1200);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_span_file_reads_records, setup, teardown),
		cmocka_unit_test_setup_teardown(test_span_file_skips_corrupt_lines, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_span_file_reads_escaped_and_older_records,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_span_file_leaves_a_line_being_written, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_span_file_reads_an_empty_file_as_no_spans,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_span_file_counts_records_past_the_table, setup,
						teardown),
	};

	return cmocka_run_group_tests_name("span_file", tests, NULL, NULL);
}
