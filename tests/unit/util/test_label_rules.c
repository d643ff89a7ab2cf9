// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Unit tests for label_rules: the one check of a series label that config and upload share. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "util/label_rules.h"

/* The check of name (whole string) and value; NULL when valid. */
static const char *check(const char *name, const char *value)
{
	return label_rules_check(name, strlen(name), value);
}

static void expect_bad(const char *name, const char *value, const char *needle)
{
	const char *why = check(name, value);

	assert_non_null(why);
	if (!strstr(why, needle))
		fail_msg("'%s'='%s': '%s' does not say '%s'", name, value, why, needle);
}

static void test_label_rules_accept_valid_labels(void **state)
{
	(void)state;
	assert_null(check("env", "prod"));
	assert_null(check("_x9", "caf\xc3\xa9"));
	assert_null(check("Region_2", "eu-west-1"));
	/* only name_len bytes of name count: config passes "KEY=VALUE" as it is */
	assert_null(label_rules_check("team=a", 4, "a"));
}

static void test_label_rules_reject_bad_names(void **state)
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
static void test_label_rules_follow_the_server_names(void **state)
{
	(void)state;
	assert_null(check("9lives", "v"));
	assert_null(check("a-b", "v"));
	assert_null(check("k8s.cluster", "v"));
	assert_null(check("r\xc3\xa9gion", "v"));
	expect_bad("service.name", "v", "spanprof sets them");
	expect_bad("span.id", "v", "spanprof sets them");
	assert_int_equal(label_name_cmp("a.b", 3, "a_b", 3), 0);
	assert_true(label_name_cmp("a.b", 3, "a_c", 3) < 0);
	assert_true(label_name_cmp("ab", 2, "a_b", 3) != 0);
}

static void test_label_rules_reserve_what_spanprof_sets(void **state)
{
	static const char *const reserved[] = { "service_name", "span_id", "trace_id",
						"span_name" };
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(reserved) / sizeof(reserved[0]); i++)
		expect_bad(reserved[i], "v", "spanprof sets them");
	assert_null(check("span", "v")); /* a prefix of a reserved name is not reserved */
}

static void test_label_rules_bound_name_and_value(void **state)
{
	char name[LABEL_NAME_MAX + 2], value[LABEL_VALUE_MAX + 2];

	(void)state;
	memset(name, 'n', sizeof(name));
	name[LABEL_NAME_MAX] = '\0';
	assert_null(check(name, "v"));
	name[LABEL_NAME_MAX] = 'n';
	name[LABEL_NAME_MAX + 1] = '\0';
	expect_bad(name, "v", "at most 1024 bytes");
	memset(value, 'v', sizeof(value));
	value[LABEL_VALUE_MAX] = '\0';
	assert_null(check("k", value));
	value[LABEL_VALUE_MAX] = 'v';
	value[LABEL_VALUE_MAX + 1] = '\0';
	expect_bad("k", value, "at most 2048 bytes");
}

static void test_label_rules_want_nonempty_utf8_values(void **state)
{
	(void)state;
	expect_bad("k", "", "non-empty label value");
	expect_bad("k", NULL, "non-empty label value");
	expect_bad("k", "\xff", "UTF-8");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_label_rules_accept_valid_labels),
		cmocka_unit_test(test_label_rules_reject_bad_names),
		cmocka_unit_test(test_label_rules_follow_the_server_names),
		cmocka_unit_test(test_label_rules_reserve_what_spanprof_sets),
		cmocka_unit_test(test_label_rules_bound_name_and_value),
		cmocka_unit_test(test_label_rules_want_nonempty_utf8_values),
	};

	return cmocka_run_group_tests_name("label_rules", tests, NULL, NULL);
}
