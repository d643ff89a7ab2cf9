// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Unit tests for user/util/log.c: logfmt and JSON lines, escaping, level filtering and the rate
 * limit for repeating warnings, with the output and the clock injected. */
#define _GNU_SOURCE
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "util/log.h"

/* 2026-11-21T05:21:39.722Z */
#define T0 (1795238499ull * 1000000000ull + 722000000ull)
#define SEC 1000000000ull

static uint64_t fake_now = T0;

static uint64_t fake_clock(void)
{
	return fake_now;
}

struct captured {
	char *buf;
	size_t len;
	FILE *f;
};

static int setup(void **state)
{
	struct captured *c = calloc(1, sizeof(*c));

	if (!c)
		return -1;
	c->f = open_memstream(&c->buf, &c->len);
	if (!c->f)
		return -1;
	fake_now = T0;
	log_set_output(c->f);
	log_set_clock(fake_clock);
	log_set_level(LOG_LEVEL_INFO);
	log_set_format(LOG_FORMAT_LOGFMT);
	log_set_rate_limit(10, 60);
	*state = c;
	return 0;
}

static int teardown(void **state)
{
	struct captured *c = *state;

	log_set_output(NULL);
	log_set_clock(NULL);
	log_set_format(LOG_FORMAT_LOGFMT);
	log_set_rate_limit(10, 60);
	fclose(c->f);
	free(c->buf);
	free(c);
	return 0;
}

/* Everything logged so far. */
static const char *text(struct captured *c)
{
	fflush(c->f);
	return c->buf ? c->buf : "";
}

static size_t count_lines(const char *s)
{
	size_t n = 0;

	for (; *s; s++)
		n += *s == '\n';
	return n;
}

static size_t count_of(const char *s, const char *needle)
{
	size_t n = 0;

	while ((s = strstr(s, needle))) {
		n++;
		s += strlen(needle);
	}
	return n;
}

static void test_log_logfmt_line_has_time_level_message_and_error(void **state)
{
	struct captured *c = *state;

	assert_int_equal(log_warn(-ENOENT, "open %s (pid %d)", "/proc/7/maps", 7), -ENOENT);
	assert_string_equal(text(c), "ts=2026-11-21T05:21:39.722Z level=warn "
				     "msg=\"open /proc/7/maps (pid 7)\" "
				     "err=\"No such file or directory\"\n");
}

static void test_log_json_line_is_one_object(void **state)
{
	struct captured *c = *state;

	log_set_format(LOG_FORMAT_JSON);
	log_info("profiling %d processes", 3);
	assert_int_equal(log_err(-EACCES, "write %s", "x"), -EACCES);
	assert_string_equal(text(c), "{\"ts\":\"2026-11-21T05:21:39.722Z\",\"level\":\"info\","
				     "\"msg\":\"profiling 3 processes\"}\n"
				     "{\"ts\":\"2026-11-21T05:21:39.722Z\",\"level\":\"error\","
				     "\"msg\":\"write x\",\"err\":\"Permission denied\"}\n");
}

static void test_log_escapes_quotes_controls_and_invalid_utf8(void **state)
{
	struct captured *c = *state;
	const char *expect = "msg=\"say \\\"hi\\\" \\\\ a\\nb\\tc\\u0001 caf\xc3\xa9 \\ufffd!\"\n";

	log_info("say \"hi\" \\ a\nb\tc\x01 caf\xc3\xa9 \xff!");
	assert_non_null(strstr(text(c), expect));
	assert_int_equal(count_lines(text(c)), 1);

	log_set_format(LOG_FORMAT_JSON);
	log_info("k\"v\\\x7f");
	assert_non_null(strstr(text(c), "\"msg\":\"k\\\"v\\\\\\u007f\"}\n"));
}

static void test_log_keeps_the_longest_message_whole_when_escaped(void **state)
{
	struct captured *c = *state;
	char big[1100];

	/* The longest message (1023 bytes) of the costliest byte to escape (6 bytes each). */
	memset(big, 1, sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	log_set_format(LOG_FORMAT_JSON);
	log_err(-EIO, "%s", big);
	assert_int_equal(count_lines(text(c)), 1);
	assert_int_equal(count_of(text(c), "\\u0001"), 1023);
	assert_non_null(strstr(text(c), "\\u0001\",\"err\":\"Input/output error\"}\n"));
}

static void test_log_filters_by_level(void **state)
{
	struct captured *c = *state;

	log_debug("hidden %d", 1);
	assert_string_equal(text(c), "");
	log_set_level(LOG_LEVEL_DEBUG);
	log_debug("shown %d", 2);
	log_set_level(LOG_LEVEL_ERROR);
	log_warn(0, "hidden too");
	log_err(0, "an error");
	assert_int_equal(count_lines(text(c)), 2);
	assert_non_null(strstr(text(c), "level=debug msg=\"shown 2\"\n"));
	assert_non_null(strstr(text(c), "level=error msg=\"an error\"\n"));
	assert_null(strstr(text(c), "err="));
}

static void test_log_rate_limits_a_repeating_warning_then_summarises(void **state)
{
	struct captured *c = *state;
	int i;

	log_set_rate_limit(3, 60);
	for (i = 0; i < 10; i++)
		log_warn(-ESRCH, "read maps of pid %d", 100 + i);
	assert_int_equal(count_lines(text(c)), 3);
	assert_non_null(strstr(text(c), "pid 102"));
	assert_null(strstr(text(c), "pid 103"));

	/* Still inside the window: nothing more. */
	fake_now += 59 * SEC;
	log_warn(-ESRCH, "read maps of pid %d", 200);
	assert_int_equal(count_lines(text(c)), 3);

	/* A new window: first the summary of the old one, then the message itself. */
	fake_now += 2 * SEC;
	log_warn(-ESRCH, "read maps of pid %d", 300);
	assert_int_equal(count_lines(text(c)), 5);
	assert_non_null(strstr(text(c), "ts=2026-11-21T05:22:40.722Z level=warn "
					"msg=\"suppressed 8 similar messages\" "
					"last=\"read maps of pid 200\"\n"
					"ts=2026-11-21T05:22:40.722Z level=warn "
					"msg=\"read maps of pid 300\""));
}

static void test_log_rate_limit_counts_each_format_apart(void **state)
{
	struct captured *c = *state;
	int i;

	log_set_rate_limit(2, 60);
	for (i = 0; i < 5; i++) {
		log_warn(0, "first kind %d", i);
		log_err(0, "second kind %d", i);
		log_info("info is never limited %d", i);
	}
	assert_int_equal(count_of(text(c), "first kind"), 2);
	assert_int_equal(count_of(text(c), "second kind"), 2);
	assert_int_equal(count_of(text(c), "info is never limited"), 5);
}

/* One pid floods a warning; another pid's line of the same kind still prints, and the flood
 * is counted for /metrics. */
static void test_log_rate_limit_per_source_cannot_silence_another(void **state)
{
	struct captured *c = *state;
	uint64_t before = log_suppressed_total(LOG_SUPPRESSED_RATE);
	int i;

	log_set_rate_limit(3, 60);
	for (i = 0; i < 100; i++)
		log_warn_from(1000, -ENOSPC, "hook in %s (pid %d) not attached", "/tmp/evil.so",
			      1000);
	log_warn_from(1, -ENOSPC, "hook in %s (pid %d) not attached", "/opt/victim.so", 1);
	assert_int_equal(count_of(text(c), "/tmp/evil.so"), 3);
	assert_int_equal(count_of(text(c), "/opt/victim.so (pid 1)"), 1);
	assert_int_equal(log_suppressed_total(LOG_SUPPRESSED_RATE) - before, 97);
}

/* A flood from many more sources than the table holds: the warnings printed stay bounded, a
 * source that holds a slot keeps its allowance (the flood neither takes its slot nor resets its
 * count), newcomers of another format still print, the overflow is counted apart, and the
 * table's memory comes back once the windows are over. */
static void test_log_flood_of_sources_is_bounded_and_spares_slot_holders(void **state)
{
	struct captured *c = *state;
	uint64_t full0 = log_suppressed_total(LOG_SUPPRESSED_SOURCES_FULL);
	size_t lines, bound = (LOG_LIMIT_SOURCES + LOG_LIMIT_OVERFLOW_FORMATS + 1) * 2;
	int i;

	log_set_rate_limit(2, 60);
	log_warn_from(1, -ENOSPC, "hook in %s (pid %d) not attached", "/opt/victim.so", 1);
	for (i = 0; i < 20000; i++)
		log_warn_from(5000 + i, -ENOSPC, "hook in %s (pid %d) not attached", "/tmp/e.so",
			      5000 + i);
	lines = count_lines(text(c));
	printf("  20000 flooding sources printed %zu lines (bound %zu)\n", lines, bound);
	/* One line from each source in the table, then the newcomers' shared allowance (2). */
	assert_int_equal(lines, 1 + (LOG_LIMIT_SOURCES - 1) + 2);
	assert_true(lines <= bound);
	assert_int_equal(log_suppressed_total(LOG_SUPPRESSED_SOURCES_FULL) - full0,
			 20000 - (LOG_LIMIT_SOURCES - 1) - 2);
	/* The victim held a slot before the flood: its second line of the window prints. */
	log_warn_from(1, -ENOSPC, "hook in %s (pid %d) not attached", "/opt/victim2.so", 1);
	assert_int_equal(count_of(text(c), "/opt/victim2.so (pid 1)"), 1);
	/* A newcomer with another kind of warning has its format's own allowance. */
	log_warn_from(2, -EIO, "read %s (pid %d)", "/opt/lib.so", 2);
	assert_int_equal(count_of(text(c), "read /opt/lib.so (pid 2)"), 1);
	/* A newcomer of the flooded kind waits for the windows to end... */
	log_warn_from(3, -ENOSPC, "hook in %s (pid %d) not attached", "/opt/victim3.so", 3);
	assert_int_equal(count_of(text(c), "/opt/victim3.so (pid 3)"), 0);
	/* ...then the slots are free again: the summaries print, and it gets its own. */
	fake_now += 61 * SEC;
	log_warn_from(3, -ENOSPC, "hook in %s (pid %d) not attached", "/opt/victim4.so", 3);
	assert_int_equal(count_of(text(c), "/opt/victim4.so (pid 3)"), 1);
	assert_non_null(strstr(text(c), "from sources past the log's table of 256\" "
					"last=\"hook in /opt/victim3.so (pid 3) not attached\""));
}

static void test_log_summary_prints_when_the_window_ends_or_on_flush(void **state)
{
	struct captured *c = *state;
	int i;

	log_set_rate_limit(1, 10);
	for (i = 0; i < 4; i++)
		log_warn(0, "noisy %d", i);
	/* Any later line, of any kind, prints the summaries of windows that ended. */
	fake_now += 11 * SEC;
	log_info("something else");
	assert_non_null(strstr(text(c), "msg=\"suppressed 3 similar messages\" last=\"noisy 3\"\n"
					"ts=2026-11-21T05:21:50.722Z level=info "
					"msg=\"something else\""));
	log_warn(0, "noisy %d", 5);
	log_warn(0, "noisy %d", 6);
	log_flush_suppressed();
	assert_non_null(strstr(text(c), "msg=\"suppressed 1 similar message\" last=\"noisy 6\""));
	log_flush_suppressed();
	assert_int_equal(count_of(text(c), "suppressed"), 2);
}

static void test_log_rate_limit_zero_turns_it_off(void **state)
{
	struct captured *c = *state;
	int i;

	log_set_rate_limit(0, 60);
	for (i = 0; i < 100; i++)
		log_warn(0, "again %d", i);
	assert_int_equal(count_lines(text(c)), 100);
}

static void test_log_parses_level_and_format_names(void **state)
{
	enum log_level level;
	enum log_format format;

	(void)state;
	assert_int_equal(log_parse_level("warn", &level), 0);
	assert_int_equal(level, LOG_LEVEL_WARN);
	assert_int_equal(log_parse_level("debug", &level), 0);
	assert_int_equal(level, LOG_LEVEL_DEBUG);
	assert_int_equal(log_parse_level("WARN", &level), -EINVAL);
	assert_int_equal(log_parse_level("verbose", &level), -EINVAL);
	assert_int_equal(log_parse_format("json", &format), 0);
	assert_int_equal(format, LOG_FORMAT_JSON);
	assert_int_equal(log_parse_format("logfmt", &format), 0);
	assert_int_equal(format, LOG_FORMAT_LOGFMT);
	assert_int_equal(log_parse_format("text", &format), -EINVAL);
}

#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_log_logfmt_line_has_time_level_message_and_error),
		T(test_log_json_line_is_one_object),
		T(test_log_escapes_quotes_controls_and_invalid_utf8),
		T(test_log_keeps_the_longest_message_whole_when_escaped),
		T(test_log_filters_by_level),
		T(test_log_rate_limits_a_repeating_warning_then_summarises),
		T(test_log_rate_limit_counts_each_format_apart),
		T(test_log_rate_limit_per_source_cannot_silence_another),
		T(test_log_flood_of_sources_is_bounded_and_spares_slot_holders),
		T(test_log_summary_prints_when_the_window_ends_or_on_flush),
		T(test_log_rate_limit_zero_turns_it_off),
		T(test_log_parses_level_and_format_names),
	};

	return cmocka_run_group_tests_name("log", tests, NULL, NULL);
}
