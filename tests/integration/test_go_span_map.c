// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The goroutine span map grows with the goroutines in spans, stops at --go-span-map-entries and
 * is counted full there, and spans set after both still reach the samples. */
#define _GNU_SOURCE
#include <limits.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "agent_proc.h"
#include "metrics_scrape.h"
#include "profile_census.h"
#include "text_file.h"
#include "tmpdir.h"

/* The map starts at 1024 entries (the limit when smaller) and doubles when three quarters full:
 * with a limit of 2048 it grows once, at more than 768 goroutines in spans, and is full (at its
 * limit and three quarters full) at more than 1536. */
#define LIMIT "2048"
#define START 1024
#define FIRST 1000 /* goroutines parked in spans first: > 3/4 of START, < START */
#define SECOND 1700 /* then these more: FIRST + SECOND > LIMIT, so the LRU map evicts */
#define STR_(x) #x
#define STR(x) STR_(x)
#define FILLED_SPAN "5a5a0000000000c1"

static int setup(void **state)
{
	return agent_proc_go_setup(state, "tests/workloads/go_span_fill", "it-gofill");
}

/* Polls metric until it is at least want (60 s at most, the agent checks the map every 5
 * drains); returns its last value, -1 when it never showed. */
static double wait_metric(int port, const char *metric, double want)
{
	return metrics_scrape_until(port, metric, want, 60);
}

static double scrape(int port, const char *metric)
{
	double v = -1;

	assert_int_equal(metrics_scrape(port, metric, &v), 0);
	return v;
}

#define ENTRIES "spanprof_go_span_map_entries{kind=\"entries\"}"
#define CAPACITY "spanprof_go_span_map_entries{kind=\"capacity\"}"
#define MAP_LIMIT "spanprof_go_span_map_entries{kind=\"limit\"}"
#define GROWN "spanprof_go_span_map_grown_total"
#define FULL "spanprof_go_span_map_full_total"

static void test_go_span_map_grows_then_is_counted_full(void **state)
{
	const char *dir = *state;
	char pid_arg[16], go1[512], go2[512], go3[512], out[512];
	const char *argv[] = { "--output",
			       dir,
			       "--pid",
			       pid_arg,
			       "--interval",
			       "120",
			       "--duration",
			       "120",
			       "--metrics-addr",
			       "127.0.0.1:0",
			       "--go-span-map-entries",
			       LIMIT,
			       NULL };
	const char *work[] = { build_path("tests/workloads/go_span_fill"),
			       STR(FIRST),
			       go1,
			       STR(SECOND),
			       go2,
			       "1.5",
			       go3,
			       NULL };
	const char *env[] = { "OTEL_SERVICE_NAME=it-gofill", "GOMAXPROCS=2", NULL };
	const struct census_func *f;
	struct census c = { 0 };
	struct agent_proc agent;
	double grown, full, entries;
	int port;
	pid_t pid;

	if (!dir)
		skip();
	snprintf(go1, sizeof(go1), "%s/go1", dir);
	snprintf(go2, sizeof(go2), "%s/go2", dir);
	snprintf(go3, sizeof(go3), "%s/go3", dir);
	snprintf(out, sizeof(out), "%s/workload.out", dir);
	pid = workload_start(work, env, out);
	assert_true(pid > 0);
	assert_int_equal(workload_wait_exec(pid, work[0], 10), 0);
	snprintf(pid_arg, sizeof(pid_arg), "%d", (int)pid);
	assert_int_equal(agent_proc_start(&agent, dir, argv), 0);
	assert_true(agent_proc_wait_attach(&agent, work[0], pid, 30));
	port = metrics_scrape_port(agent.log_path);
	assert_true(port > 0);
	/* Before any goroutine of the workload is in a span: the first size, not grown. */
	assert_int_equal(wait_metric(port, CAPACITY, 1), START);
	assert_int_equal(scrape(port, MAP_LIMIT), 2048);
	assert_int_equal(scrape(port, GROWN), 0);
	assert_int_equal(scrape(port, FULL), 0);

	/* FIRST goroutines in spans: more than three quarters of 1024, so it doubles, once. */
	text_file_write(go1, "");
	grown = wait_metric(port, GROWN, 1);
	if (grown != 1)
		agent_proc_print_log(&agent);
	assert_int_equal(grown, 1);
	assert_int_equal(scrape(port, CAPACITY), 2048);
	entries = scrape(port, ENTRIES);
	printf("  grown to 2048 at %.0f entries\n", entries);
	assert_true(entries > START * 3 / 4 && entries <= START);

	/* SECOND more: past three quarters of the limit, so counted full (and never grown past). */
	text_file_write(go2, "");
	full = wait_metric(port, FULL, 1);
	if (full < 1)
		agent_proc_print_log(&agent);
	assert_true(full >= 1);
	entries = scrape(port, ENTRIES);
	printf("  counted full at %.0f entries of 2048 (%d goroutines in spans)\n", entries,
	       FIRST + SECOND);
	assert_true(entries > 2048 * 3 / 4 && entries <= 2048);
	assert_int_equal(scrape(port, CAPACITY), 2048);
	assert_int_equal(scrape(port, GROWN), 1);
	assert_true(agent_proc_log_contains(&agent, "grown to 2048 entries"));
	assert_true(agent_proc_log_contains(&agent, "spanprof_go_span_map_full_total"));

	/* The agent keeps working: goFilled's goroutine set its span after both, and its samples
	 * carry it. */
	text_file_write(go3, "");
	assert_int_equal(workload_wait(pid, 60), 0);
	assert_int_equal(agent_proc_stop(&agent), 0); /* writes the window */
	census_watch(&c, "main.goFilled", FILLED_SPAN);
	assert_int_equal(census_read(&c, dir, "it-gofill"), 1);
	f = census_get(&c, "main.goFilled");
	printf("  main.goFilled: %llu samples, %llu with span %s\n", (unsigned long long)f->samples,
	       (unsigned long long)f->right_span, FILLED_SPAN);
	assert_true(f->samples >= 20);
	assert_true(f->right_span >= 0.95 * f->samples);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_go_span_map_grows_then_is_counted_full, setup,
						tmpdir_teardown),
	};

	return cmocka_run_group_tests_name("go_span_map", tests, NULL, NULL);
}
