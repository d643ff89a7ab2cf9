// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Unit tests for user/config.c: defaults, each flag, and clear errors for bad input. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "config.h"

struct parsed {
	struct spanprof_config cfg;
	enum config_result result;
	char out[4096], err[1024];
};

static void parse(struct parsed *p, int argc, const char **argv)
{
	FILE *out = fmemopen(p->out, sizeof(p->out), "w");
	FILE *err = fmemopen(p->err, sizeof(p->err), "w");

	memset(p->out, 0, sizeof(p->out));
	memset(p->err, 0, sizeof(p->err));
	config_init(&p->cfg);
	p->result = config_parse(&p->cfg, argc, (char **)argv, out, err);
	fclose(out);
	fclose(err);
}

static void test_config_defaults_match_the_documentation(void **state)
{
	const char *argv[] = { "spanprof", NULL };
	struct parsed p;

	(void)state;
	parse(&p, 1, argv);
	assert_int_equal(p.result, CONFIG_RUN);
	assert_int_equal(p.cfg.frequency, 100);
	assert_int_equal(p.cfg.interval_s, 15);
	assert_int_equal(p.cfg.duration_s, 0);
	assert_string_equal(p.cfg.output_dir, "./spanprof-data");
	assert_int_equal(p.cfg.span_scope, SPAN_SCOPE_ROOT);
	assert_int_equal(p.cfg.npids, 0);
}

static void test_config_parses_every_flag(void **state)
{
	const char *argv[] = { "spanprof", "--pid", "12", "-p", "34", "--frequency", "49",
			       "--interval", "5", "--duration", "60", "--output", "/tmp/x",
			       "--span-scope", "all", "-v", NULL };
	struct parsed p;

	(void)state;
	parse(&p, 16, argv);
	assert_int_equal(p.result, CONFIG_RUN);
	assert_int_equal(p.cfg.npids, 2);
	assert_int_equal(p.cfg.pids[0], 12);
	assert_int_equal(p.cfg.pids[1], 34);
	assert_int_equal(p.cfg.frequency, 49);
	assert_int_equal(p.cfg.interval_s, 5);
	assert_int_equal(p.cfg.duration_s, 60);
	assert_string_equal(p.cfg.output_dir, "/tmp/x");
	assert_int_equal(p.cfg.span_scope, SPAN_SCOPE_ALL);
	assert_int_equal(p.cfg.verbose, 1);
}

static void expect_error(const char *flag, const char *value, const char *needle)
{
	const char *argv[] = { "spanprof", flag, value, NULL };
	struct parsed p;

	parse(&p, value ? 3 : 2, argv);
	assert_int_equal(p.result, CONFIG_ERROR);
	if (!strstr(p.err, needle))
		fail_msg("error for %s %s was '%s', expected it to mention '%s'", flag,
			 value ? value : "", p.err, needle);
	assert_non_null(strstr(p.err, "--help"));
}

static void test_config_rejects_bad_values_naming_the_flag(void **state)
{
	(void)state;
	expect_error("--frequency", "0", "--frequency: invalid value '0'");
	expect_error("--frequency", "100x", "--frequency: invalid value '100x'");
	expect_error("--frequency", "5000", "1 to 1000");
	expect_error("--interval", "-1", "--interval: invalid value '-1'");
	expect_error("--duration", "abc", "--duration");
	expect_error("--pid", "0", "--pid: invalid value '0'");
	expect_error("--span-scope", "leaf", "'root' or 'all'");
	expect_error("--bogus", NULL, "unknown option '--bogus'");
	expect_error("--output", NULL, "missing value for option '--output'");
}

static void test_config_help_and_version_exit_cleanly(void **state)
{
	const char *help[] = { "spanprof", "--help", NULL };
	const char *version[] = { "spanprof", "--version", NULL };
	struct parsed p;

	(void)state;
	parse(&p, 2, help);
	assert_int_equal(p.result, CONFIG_EXIT_OK);
	assert_non_null(strstr(p.out, "--span-scope"));
	parse(&p, 2, version);
	assert_int_equal(p.result, CONFIG_EXIT_OK);
	assert_true(!strncmp(p.out, "spanprof ", 9));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_config_defaults_match_the_documentation),
		cmocka_unit_test(test_config_parses_every_flag),
		cmocka_unit_test(test_config_rejects_bad_values_naming_the_flag),
		cmocka_unit_test(test_config_help_and_version_exit_cleanly),
	};

	return cmocka_run_group_tests_name("config", tests, NULL, NULL);
}
