// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Unit tests for user/config/config_file.c: YAML files written to a temp dir at run time; every kind
 * of value, and errors that name the file and line (syntax, unknown or repeated key, bad value). */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "config/config.h"
#include "config/config_file.h"
#include "tmpdir.h"

struct loaded {
	struct spanprof_config cfg;
	int result;
	char err[2048];
	char path[512];
};

static int setup(void **state)
{
	*state = tmpdir_new("config-file");
	return *state ? 0 : -1;
}

/* Writes text as dir/config.yaml and loads it into a fresh configuration. */
static void load(struct loaded *l, const char *dir, const char *text)
{
	FILE *f, *err;

	snprintf(l->path, sizeof(l->path), "%s/config.yaml", dir);
	f = fopen(l->path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	memset(l->err, 0, sizeof(l->err));
	err = fmemopen(l->err, sizeof(l->err), "w");
	config_init(&l->cfg);
	l->result = config_file_load(&l->cfg, l->path, err);
	fclose(err);
}

/* The error must be exactly "spanprof: <path>:<rest>". */
static void expect_error(const char *dir, const char *text, const char *rest)
{
	struct loaded l;
	char want[1024];

	load(&l, dir, text);
	assert_int_equal(l.result, CONFIG_ERROR);
	snprintf(want, sizeof(want), "spanprof: %s:%s", l.path, rest);
	if (strncmp(l.err, want, strlen(want)))
		fail_msg("error was '%s', expected it to start with '%s'", l.err, want);
	config_release(&l.cfg);
}

static void test_config_file_sets_scalars_lists_booleans_and_labels(void **state)
{
	struct loaded l;

	load(&l, *state,
	     "# spanprof agent\n"
	     "frequency: 49\n"
	     "interval: \"5\"\n"
	     "span-scope: all\n"
	     "pid: [12, 34]\n"
	     "server: https://pyro:4040\n"
	     "labels:\n"
	     "  env: prod\n"
	     "  team: 'a b'\n"
	     "headers:\n"
	     "  - \"X-A: b\"\n"
	     "  - 'X-C: d'\n"
	     "tls-insecure: true\n"
	     "queue-bytes: 16MiB\n"
	     "spool: /var/spool/spanprof\n"
	     "metrics-addr: \":9100\"\n"
	     "log-format: json\n"
	     "verbose: yes\n");
	assert_int_equal(l.result, CONFIG_RUN);
	assert_int_equal(l.cfg.frequency, 49);
	assert_int_equal(l.cfg.interval_s, 5);
	assert_int_equal(l.cfg.span_scope, SPAN_SCOPE_ALL);
	assert_int_equal(l.cfg.npids, 2);
	assert_int_equal(l.cfg.pids[1], 34);
	assert_string_equal(l.cfg.upload.server, "https://pyro:4040");
	assert_int_equal(l.cfg.upload.nlabels, 2);
	assert_string_equal(l.cfg.upload.labels[1].key, "team");
	assert_string_equal(l.cfg.upload.labels[1].value, "a b");
	assert_int_equal(l.cfg.upload.nheaders, 2);
	assert_string_equal(l.cfg.upload.headers[1], "X-C: d");
	assert_int_equal(l.cfg.upload.tls_insecure, 1);
	assert_int_equal(l.cfg.upload.queue_bytes, 16ull << 20);
	assert_string_equal(l.cfg.upload.spool_dir, "/var/spool/spanprof");
	assert_string_equal(l.cfg.metrics_addr, ":9100");
	assert_int_equal(l.cfg.log_format, LOG_FORMAT_JSON);
	assert_int_equal(l.cfg.log_level, LOG_LEVEL_DEBUG);
	config_release(&l.cfg);
}

static void test_config_file_takes_a_scalar_as_a_list_of_one(void **state)
{
	struct loaded l;

	load(&l, *state, "pid: 77\nheaders: 'X-A: 1'\n");
	assert_int_equal(l.result, CONFIG_RUN);
	assert_int_equal(l.cfg.npids, 1);
	assert_int_equal(l.cfg.pids[0], 77);
	assert_int_equal(l.cfg.upload.nheaders, 1);
	config_release(&l.cfg);
}

static void test_config_file_empty_or_comments_only_changes_nothing(void **state)
{
	static const char *const texts[] = { "", "# nothing\n", "---\n", "~\n" };
	struct loaded l;
	size_t i;

	for (i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
		load(&l, *state, texts[i]);
		assert_int_equal(l.result, CONFIG_RUN);
		assert_int_equal(l.cfg.frequency, 100);
		config_release(&l.cfg);
	}
}

static void test_config_file_syntax_error_names_the_line(void **state)
{
	expect_error(*state, "frequency: 10\ninterval: 5\nserver: a: b\n",
		     "3: syntax error: mapping values are not allowed in this context\n");
	expect_error(*state, "frequency: 10\nlabels:\n\tenv: prod\n",
		     "3: syntax error: found character that cannot start any token while "
		     "scanning for the next token\n");
	expect_error(*state, "frequency: 10\n  interval: 5\n", "2: syntax error: ");
	expect_error(*state, "frequency: 1\nserver: \"unterminated\n\n", "4: syntax error: ");
}

static void test_config_file_unknown_key_names_the_line(void **state)
{
	expect_error(*state,
		     "frequency: 10\ninterval: 5\n\n# upload\nlabels: {a: b}\n\nservr: http://x\n",
		     "7: unknown key 'servr'\n");
	expect_error(*state, "span_scope: all\n",
		     "1: unknown key 'span_scope' (did you mean "
		     "'span-scope'?)\n");
	expect_error(*state, "label: {a: b}\n",
		     "1: unknown key 'label' (did you mean "
		     "'labels'?)\n");
	expect_error(*state, "help: true\n", "1: unknown key 'help'\n");
}

static void test_config_file_bad_value_names_key_and_line(void **state)
{
	expect_error(*state, "interval: 5\nfrequency: 0\n",
		     "2: frequency: invalid value '0': expected an integer from 1 to 1000\n");
	expect_error(*state, "labels:\n  env: prod\n  __x: y\n",
		     "3: labels: invalid value '__x=y': expected a label name that does not "
		     "start with '__'");
	expect_error(*state, "pid:\n  - 1\n  - zero\n", "3: pid: invalid value 'zero'");
	expect_error(*state, "server:\n", "1: server: invalid value ''");
	expect_error(*state, "output: ~\n", "1: output: invalid value ''");
	expect_error(*state, "tls-insecure: maybe\n",
		     "1: tls-insecure: invalid value 'maybe': "
		     "expected true or false\n");
}

/* labels: meets the check --label does: a label spanprof sets on samples is refused, naming
 * the line, the label and where spanprof sets it; a near miss is taken. */
static void test_config_file_labels_refuse_names_spanprof_sets(void **state)
{
	struct loaded l;

	expect_error(*state, "labels:\n  env: prod\n  container: x\n",
		     "3: labels: invalid value 'container=x': expected a label name other than "
		     "container: spanprof sets it on the samples of processes in Kubernetes pods "
		     "(reserved off Kubernetes too)");
	expect_error(*state, "labels: {namespace: x}\n",
		     "1: labels: invalid value 'namespace=x': expected a label name other than "
		     "namespace: spanprof sets it on the samples of processes in Kubernetes pods");
	load(&l, *state, "labels: {container_name: x, k8s.namespace: y}\n");
	assert_int_equal(l.result, CONFIG_RUN);
	assert_int_equal(l.cfg.upload.nlabels, 2);
	config_release(&l.cfg);
}

static void test_config_file_rejects_wrong_shapes_and_repeats(void **state)
{
	expect_error(*state, "frequency: [1, 2]\n",
		     "1: frequency: expected a single value, not "
		     "a list\n");
	expect_error(*state, "labels: [a, b]\n",
		     "1: labels: expected a mapping of names to values\n");
	expect_error(*state, "pid: {a: 1}\n", "1: pid: expected a list, not a mapping\n");
	expect_error(*state, "pid: [[1]]\n", "1: pid: expected a list of plain values\n");
	expect_error(*state, "labels: {a: [1]}\n", "1: labels: a: expected a plain value\n");
	expect_error(*state, "frequency: 1\ninterval: 2\nfrequency: 3\n",
		     "3: duplicate key 'frequency' (first on line 1)\n");
	expect_error(*state, "- frequency\n", "1: expected a mapping of option names to values\n");
	expect_error(*state, "a: &x 1\nfrequency: *x\n", "1: unknown key 'a'\n");
	expect_error(*state, "frequency: &x 1\ninterval: *x\n",
		     "2: interval: YAML aliases are not supported\n");
	expect_error(*state, "frequency: 1\n---\nfrequency: 2\n",
		     "2: expected one YAML document, found another\n");
}

static void test_config_file_keeps_secrets_and_itself_out(void **state)
{
	expect_error(*state, "bearer-token: abc\n",
		     "1: 'bearer-token' cannot be set in a file: use bearer-token-file, or "
		     "SPANPROF_BEARER_TOKEN\n");
	expect_error(*state, "config: other.yaml\n",
		     "1: 'config' cannot be set in a config file\n");
}

static void test_config_file_that_cannot_be_read_is_an_error(void **state)
{
	struct spanprof_config cfg;
	char err[512] = "";
	FILE *f = fmemopen(err, sizeof(err), "w");

	(void)state;
	config_init(&cfg);
	assert_int_equal(config_file_load(&cfg, "/nonexistent/spanprof.yaml", f), CONFIG_ERROR);
	fclose(f);
	assert_string_equal(err,
			    "spanprof: config file /nonexistent/spanprof.yaml: No such file or "
			    "directory\n");
	config_release(&cfg);
}

/* --config DIR used to say "Input/output error". */
static void test_config_file_that_is_a_directory_says_so(void **state)
{
	struct spanprof_config cfg;
	char err[512] = "", want[600];
	FILE *f = fmemopen(err, sizeof(err), "w");

	config_init(&cfg);
	assert_int_equal(config_file_load(&cfg, *state, f), CONFIG_ERROR);
	fclose(f);
	snprintf(want, sizeof(want),
		 "spanprof: config file %s: is a directory, expected a YAML file\n",
		 (char *)*state);
	assert_string_equal(err, want);
	config_release(&cfg);
}

/* Read once, parsed twice: a pipe (as from `--config <(...)`) works like a file. */
static void test_config_file_reads_from_a_pipe(void **state)
{
	static const char text[] = "frequency: 7\nlabels: {env: pipe}\n";
	struct spanprof_config cfg;
	char path[64];
	int fds[2];

	(void)state;
	assert_int_equal(pipe(fds), 0);
	assert_int_equal(write(fds[1], text, sizeof(text) - 1), sizeof(text) - 1);
	close(fds[1]);
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fds[0]);
	config_init(&cfg);
	assert_int_equal(config_file_load(&cfg, path, stderr), CONFIG_RUN);
	close(fds[0]);
	assert_int_equal(cfg.frequency, 7);
	assert_int_equal(cfg.upload.nlabels, 1);
	assert_string_equal(cfg.upload.labels[0].value, "pipe");
	config_release(&cfg);
}

#define T(name) cmocka_unit_test_setup_teardown(name, setup, tmpdir_teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_config_file_sets_scalars_lists_booleans_and_labels),
		T(test_config_file_takes_a_scalar_as_a_list_of_one),
		T(test_config_file_empty_or_comments_only_changes_nothing),
		T(test_config_file_syntax_error_names_the_line),
		T(test_config_file_unknown_key_names_the_line),
		T(test_config_file_bad_value_names_key_and_line),
		T(test_config_file_labels_refuse_names_spanprof_sets),
		T(test_config_file_rejects_wrong_shapes_and_repeats),
		T(test_config_file_keeps_secrets_and_itself_out),
		T(test_config_file_that_cannot_be_read_is_an_error),
		T(test_config_file_that_is_a_directory_says_so),
		T(test_config_file_reads_from_a_pipe),
	};

	return cmocka_run_group_tests_name("config_file", tests, NULL, NULL);
}
