// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Unit tests for user/output/span_log.c: the JSON line of an ended span (escapes, ids, cut
 * output), the per-service files, their rotation and the buffer bound. */
#define _GNU_SOURCE
#include <errno.h>
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

#include "output/span_log.h"
#include "tmpdir.h"

static void fill(struct span_record *r, const char *service, const char *name)
{
	memset(r, 0, sizeof(*r));
	r->service = service;
	r->name = name;
	memset(r->trace_id, 0xab, sizeof(r->trace_id));
	r->trace_id[15] = 0x01;
	memset(r->span_id, 0x0c, sizeof(r->span_id));
	r->cpu_ns = 300123;
	r->off_cpu_ns = 7;
	r->wall_ns = 400000;
	r->pid = 42;
	r->tid = 43;
}

static void test_span_log_formats_one_json_line(void **state)
{
	struct span_record r;
	char buf[512];
	size_t n;

	(void)state;
	fill(&r, "checkout", "GET /cart");
	n = span_log_format(&r, buf, sizeof(buf));
	assert_string_equal(buf, "{\"service\":\"checkout\",\"name\":\"GET /cart\","
				 "\"trace_id\":\"ababababababababababababababab01\","
				 "\"span_id\":\"0c0c0c0c0c0c0c0c\",\"cpu_ns\":300123,"
				 "\"off_cpu_ns\":7,\"wall_ns\":400000,\"pid\":42,\"tid\":43}\n");
	assert_int_equal(n, strlen(buf));
	/* A known start follows the wall time. */
	r.start_ns = 1764000000123456789ull;
	span_log_format(&r, buf, sizeof(buf));
	assert_non_null(strstr(buf, "\"wall_ns\":400000,\"start_ns\":1764000000123456789,"
				    "\"pid\":42,"));
}

static void test_span_log_escapes_names(void **state)
{
	struct span_record r;
	char buf[512];

	(void)state;
	/* A quote, a backslash, a tab, a line feed, UTF-8 kept, an invalid byte replaced. */
	fill(&r, NULL, "a\"b\\c\td\ne \xc3\xa9 \xff!");
	span_log_format(&r, buf, sizeof(buf));
	assert_non_null(strstr(buf, "\"service\":\"unknown_service\""));
	assert_non_null(strstr(buf, "\"name\":\"a\\\"b\\\\c\\u0009d\\u000ae \xc3\xa9 \\ufffd!\""));
	/* The only line feed ends the line. */
	assert_ptr_equal(strchr(buf, '\n'), buf + strlen(buf) - 1);
}

static void test_span_log_reports_the_length_a_cut_line_needs(void **state)
{
	struct span_record r;
	char small[20], big[512];
	size_t need;

	(void)state;
	fill(&r, "svc", "name");
	need = span_log_format(&r, big, sizeof(big));
	assert_int_equal(span_log_format(&r, small, sizeof(small)), need);
	assert_int_equal(strlen(small), sizeof(small) - 1);
	assert_memory_equal(small, big, sizeof(small) - 1);
	assert_int_equal(span_log_format(&r, NULL, 0), need);
}

/* Lines of dir/name, or -1 when it does not exist. */
static int count_lines(const char *dir, const char *name)
{
	char path[1024], line[1024];
	FILE *f;
	int n = 0;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		n++;
	fclose(f);
	return n;
}

static void test_span_log_appends_per_service_file(void **state)
{
	struct span_log_limits lim = { .max_file_bytes = 1 << 20,
				       .max_buffered = 1 << 20,
				       .max_services = 4 };
	char *dir = tmpdir_new("span-log");
	struct span_log_stats st;
	struct span_record r;
	struct span_log *sl;

	(void)state;
	assert_non_null(dir);
	sl = span_log_new(dir, &lim);
	assert_non_null(sl);
	fill(&r, "check/out", "a");
	assert_int_equal(span_log_add(sl, &r), 0);
	assert_int_equal(span_log_add(sl, &r), 0);
	fill(&r, "billing", "b");
	assert_int_equal(span_log_add(sl, &r), 0);
	assert_int_equal(count_lines(dir, "check_out.spans.jsonl"), -1);
	assert_int_equal(span_log_flush(sl), 0);
	fill(&r, "check/out", "c");
	assert_int_equal(span_log_add(sl, &r), 0);
	assert_int_equal(span_log_flush(sl), 0);
	assert_int_equal(count_lines(dir, "check_out.spans.jsonl"), 3);
	assert_int_equal(count_lines(dir, "billing.spans.jsonl"), 1);
	span_log_get_stats(sl, &st);
	assert_int_equal(st.records, 4);
	assert_int_equal(st.dropped, 0);
	span_log_free(sl);
	tmpdir_remove(dir);
}

static void test_span_log_rotates_a_full_file(void **state)
{
	struct span_log_limits lim = { .max_buffered = 1 << 20, .max_services = 4 };
	char *dir = tmpdir_new("span-log-rot");
	struct span_log_stats st;
	struct span_record r;
	struct span_log *sl;
	size_t line;
	int i;

	(void)state;
	assert_non_null(dir);
	fill(&r, "svc", "name");
	line = span_log_format(&r, NULL, 0);
	lim.max_file_bytes = 3 * line; /* three lines fit, a fourth does not */
	sl = span_log_new(dir, &lim);
	assert_non_null(sl);
	for (i = 0; i < 5; i++) {
		assert_int_equal(span_log_add(sl, &r), 0);
		assert_int_equal(span_log_flush(sl), 0);
	}
	assert_int_equal(count_lines(dir, "svc.spans.jsonl.1"), 3);
	assert_int_equal(count_lines(dir, "svc.spans.jsonl"), 2);
	span_log_get_stats(sl, &st);
	assert_int_equal(st.rotations, 1);
	assert_int_equal(st.records, 5);
	span_log_free(sl);
	tmpdir_remove(dir);
}

static void test_span_log_drops_past_its_bounds(void **state)
{
	struct span_log_limits lim = { .max_file_bytes = 1 << 20, .max_services = 1 };
	char *dir = tmpdir_new("span-log-drop");
	struct span_log_stats st;
	struct span_record r;
	struct span_log *sl;

	(void)state;
	assert_non_null(dir);
	fill(&r, "svc", "name");
	lim.max_buffered = 2 * span_log_format(&r, NULL, 0);
	sl = span_log_new(dir, &lim);
	assert_non_null(sl);
	assert_int_equal(span_log_add(sl, &r), 0);
	assert_int_equal(span_log_add(sl, &r), 0);
	assert_int_equal(span_log_add(sl, &r), -ENOBUFS); /* buffer full until the flush */
	fill(&r, "other-service", "name");
	assert_int_equal(span_log_add(sl, &r), -ENOBUFS); /* one service only */
	assert_int_equal(span_log_flush(sl), 0);
	fill(&r, "svc", "name");
	assert_int_equal(span_log_add(sl, &r), 0);
	assert_int_equal(span_log_flush(sl), 0);
	span_log_get_stats(sl, &st);
	assert_int_equal(st.records, 3);
	assert_int_equal(st.dropped, 2);
	assert_int_equal(count_lines(dir, "svc.spans.jsonl"), 3);
	span_log_free(sl);
	tmpdir_remove(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_span_log_formats_one_json_line),
		cmocka_unit_test(test_span_log_escapes_names),
		cmocka_unit_test(test_span_log_reports_the_length_a_cut_line_needs),
		cmocka_unit_test(test_span_log_appends_per_service_file),
		cmocka_unit_test(test_span_log_rotates_a_full_file),
		cmocka_unit_test(test_span_log_drops_past_its_bounds),
	};

	return cmocka_run_group_tests_name("span_log", tests, NULL, NULL);
}
