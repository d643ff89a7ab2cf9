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
#include <dirent.h>
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
	assert_non_null(strstr(buf, "\"name\":\"a\\\"b\\\\c\\td\\ne \xc3\xa9 \\ufffd!\""));
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

static uint64_t file_bytes(const char *path)
{
	struct stat st;

	return stat(path, &st) ? 0 : (uint64_t)st.st_size;
}

/* Bytes of all regular files in dir. */
static uint64_t dir_bytes(const char *dir)
{
	char path[4200];
	struct dirent *de;
	uint64_t total = 0;
	DIR *d = opendir(dir);

	assert_non_null(d);
	while ((de = readdir(d))) {
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		if (de->d_name[0] != '.')
			total += file_bytes(path);
	}
	closedir(d);
	return total;
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

/* What is buffered is counted until a flush writes it; a buffer grown past what is kept from one
 * flush to the next (a burst) is given back, and the next records still land in the file. */
static void test_span_log_counts_buffered_bytes_across_a_burst(void **state)
{
	struct span_log_limits lim = { .max_file_bytes = 16 << 20,
				       .max_buffered = 4 << 20,
				       .max_services = 4 };
	char *dir = tmpdir_new("span-log"), line[512];
	struct span_record r;
	struct span_log *sl;
	size_t one, i;

	(void)state;
	assert_non_null(dir);
	sl = span_log_new(dir, &lim);
	assert_non_null(sl);
	fill(&r, "burst", "a");
	one = span_log_format(&r, line, sizeof(line));
	assert_int_equal(span_log_buffered(sl), 0);
	for (i = 0; i < 2000; i++) /* some 400 KB: past the 64 KiB kept */
		assert_int_equal(span_log_add(sl, &r), 0);
	assert_int_equal(span_log_buffered(sl), 2000 * one);
	assert_int_equal(span_log_flush(sl), 0);
	assert_int_equal(span_log_buffered(sl), 0);
	assert_int_equal(count_lines(dir, "burst.spans.jsonl"), 2000);
	assert_int_equal(span_log_add(sl, &r), 0);
	assert_int_equal(span_log_buffered(sl), one);
	assert_int_equal(span_log_flush(sl), 0);
	assert_int_equal(count_lines(dir, "burst.spans.jsonl"), 2001);
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
	int i;

	(void)state;
	assert_non_null(dir);
	fill(&r, "svc", "name");
	lim.max_buffered = 8 * span_log_format(&r, NULL, 0);
	sl = span_log_new(dir, &lim);
	assert_non_null(sl);
	/* Alone, a service may fill half the buffer. */
	for (i = 0; i < 4; i++)
		assert_int_equal(span_log_add(sl, &r), 0);
	assert_int_equal(span_log_add(sl, &r), -ENOBUFS);
	fill(&r, "other-service", "name");
	assert_int_equal(span_log_add(sl, &r), -ENOBUFS); /* one service only */
	assert_int_equal(span_log_flush(sl), 0);
	fill(&r, "svc", "name");
	assert_int_equal(span_log_add(sl, &r), 0);
	assert_int_equal(span_log_flush(sl), 0);
	span_log_get_stats(sl, &st);
	assert_int_equal(st.records, 5);
	assert_int_equal(st.dropped, 2);
	assert_int_equal(st.fair_share_drops, 1);
	assert_int_equal(count_lines(dir, "svc.spans.jsonl"), 5);
	span_log_free(sl);
	tmpdir_remove(dir);
}

/* A flooding service fills its share of the buffer between two flushes; a quiet one still gets
 * every record in. */
static void test_span_log_flood_leaves_room_for_others(void **state)
{
	struct span_log_limits lim = { .max_file_bytes = 1 << 20, .max_services = 4 };
	char *dir = tmpdir_new("span-log-fair");
	struct span_log_stats st;
	struct span_record r;
	struct span_log *sl;
	int i, kept = 0;

	(void)state;
	assert_non_null(dir);
	fill(&r, "flood", "name");
	lim.max_buffered = 100 * span_log_format(&r, NULL, 0);
	sl = span_log_new(dir, &lim);
	assert_non_null(sl);
	for (i = 0; i < 1000; i++)
		kept += span_log_add(sl, &r) == 0;
	assert_int_equal(kept, 50);
	fill(&r, "quiet", "name");
	for (i = 0; i < 20; i++)
		assert_int_equal(span_log_add(sl, &r), 0);
	assert_int_equal(span_log_flush(sl), 0);
	assert_int_equal(count_lines(dir, "quiet.spans.jsonl"), 20);
	span_log_get_stats(sl, &st);
	assert_int_equal(st.fair_share_drops, 950);
	span_log_free(sl);
	tmpdir_remove(dir);
}

/* A batch many times the file cap is split across rotations: no file ever holds more than the
 * cap, and the records that could only be kept by exceeding it are counted. */
static void test_span_log_cap_is_hard_within_a_batch(void **state)
{
	struct span_log_limits lim = { .max_buffered = 1 << 20, .max_services = 4 };
	char *dir = tmpdir_new("span-log-cap");
	struct span_log_stats st;
	struct span_record r;
	struct span_log *sl;
	char path[4200];
	size_t line;
	int i;

	(void)state;
	assert_non_null(dir);
	fill(&r, "svc", "name");
	line = span_log_format(&r, NULL, 0);
	lim.max_file_bytes = 3 * line + line / 2; /* three lines and a half */
	sl = span_log_new(dir, &lim);
	assert_non_null(sl);
	for (i = 0; i < 10; i++)
		assert_int_equal(span_log_add(sl, &r), 0);
	assert_int_equal(span_log_flush(sl), 0);
	snprintf(path, sizeof(path), "%s/svc.spans.jsonl", dir);
	assert_true(file_bytes(path) <= lim.max_file_bytes);
	assert_int_equal(count_lines(dir, "svc.spans.jsonl"), 1);
	snprintf(path, sizeof(path), "%s/svc.spans.jsonl.1", dir);
	assert_true(file_bytes(path) <= lim.max_file_bytes);
	assert_int_equal(count_lines(dir, "svc.spans.jsonl.1"), 3);
	span_log_get_stats(sl, &st);
	assert_int_equal(st.rotations, 3);
	assert_int_equal(st.records, 10);
	span_log_free(sl);
	tmpdir_remove(dir);
}

/* Many services' files stay under the total bound; the service holding the most loses its
 * oldest file first, and a small one keeps all of its records. */
static void test_span_log_total_bound_takes_from_the_largest(void **state)
{
	struct span_log_limits lim = { .max_buffered = 1 << 20, .max_services = 8 };
	char *dir = tmpdir_new("span-log-total");
	struct span_log_stats st;
	struct span_record r;
	struct span_log *sl;
	char path[4200];
	size_t line;
	int i, round;

	(void)state;
	assert_non_null(dir);
	fill(&r, "flood", "name");
	line = span_log_format(&r, NULL, 0);
	lim.max_file_bytes = 4 * line;
	lim.max_total_bytes = 12 * line;
	sl = span_log_new(dir, &lim);
	assert_non_null(sl);
	fill(&r, "small", "name");
	assert_int_equal(span_log_add(sl, &r), 0);
	assert_int_equal(span_log_flush(sl), 0);
	for (round = 0; round < 10; round++) {
		for (i = 0; i < 6; i++) {
			char svc[16];

			snprintf(svc, sizeof(svc), "flood%d", i % 3);
			fill(&r, svc, "name");
			assert_int_equal(span_log_add(sl, &r), 0);
		}
		assert_int_equal(span_log_flush(sl), 0);
	}
	assert_int_equal(count_lines(dir, "small.spans.jsonl"), 1);
	for (i = 0; i < 3; i++) {
		uint64_t total = 0;

		snprintf(path, sizeof(path), "%s/flood%d.spans.jsonl", dir, i);
		total += file_bytes(path);
		snprintf(path, sizeof(path), "%s/flood%d.spans.jsonl.1", dir, i);
		total += file_bytes(path);
		assert_true(total <= 2 * lim.max_file_bytes);
	}
	assert_true(dir_bytes(dir) <= lim.max_total_bytes);
	span_log_get_stats(sl, &st);
	assert_true(st.total_removals > 0);
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
		cmocka_unit_test(test_span_log_counts_buffered_bytes_across_a_burst),
		cmocka_unit_test(test_span_log_rotates_a_full_file),
		cmocka_unit_test(test_span_log_drops_past_its_bounds),
		cmocka_unit_test(test_span_log_flood_leaves_room_for_others),
		cmocka_unit_test(test_span_log_cap_is_hard_within_a_batch),
		cmocka_unit_test(test_span_log_total_bound_takes_from_the_largest),
	};

	return cmocka_run_group_tests_name("span_log", tests, NULL, NULL);
}
