// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Unit tests for user/output/metrics.c: the registry's setters and its Prometheus text rendering, and
 * that a value written by one thread is never read torn by another. */
#define _GNU_SOURCE
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "output/metrics.h"

static int setup(void **state)
{
	*state = metrics_new();
	return *state ? 0 : -1;
}

static int teardown(void **state)
{
	metrics_free(*state);
	return 0;
}

/* The exposition of m; free() it. */
static char *render(const struct metrics *m)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	assert_int_equal(metrics_render(m, f), 0);
	assert_int_equal(fclose(f), 0);
	return buf;
}

static void assert_has(const char *text, const char *needle)
{
	if (!strstr(text, needle))
		fail_msg("'%s' not in the exposition:\n%s", needle, text);
}

static void test_metrics_start_at_zero_and_move_with_the_setters(void **state)
{
	struct metrics *m = *state;
	char *text;

	text = render(m);
	assert_has(text, "\nspanprof_samples_total 0\n");
	assert_has(text, "\nspanprof_samples_dropped_total{reason=\"encode_error\"} 0\n");
	free(text);

	metrics_add(m, METRIC_SAMPLES, 40);
	metrics_add(m, METRIC_SAMPLES, 2);
	metrics_set(m, METRIC_HOOKS_ATTACHED, 3);
	metrics_set(m, METRIC_HOOKS_ATTACHED, 2);
	metrics_set_at(m, METRIC_SAMPLES_DROPPED, SPANPROF_DROP_USER_STACK, 7);
	metrics_add_at(m, METRIC_SAMPLES_DROPPED, METRIC_DROP_SERVICE_OVERFLOW, 5);
	metrics_add_at(m, METRIC_UPLOADS, METRIC_UPLOAD_REJECTED, 1);
	metrics_set_at(m, METRIC_SYMCACHE_ENTRIES, METRIC_SYMCACHE_PIDS, 12);
	metrics_set(m, METRIC_QUEUE_BYTES, 1ull << 40);
	text = render(m);
	assert_has(text, "\nspanprof_samples_total 42\n");
	assert_has(text, "\nspanprof_hooks_attached 2\n");
	assert_has(text, "\nspanprof_samples_dropped_total{reason=\"user_stack_lost\"} 7\n");
	assert_has(text, "\nspanprof_samples_dropped_total{reason=\"service_overflow\"} 5\n");
	assert_has(text, "\nspanprof_samples_dropped_total{reason=\"kernel_stack_lost\"} 0\n");
	assert_has(text, "\nspanprof_uploads_total{result=\"rejected\"} 1\n");
	assert_has(text, "\nspanprof_symcache_entries{cache=\"pids\"} 12\n");
	assert_has(text, "\nspanprof_upload_queue_bytes 1099511627776\n");
	free(text);
	assert_int_equal(metrics_get(m, METRIC_SAMPLES, 0), 42);
}

/* Every line is a comment (# HELP / # TYPE) or "name{label="value"} integer"; every metric has
 * HELP and TYPE before its samples; counters end in _total, gauges do not. */
static void test_metrics_render_valid_text_format(void **state)
{
	char *text = render(*state), *line, *save, *name, type[16], current[128] = "";
	int metrics = 0, samples = 0;

	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (!strncmp(line, "# HELP ", 7)) {
			name = line + 7;
			assert_true(!strncmp(name, "spanprof_", 9));
			assert_non_null(strchr(name, ' ')); /* a HELP text follows */
			snprintf(current, sizeof(current), "%.*s", (int)(strchr(name, ' ') - name),
				 name);
			metrics++;
			continue;
		}
		if (!strncmp(line, "# TYPE ", 7)) {
			assert_int_equal(sscanf(line + 7 + strlen(current), " %15s", type), 1);
			assert_true(!strncmp(line + 7, current, strlen(current)));
			if (!strcmp(type, "counter"))
				assert_non_null(strstr(current, "_total"));
			else
				assert_string_equal(type, "gauge");
			continue;
		}
		/* A sample of the metric just described. */
		assert_true(!strncmp(line, current, strlen(current)));
		name = line + strlen(current);
		assert_true(*name == ' ' || *name == '{');
		if (*name == '{')
			assert_non_null(strstr(name, "=\""));
		assert_null(strstr(line, "(null)"));
		assert_true(strrchr(line, ' ')[1] >= '0' && strrchr(line, ' ')[1] <= '9');
		samples++;
	}
	assert_int_equal(metrics, METRIC__COUNT);
	assert_true(samples > metrics);
	free(text);
}

static void test_metrics_have_the_documented_names(void **state)
{
	static const char *const names[] = {
		"spanprof_build_info{version=\"",
		"spanprof_span_events_total{event=\"set\"}",
		"spanprof_span_events_total{event=\"clear\"}",
		"spanprof_hook_uprobe_entries_total ",
		"spanprof_switch_ins_caught_up_total{kind=\"span\"}",
		"spanprof_switch_ins_caught_up_total{kind=\"thread_context\"}",
		"spanprof_processes_tracked ",
		"spanprof_symcache_entries{cache=\"modules\"}",
		"spanprof_symcache_lookups_total{result=\"hit\"}",
		"spanprof_symcache_lookups_total{result=\"miss\"}",
		"spanprof_windows_written_total ",
		"spanprof_profiles_written_total ",
		"spanprof_profile_write_errors_total ",
		"spanprof_uploads_total{result=\"ok\"}",
		"spanprof_uploads_total{result=\"retried\"}",
		"spanprof_uploads_total{result=\"failed\"}",
		"spanprof_upload_retries_total ",
		"spanprof_spool_bytes ",
		"reason=\"counts_map_full\"",
		"reason=\"span_read_failed\"",
		"reason=\"span_storage_failed\"",
		"reason=\"span_bad_version\"",
		"reason=\"proc_event_lost\"",
		"spanprof_unwind_mappings_dropped_total{kind=\"file\"}",
		"spanprof_unwind_mappings_dropped_total{kind=\"anonymous\"}",
		"spanprof_interpreter_frames_dropped_total{interpreter=\"python\"}",
		"spanprof_interpreter_frames_dropped_total{interpreter=\"ruby\"}",
		"spanprof_python_code_cache_total{result=\"hit\"}",
		"spanprof_python_code_cache_total{result=\"miss\"}",
		"spanprof_python_code_cache_total{result=\"stale\"}",
		"spanprof_python_code_cache_total{result=\"read_error\"}",
		"spanprof_python_code_cache_total{result=\"eviction\"}",
		"spanprof_ruby_iseq_cache_total{result=\"hit\"}",
		"spanprof_ruby_iseq_cache_total{result=\"read_error\"}",
	};
	char *text = render(*state);
	size_t i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		assert_has(text, names[i]);
	/* Nothing can count a sampler that finds the span storage busy: no such reason is shown. */
	assert_null(strstr(text, "span_busy"));
	assert_has(text, "# TYPE spanprof_hooks_attached gauge\n");
	assert_has(text, "# TYPE spanprof_samples_total counter\n");
	free(text);
}

static void test_metrics_ignore_out_of_range_and_null(void **state)
{
	struct metrics *m = *state;

	metrics_add(NULL, METRIC_SAMPLES, 1);
	metrics_set_ready(NULL, 1);
	assert_int_equal(metrics_get(NULL, METRIC_SAMPLES, 0), 0);
	metrics_add_at(m, METRIC_SAMPLES, 1, 5); /* no label: only index 0 */
	metrics_add_at(m, METRIC_UPLOADS, 4, 5); /* 4 results */
	metrics_add_at(m, METRIC__COUNT, 0, 5);
	assert_int_equal(metrics_get(m, METRIC_SAMPLES, 1), 0);
	assert_int_equal(metrics_get(m, METRIC_UPLOADS, 4), 0);
	assert_int_equal(metrics_get(m, METRIC_SAMPLES, 0), 0);
	assert_int_equal(metrics_get(m, METRIC_BUILD_INFO, 0), 1);
}

static void test_metrics_readiness_flips(void **state)
{
	struct metrics *m = *state;

	assert_false(metrics_is_ready(m));
	metrics_set_ready(m, 1);
	assert_true(metrics_is_ready(m));
	metrics_set_ready(m, 0);
	assert_false(metrics_is_ready(m));
}

#define TORN_ROUNDS 200000
#define PATTERN_A 0x0000000000000000ull
#define PATTERN_B 0xffffffffffffffffull

static void *flip_gauge(void *arg)
{
	struct metrics *m = arg;
	int i;

	for (i = 0; i < TORN_ROUNDS; i++) {
		metrics_set(m, METRIC_SPOOL_BYTES, i & 1 ? PATTERN_B : PATTERN_A);
		metrics_add(m, METRIC_SAMPLES, 1);
	}
	return NULL;
}

/* A reader sees only values some writer stored, and adds from two threads are all counted. */
static void test_metrics_values_are_never_torn_across_threads(void **state)
{
	struct metrics *m = *state;
	pthread_t a, b;
	uint64_t v;
	int i;

	assert_int_equal(pthread_create(&a, NULL, flip_gauge, m), 0);
	assert_int_equal(pthread_create(&b, NULL, flip_gauge, m), 0);
	for (i = 0; i < TORN_ROUNDS; i++) {
		v = metrics_get(m, METRIC_SPOOL_BYTES, 0);
		assert_true(v == PATTERN_A || v == PATTERN_B);
	}
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	assert_int_equal(metrics_get(m, METRIC_SAMPLES, 0), 2 * TORN_ROUNDS);
}

static int render_extra(void *ctx, FILE *out)
{
	fprintf(out, "extra_metric_total %d\n", *(int *)ctx);
	return 0;
}

/* The switches in caught up: one counter, a series per kind, set from the BPF event counters;
 * a kind beyond the two is not a series. */
static void test_metrics_count_caught_up_switches_by_kind(void **state)
{
	struct metrics *m = *state;
	char *text;

	text = render(m);
	assert_has(text, "\nspanprof_switch_ins_caught_up_total{kind=\"span\"} 0\n");
	assert_has(text, "\nspanprof_switch_ins_caught_up_total{kind=\"thread_context\"} 0\n");
	free(text);
	metrics_set_at(m, METRIC_SWITCH_INS_CAUGHT_UP, METRIC_CAUGHT_UP_SPAN, 17);
	metrics_set_at(m, METRIC_SWITCH_INS_CAUGHT_UP, METRIC_CAUGHT_UP_THREAD_CTX, 3);
	metrics_set_at(m, METRIC_SWITCH_INS_CAUGHT_UP, METRIC_CAUGHT_UP_THREAD_CTX + 1, 9);
	text = render(m);
	assert_has(text, "# TYPE spanprof_switch_ins_caught_up_total counter\n");
	assert_has(text, "# HELP spanprof_switch_ins_caught_up_total Switches in that ");
	assert_has(text, "\nspanprof_switch_ins_caught_up_total{kind=\"span\"} 17\n");
	assert_has(text, "\nspanprof_switch_ins_caught_up_total{kind=\"thread_context\"} 3\n");
	assert_null(strstr(text, "spanprof_switch_ins_caught_up_total{kind=\"(null)"));
	assert_int_equal(
		metrics_get(m, METRIC_SWITCH_INS_CAUGHT_UP, METRIC_CAUGHT_UP_THREAD_CTX + 1), 0);
	free(text);
}

/* Metrics with data label values (span_stats.h) come after the registry's, from their owner. */
static void test_metrics_render_the_extra_renderer_last(void **state)
{
	struct metrics *m = *state;
	int value = 7;
	char *text;

	metrics_set_extra(m, render_extra, &value);
	text = render(m);
	assert_non_null(strstr(text, "spanprof_build_info"));
	assert_non_null(strstr(text, "\nextra_metric_total 7\n"));
	assert_true(strstr(text, "spanprof_build_info") < strstr(text, "extra_metric_total"));
	free(text);
	metrics_set_extra(NULL, render_extra, &value);
}

#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_metrics_start_at_zero_and_move_with_the_setters),
		T(test_metrics_render_valid_text_format),
		T(test_metrics_have_the_documented_names),
		T(test_metrics_count_caught_up_switches_by_kind),
		T(test_metrics_ignore_out_of_range_and_null),
		T(test_metrics_readiness_flips),
		T(test_metrics_values_are_never_torn_across_threads),
		T(test_metrics_render_the_extra_renderer_last),
	};

	return cmocka_run_group_tests_name("metrics", tests, NULL, NULL);
}
