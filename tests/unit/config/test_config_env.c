// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Unit tests for user/config/config_env.c: SPANPROF_<OPTION> variables from an explicit environ block,
 * list separators, secrets given directly, errors naming the variable, unknown names. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "config/config.h"
#include "config/config_env.h"

struct loaded {
	struct spanprof_config cfg;
	int result;
	char err[2048];
};

static void load(struct loaded *l, const char **env)
{
	FILE *err = fmemopen(l->err, sizeof(l->err), "w");

	memset(l->err, 0, sizeof(l->err));
	config_init(&l->cfg);
	l->result = config_env_load(&l->cfg, (char *const *)env, err);
	fclose(err);
}

static void test_config_env_sets_scalars_booleans_and_lists(void **state)
{
	const char *env[] = { "PATH=/bin",
			      "SPANPROF_FREQUENCY=49",
			      "SPANPROF_SPAN_SCOPE=all",
			      "SPANPROF_SERVER=http://pyro:4040",
			      "SPANPROF_PID=12, 34,56",
			      "SPANPROF_LABELS=env=prod, team=a=b,",
			      "SPANPROF_TLS_INSECURE=TRUE",
			      "SPANPROF_SPOOL_BYTES=1GiB",
			      "SPANPROF_METRICS_ADDR=[::1]:9100",
			      "SPANPROF_LOG_FORMAT=json",
			      "SPANPROF_VERBOSE=1",
			      NULL };
	struct loaded l;

	(void)state;
	load(&l, env);
	assert_int_equal(l.result, CONFIG_RUN);
	assert_string_equal(l.err, "");
	assert_int_equal(l.cfg.frequency, 49);
	assert_int_equal(l.cfg.span_scope, SPAN_SCOPE_ALL);
	assert_string_equal(l.cfg.upload.server, "http://pyro:4040");
	assert_int_equal(l.cfg.npids, 3);
	assert_int_equal(l.cfg.pids[2], 56);
	assert_int_equal(l.cfg.upload.nlabels, 2);
	assert_string_equal(l.cfg.upload.labels[1].key, "team");
	assert_string_equal(l.cfg.upload.labels[1].value, "a=b");
	assert_int_equal(l.cfg.upload.tls_insecure, 1);
	assert_int_equal(l.cfg.upload.spool_bytes, 1ull << 30);
	assert_string_equal(l.cfg.metrics_addr, "[::1]:9100");
	assert_int_equal(l.cfg.log_format, LOG_FORMAT_JSON);
	assert_int_equal(l.cfg.log_level, LOG_LEVEL_DEBUG);
	config_release(&l.cfg);
}

static void test_config_env_headers_split_on_newlines_and_semicolons(void **state)
{
	const char *env[] = { "SPANPROF_SERVER=http://x",
			      "SPANPROF_HEADERS=X-A: 1;X-B: two words\n  X-C: 3 \n\n", NULL };
	struct loaded l;

	(void)state;
	load(&l, env);
	assert_int_equal(l.result, CONFIG_RUN);
	assert_int_equal(l.cfg.upload.nheaders, 3);
	assert_string_equal(l.cfg.upload.headers[0], "X-A: 1");
	assert_string_equal(l.cfg.upload.headers[1], "X-B: two words");
	assert_string_equal(l.cfg.upload.headers[2], "X-C: 3");
	config_release(&l.cfg);
}

static void test_config_env_secrets_are_taken_as_they_are(void **state)
{
	const char *env[] = { "SPANPROF_BASIC_AUTH_USER=me", "SPANPROF_BASIC_AUTH_PASSWORD= p;w,x ",
			      "SPANPROF_BEARER_TOKEN=tok", NULL };
	struct loaded l;

	(void)state;
	load(&l, env);
	assert_int_equal(l.result, CONFIG_RUN);
	assert_string_equal(l.cfg.upload.basic_auth_user, "me");
	assert_string_equal(l.cfg.upload.basic_auth_password, " p;w,x ");
	assert_string_equal(l.cfg.upload.bearer_token, "tok");
	config_release(&l.cfg);
}

static void test_config_env_bad_value_names_the_variable(void **state)
{
	const char *a[] = { "SPANPROF_FREQUENCY=fast", NULL };
	const char *b[] = { "SPANPROF_LABELS=env=prod,__bad=x", NULL };
	const char *c[] = { "SPANPROF_QUEUE_BYTES=10", NULL };
	struct loaded l;

	(void)state;
	load(&l, a);
	assert_int_equal(l.result, CONFIG_ERROR);
	assert_non_null(strstr(l.err, "spanprof: SPANPROF_FREQUENCY: invalid value 'fast': "
				      "expected an integer from 1 to 1000\n"));
	config_release(&l.cfg);
	load(&l, b);
	assert_int_equal(l.result, CONFIG_ERROR);
	assert_non_null(strstr(l.err, "spanprof: SPANPROF_LABELS: invalid value '__bad=x'"));
	config_release(&l.cfg);
	load(&l, c);
	assert_int_equal(l.result, CONFIG_ERROR);
	assert_non_null(strstr(l.err, "SPANPROF_QUEUE_BYTES: invalid value '10'"));
	config_release(&l.cfg);
}

/* SPANPROF_LABELS meets the check --label does: a label spanprof sets on samples is refused,
 * naming the variable, the label and where spanprof sets it; a near miss is taken. */
static void test_config_env_labels_refuse_names_spanprof_sets(void **state)
{
	const char *pod[] = { "SPANPROF_LABELS=env=prod,pod=x", NULL };
	const char *ns[] = { "SPANPROF_LABELS=service.namespace=x", NULL };
	const char *fine[] = { "SPANPROF_LABELS=pod_name=x,k8s.container=y", NULL };
	struct loaded l;

	(void)state;
	load(&l, pod);
	assert_int_equal(l.result, CONFIG_ERROR);
	assert_non_null(strstr(l.err,
			       "spanprof: SPANPROF_LABELS: invalid value 'pod=x': expected a "
			       "label name other than pod: spanprof sets it on the samples "
			       "of processes in Kubernetes pods"));
	config_release(&l.cfg);
	load(&l, ns);
	assert_int_equal(l.result, CONFIG_ERROR);
	assert_non_null(strstr(l.err, "other than service_namespace: spanprof sets it on the "
				      "samples of a process whose OTel process context"));
	config_release(&l.cfg);
	load(&l, fine);
	assert_int_equal(l.result, CONFIG_RUN);
	assert_int_equal(l.cfg.upload.nlabels, 2);
	config_release(&l.cfg);
}

static void test_config_env_empty_is_unset_and_first_one_wins(void **state)
{
	const char *env[] = { "SPANPROF_OUTPUT=", "SPANPROF_INTERVAL=7", "SPANPROF_INTERVAL=8",
			      NULL };
	struct loaded l;

	(void)state;
	load(&l, env);
	assert_int_equal(l.result, CONFIG_RUN);
	/* Unset: the default directory is only chosen later, by config_check(). */
	assert_null(l.cfg.output_dir);
	assert_int_equal(l.cfg.interval_s, 7);
	config_release(&l.cfg);
}

/* The environment is shared with other tools: an unknown name warns but does not stop. */
static void test_config_env_warns_about_unknown_spanprof_names(void **state)
{
	const char *env[] = { "SPANPROF_SERVR=http://x", "SPANPROF_LABEL=a=b", "SPANPROFILE=x",
			      "SPANPROF_HELP=1", NULL };
	struct loaded l;

	(void)state;
	load(&l, env);
	assert_int_equal(l.result, CONFIG_RUN);
	assert_non_null(strstr(l.err, "warning: ignoring unknown environment variable "
				      "SPANPROF_SERVR\n"));
	assert_non_null(strstr(l.err, "variable SPANPROF_LABEL\n"));
	assert_non_null(strstr(l.err, "variable SPANPROF_HELP\n"));
	assert_null(strstr(l.err, "SPANPROFILE"));
	assert_null(l.cfg.upload.server);
	config_release(&l.cfg);
}

static void test_config_env_null_block_is_empty(void **state)
{
	struct loaded l;

	(void)state;
	load(&l, NULL);
	assert_int_equal(l.result, CONFIG_RUN);
	assert_int_equal(l.cfg.frequency, 100);
	config_release(&l.cfg);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_config_env_sets_scalars_booleans_and_lists),
		cmocka_unit_test(test_config_env_headers_split_on_newlines_and_semicolons),
		cmocka_unit_test(test_config_env_secrets_are_taken_as_they_are),
		cmocka_unit_test(test_config_env_bad_value_names_the_variable),
		cmocka_unit_test(test_config_env_labels_refuse_names_spanprof_sets),
		cmocka_unit_test(test_config_env_empty_is_unset_and_first_one_wins),
		cmocka_unit_test(test_config_env_warns_about_unknown_spanprof_names),
		cmocka_unit_test(test_config_env_null_block_is_empty),
	};

	return cmocka_run_group_tests_name("config_env", tests, NULL, NULL);
}
