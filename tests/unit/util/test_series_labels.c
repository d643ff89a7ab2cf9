// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Unit tests for series_labels: the one label policy that config, the agent and upload share:
 * the check of a label and of a static set, the lifted labels and the budget. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "util/series_labels.h"

/* The check of name (whole string) and value; NULL when valid. */
static const char *check(const char *name, const char *value)
{
	return series_label_check(name, strlen(name), value);
}

static void expect_bad(const char *name, const char *value, const char *needle)
{
	const char *why = check(name, value);

	assert_non_null(why);
	if (!strstr(why, needle))
		fail_msg("'%s'='%s': '%s' does not say '%s'", name, value, why, needle);
}

static void test_series_labels_accept_valid_labels(void **state)
{
	(void)state;
	assert_null(check("env", "prod"));
	assert_null(check("_x9", "caf\xc3\xa9"));
	assert_null(check("Region_2", "eu-west-1"));
	/* only name_len bytes of name count: config passes "KEY=VALUE" as it is */
	assert_null(series_label_check("team=a", 4, "a"));
}

static void test_series_labels_reject_bad_names(void **state)
{
	(void)state;
	expect_bad("", "v", "non-empty label name");
	expect_bad("a\nb", "v", "without control characters");
	expect_bad("a\x1b[31m", "v", "without control characters");
	expect_bad("a,b", "v", "or ','");
	expect_bad("caf\xc3", "v", "UTF-8");
	expect_bad("__name__", "v", "'__' (reserved)");
}

/* The server takes any UTF-8 name (Prometheus' UTF-8 label names) and reads '.' as '_'. */
static void test_series_labels_follow_the_server_names(void **state)
{
	(void)state;
	assert_null(check("9lives", "v"));
	assert_null(check("a-b", "v"));
	assert_null(check("k8s.cluster", "v"));
	assert_null(check("r\xc3\xa9gion", "v"));
	expect_bad("service.name", "v", "other than service_name: spanprof sets it");
	expect_bad("span.id", "v", "other than span_id: spanprof sets it");
	expect_bad("service.namespace", "v", "other than service_namespace: spanprof sets it");
	assert_int_equal(series_label_name_cmp("a.b", 3, "a_b", 3), 0);
	assert_true(series_label_name_cmp("a.b", 3, "a_c", 3) < 0);
	assert_true(series_label_name_cmp("ab", 2, "a_b", 3) != 0);
}

static void test_series_labels_reserve_what_spanprof_sets(void **state)
{
	static const struct {
		const char *name, *set_on;
	} reserved[] = {
		{ "service_name", "every series it pushes" },
		{ "span_id", "the samples taken in a span" },
		{ "trace_id", "the samples taken in a span" },
		{ "span_name", "the samples taken in a span" },
		{ "service_namespace", "OTel process context has service.namespace" },
		{ "namespace", "processes in Kubernetes pods" },
		{ "pod", "processes in Kubernetes pods" },
		{ "container", "processes in Kubernetes pods" },
	};
	const char *on;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(reserved) / sizeof(reserved[0]); i++) {
		expect_bad(reserved[i].name, "v", "spanprof sets it on");
		expect_bad(reserved[i].name, "v", reserved[i].set_on);
		on = series_label_set_by_spanprof(reserved[i].name, strlen(reserved[i].name));
		assert_non_null(on);
		if (!strstr(on, reserved[i].set_on))
			fail_msg("%s: '%s' does not say '%s'", reserved[i].name, on,
				 reserved[i].set_on);
	}
	/* '__name__' is the "__" rule's; prefixes, extensions and names alike are not reserved */
	assert_null(series_label_set_by_spanprof("__name__", 8));
	assert_null(check("span", "v"));
	assert_null(check("pods", "v"));
	assert_null(check("k8s_namespace", "v"));
	assert_null(series_label_set_by_spanprof("pod=x", 5));
	assert_non_null(series_label_set_by_spanprof("pod=x", 3));
}

/* An attribute key's label name: '.' and '-' written '_', cut to the buffer. */
static void test_series_label_name_of_a_key(void **state)
{
	char name[8];

	(void)state;
	assert_int_equal(series_label_name_of_key("http.route", name, sizeof(name)), 7);
	assert_string_equal(name, "http_ro");
	assert_int_equal(series_label_name_of_key("a-b.c", name, sizeof(name)), 5);
	assert_string_equal(name, "a_b_c");
	assert_int_equal(series_label_name_of_key("", name, sizeof(name)), 0);
	assert_string_equal(name, "");
}

static void test_series_labels_bound_name_and_value(void **state)
{
	char name[SERIES_LABEL_NAME_MAX + 2], value[SERIES_LABEL_VALUE_MAX + 2];

	(void)state;
	memset(name, 'n', sizeof(name));
	name[SERIES_LABEL_NAME_MAX] = '\0';
	assert_null(check(name, "v"));
	name[SERIES_LABEL_NAME_MAX] = 'n';
	name[SERIES_LABEL_NAME_MAX + 1] = '\0';
	expect_bad(name, "v", "at most 1024 bytes");
	memset(value, 'v', sizeof(value));
	value[SERIES_LABEL_VALUE_MAX] = '\0';
	assert_null(check("k", value));
	value[SERIES_LABEL_VALUE_MAX] = 'v';
	value[SERIES_LABEL_VALUE_MAX + 1] = '\0';
	expect_bad("k", value, "at most 2048 bytes");
}

static void test_series_labels_want_nonempty_utf8_values(void **state)
{
	(void)state;
	expect_bad("k", "", "non-empty label value");
	expect_bad("k", NULL, "non-empty label value");
	expect_bad("k", "\xff", "UTF-8");
}

static void expect_bad_set(const struct pprof_label *l, size_t n, size_t bad_index)
{
	const char *why = NULL;
	size_t bad = 999;

	assert_int_equal(series_labels_check_static(l, n, &why, &bad), -EINVAL);
	assert_non_null(why);
	assert_int_equal(bad, bad_index);
}

static void test_series_labels_check_static_sets_as_the_server_does(void **state)
{
	/* Pyroscope takes UTF-8 label names, dotted ones included. */
	static const struct pprof_label ok[] = { { "env", "prod" },
						 { "_x9", "caf\xc3\xa9" },
						 { "k8s.cluster", "a" },
						 { "9lives", "a" },
						 { "\xc3\xa9quipe", "b" } };
	struct pprof_label l[SERIES_LABELS_MAX_STATIC + 1];
	char names[SERIES_LABELS_MAX_STATIC + 1][8], big[2050];
	const char *why;
	size_t bad, i;

	(void)state;
	assert_int_equal(series_labels_check_static(ok, 5, &why, &bad), 0);
	assert_int_equal(series_labels_check_static(NULL, 0, &why, &bad), 0);
	l[0] = (struct pprof_label){ "env", "a" };
	l[1] = (struct pprof_label){ "a\tb", "a" };
	expect_bad_set(l, 2, 1);
	l[1] = (struct pprof_label){ "\xff", "a" };
	expect_bad_set(l, 2, 1);
	l[1] = (struct pprof_label){ "service.name", "a" };
	expect_bad_set(l, 2, 1);
	l[1] = (struct pprof_label){ "__name__", "a" };
	expect_bad_set(l, 2, 1);
	l[1] = (struct pprof_label){ "service_name", "a" };
	expect_bad_set(l, 2, 1);
	l[1] = (struct pprof_label){ "env", "b" };
	expect_bad_set(l, 2, 1);
	l[1] = (struct pprof_label){ "x", "" };
	expect_bad_set(l, 2, 1);
	l[1] = (struct pprof_label){ "x", "\xff" };
	expect_bad_set(l, 2, 1);
	memset(big, 'v', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	l[1] = (struct pprof_label){ "x", big };
	expect_bad_set(l, 2, 1);
	for (i = 0; i <= SERIES_LABELS_MAX_STATIC; i++) {
		snprintf(names[i], sizeof(names[i]), "l%zu", i);
		l[i] = (struct pprof_label){ names[i], "v" };
	}
	assert_int_equal(series_labels_check_static(l, SERIES_LABELS_MAX_STATIC, &why, &bad), 0);
	expect_bad_set(l, SERIES_LABELS_MAX_STATIC + 1, SERIES_LABELS_MAX_STATIC + 1);
}

/* 30 per series: __name__ and service_name are built in, span_name is always lifted, trace_id
 * when pushed, the pod's three on Kubernetes, and each thread context key. */
static void test_series_labels_budget_counts_what_the_server_lifts(void **state)
{
	const char *keys[] = {
		"span_id", "trace_id", "span_name", "pod", "namespace", "container"
	};

	(void)state;
	assert_int_equal(series_labels_budget(series_labels_lifted(0, 0, 0)), 27);
	assert_int_equal(series_labels_budget(series_labels_lifted(1, 0, 0)), 26);
	assert_int_equal(series_labels_budget(series_labels_lifted(0, 1, 0)), 24);
	assert_int_equal(series_labels_budget(series_labels_lifted(1, 1, 4)), 19);
	/* what a profile's keys say agrees with what the configuration foresaw */
	assert_int_equal(series_labels_lifted_keys(keys, 6, 0), series_labels_lifted(0, 1, 0));
	assert_int_equal(series_labels_lifted_keys(keys, 6, 1), series_labels_lifted(1, 1, 0));
	assert_int_equal(series_labels_lifted_keys(keys, 1, 0), 0);
	assert_int_equal(series_labels_budget(0), SERIES_LABELS_MAX_STATIC);
	assert_int_equal(series_labels_budget(SERIES_LABELS_MAX_STATIC), 0);
	assert_int_equal(series_labels_budget(100), 0); /* never wraps */
}

/* A series: __name__, service_name (the fallback for none, repaired and cut) and the statics,
 * sorted by name; bad arguments are refused before anything is allocated. */
static void test_series_label_set_sorted_with_service(void **state)
{
	const struct pprof_label statics[] = { { "zone", "a" }, { "env", "prod" } };
	struct pprof_label many[SERIES_LABELS_MAX_STATIC + 1] = { { NULL, NULL } };
	struct series_label_set set;
	char *long_svc;

	(void)state;
	assert_int_equal(series_label_set_build(&set, "process_cpu", "web", statics, 2), 0);
	assert_int_equal(set.n, 4);
	assert_string_equal(set.labels[0].key, "__name__");
	assert_string_equal(set.labels[0].value, "process_cpu");
	assert_string_equal(set.labels[1].key, "env");
	assert_string_equal(set.labels[2].key, "service_name");
	assert_string_equal(set.labels[2].value, "web");
	assert_string_equal(set.labels[3].key, "zone");
	series_label_set_release(&set);
	assert_int_equal(series_label_set_build(&set, "process_cpu", "", NULL, 0), 0);
	assert_string_equal(set.labels[1].value, SERIES_LABEL_UNKNOWN_SERVICE);
	series_label_set_release(&set);
	/* Broken UTF-8 is repaired; a value past the limit is cut at a character. */
	assert_int_equal(series_label_set_build(&set, "n",
						"a\xff"
						"b",
						NULL, 0),
			 0);
	assert_string_not_equal(set.labels[1].value, "a\xff"
						     "b");
	series_label_set_release(&set);
	long_svc = malloc(SERIES_LABEL_VALUE_MAX + 2);
	assert_non_null(long_svc);
	memset(long_svc, 'x', SERIES_LABEL_VALUE_MAX - 1);
	strcpy(long_svc + SERIES_LABEL_VALUE_MAX - 1, "\xc3\xa9"); /* 2-byte char over the limit */
	assert_int_equal(series_label_set_build(&set, "n", long_svc, NULL, 0), 0);
	assert_int_equal(strlen(set.labels[1].value), SERIES_LABEL_VALUE_MAX - 1);
	series_label_set_release(&set);
	free(long_svc);
	assert_int_equal(series_label_set_build(&set, "", "web", NULL, 0), -EINVAL);
	assert_int_equal(series_label_set_build(&set, "n", "web", NULL, 1), -EINVAL);
	assert_int_equal(
		series_label_set_build(&set, "n", "web", many, SERIES_LABELS_MAX_STATIC + 1),
		-EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_series_labels_accept_valid_labels),
		cmocka_unit_test(test_series_labels_reject_bad_names),
		cmocka_unit_test(test_series_labels_follow_the_server_names),
		cmocka_unit_test(test_series_labels_reserve_what_spanprof_sets),
		cmocka_unit_test(test_series_label_name_of_a_key),
		cmocka_unit_test(test_series_labels_bound_name_and_value),
		cmocka_unit_test(test_series_labels_want_nonempty_utf8_values),
		cmocka_unit_test(test_series_labels_check_static_sets_as_the_server_does),
		cmocka_unit_test(test_series_labels_budget_counts_what_the_server_lifts),
		cmocka_unit_test(test_series_label_set_sorted_with_service),
	};

	return cmocka_run_group_tests_name("series_labels", tests, NULL, NULL);
}
