// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Unit tests for user/output/span_stats.c: sums by (service, span name), the bound that sends
 * new pairs to span_name="other" and counts them, and the metrics it renders (escaped labels). */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>

#include <cmocka.h>

#include "output/span_stats.h"

/* The rendering of st; free() it. */
static char *render(struct span_stats *st)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	assert_non_null(f);
	assert_int_equal(span_stats_render(st, f), 0);
	fclose(f);
	return text;
}

static void test_span_stats_sums_by_service_and_name(void **state)
{
	struct span_stats *st = span_stats_new(10);
	struct span_stats_row r;

	(void)state;
	assert_non_null(st);
	span_stats_add(st, "checkout", "GET /cart", 1000, 50);
	span_stats_add(st, "checkout", "GET /cart", 3000, 0);
	span_stats_add(st, "checkout", "POST /pay", 7, 8);
	span_stats_add(st, "billing", "GET /cart", 5, 6);
	span_stats_add(st, NULL, NULL, 1, 2);
	assert_int_equal(span_stats_get(st, "checkout", "GET /cart", &r), 0);
	assert_int_equal(r.cpu_ns, 4000);
	assert_int_equal(r.off_cpu_ns, 50);
	assert_int_equal(r.spans, 2);
	assert_int_equal(span_stats_get(st, "billing", "GET /cart", &r), 0);
	assert_int_equal(r.spans, 1);
	assert_int_equal(r.cpu_ns, 5);
	assert_int_equal(span_stats_get(st, "unknown_service", "", &r), 0);
	assert_int_equal(r.off_cpu_ns, 2);
	assert_int_equal(span_stats_get(st, "checkout", "GET /nothing", &r), -ENOENT);
	assert_int_equal(span_stats_overflow(st), 0);
	span_stats_free(st);
}

static void test_span_stats_sends_pairs_past_the_limit_to_other(void **state)
{
	struct span_stats *st = span_stats_new(2);
	struct span_stats_row r;

	(void)state;
	assert_non_null(st);
	span_stats_add(st, "svc", "a", 1, 0);
	span_stats_add(st, "svc", "b", 2, 0);
	span_stats_add(st, "svc", "c", 4, 1);
	span_stats_add(st, "svc", "d", 8, 1);
	/* Known pairs still count in their own rows. */
	span_stats_add(st, "svc", "a", 16, 0);
	assert_int_equal(span_stats_get(st, "svc", "a", &r), 0);
	assert_int_equal(r.cpu_ns, 17);
	assert_int_equal(span_stats_get(st, "svc", "c", &r), -ENOENT);
	assert_int_equal(span_stats_get(st, "svc", SPAN_STATS_OTHER, &r), 0);
	assert_int_equal(r.cpu_ns, 12);
	assert_int_equal(r.off_cpu_ns, 2);
	assert_int_equal(r.spans, 2);
	assert_int_equal(span_stats_overflow(st), 2);
	span_stats_free(st);
}

/* One "other" row per service up to SPAN_STATS_OTHER_SERVICES; then service_name="other". */
static void test_span_stats_bounds_the_other_rows_too(void **state)
{
	struct span_stats *st = span_stats_new(1);
	struct span_stats_row r;
	char svc[32];
	int i, n = SPAN_STATS_OTHER_SERVICES + 10;

	(void)state;
	assert_non_null(st);
	span_stats_add(st, "first", "kept", 1, 0);
	for (i = 0; i < n; i++) {
		snprintf(svc, sizeof(svc), "svc%d", i);
		span_stats_add(st, svc, "x", 1, 0);
	}
	assert_int_equal(span_stats_overflow(st), n);
	snprintf(svc, sizeof(svc), "svc%d", SPAN_STATS_OTHER_SERVICES - 1);
	assert_int_equal(span_stats_get(st, svc, SPAN_STATS_OTHER, &r), 0);
	snprintf(svc, sizeof(svc), "svc%d", SPAN_STATS_OTHER_SERVICES);
	assert_int_equal(span_stats_get(st, svc, SPAN_STATS_OTHER, &r), -ENOENT);
	assert_int_equal(span_stats_get(st, SPAN_STATS_OTHER, SPAN_STATS_OTHER, &r), 0);
	assert_int_equal(r.spans, n - SPAN_STATS_OTHER_SERVICES);
	span_stats_free(st);
}

static void test_span_stats_render_escapes_labels(void **state)
{
	struct span_stats *st = span_stats_new(4);
	char *text;

	(void)state;
	assert_non_null(st);
	span_stats_add(st, "svc", "GET /a\"b\\c\nd", 1500000000, 250000000);
	span_stats_add(st, "svc", "GET /a\"b\\c\nd", 500000000, 0);
	span_stats_add(st, "svc", "bad \xff \xc3\xa9", 1, 0);
	text = render(st);
	assert_non_null(strstr(text, "span_name=\"bad \xef\xbf\xbd \xc3\xa9\"} 0.000000001\n"));
	assert_non_null(strstr(text, "# TYPE spanprof_span_cpu_seconds_total counter\n"));
	assert_non_null(strstr(text, "spanprof_span_cpu_seconds_total{service_name=\"svc\","
				     "span_name=\"GET /a\\\"b\\\\c\\nd\"} 2.000000000\n"));
	assert_non_null(strstr(text, "spanprof_span_off_cpu_seconds_total{service_name=\"svc\","
				     "span_name=\"GET /a\\\"b\\\\c\\nd\"} 0.250000000\n"));
	assert_non_null(strstr(text, "spanprof_spans_total{service_name=\"svc\","
				     "span_name=\"GET /a\\\"b\\\\c\\nd\"} 2\n"));
	assert_non_null(strstr(text, "spanprof_span_stats_overflow_total 0\n"));
	free(text);
	span_stats_free(st);
}

static void test_span_stats_refuses_a_zero_limit(void **state)
{
	(void)state;
	assert_null(span_stats_new(0));
	assert_int_equal(errno, EINVAL);
	span_stats_free(NULL);
}

/* One service sets thousands of distinct names: it takes half the table, and another service
 * still names an eighth of it (then its own "other"). */
static void test_span_stats_flood_leaves_room_for_other_services(void **state)
{
	struct span_stats *st = span_stats_new(100);
	struct span_stats_row row;
	char name[32];
	int i;

	(void)state;
	assert_non_null(st);
	for (i = 0; i < 5000; i++) {
		snprintf(name, sizeof(name), "flood-%d", i);
		span_stats_add(st, "flooder", name, 1000, 0);
	}
	for (i = 0; i < 13; i++) {
		snprintf(name, sizeof(name), "GET /%d", i);
		span_stats_add(st, "checkout", name, 2000, 0);
	}
	for (i = 0; i < 12; i++) {
		snprintf(name, sizeof(name), "GET /%d", i);
		assert_int_equal(span_stats_get(st, "checkout", name, &row), 0);
		assert_int_equal(row.spans, 1);
	}
	assert_int_equal(span_stats_get(st, "checkout", SPAN_STATS_OTHER, &row), 0);
	assert_int_equal(row.spans, 1);
	/* The flooder kept its share, the rest of its spans are in its own "other". */
	assert_int_equal(span_stats_get(st, "flooder", SPAN_STATS_OTHER, &row), 0);
	assert_int_equal(row.spans, 5000 - 50);
	assert_true(span_stats_fair_share(st) > 0);
	span_stats_free(st);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_span_stats_flood_leaves_room_for_other_services),
		cmocka_unit_test(test_span_stats_sums_by_service_and_name),
		cmocka_unit_test(test_span_stats_sends_pairs_past_the_limit_to_other),
		cmocka_unit_test(test_span_stats_bounds_the_other_rows_too),
		cmocka_unit_test(test_span_stats_render_escapes_labels),
		cmocka_unit_test(test_span_stats_refuses_a_zero_limit),
	};

	return cmocka_run_group_tests_name("span_stats", tests, NULL, NULL);
}
