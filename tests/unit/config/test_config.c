// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Unit tests for user/config/config.c: defaults, each flag, precedence of flags over the environment
 * over the file, sizes, label and header checks, secret files and options that go together. */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <cmocka.h>

#include "config/config.h"
#include "tmpdir.h"

struct parsed {
	struct spanprof_config cfg;
	enum config_result result;
	char out[8192], err[2048];
};

/* Parses argv (NULL-terminated) with the environment env (NULL-terminated, or NULL). */
static void parse_env(struct parsed *p, const char **argv, const char **env)
{
	FILE *out = fmemopen(p->out, sizeof(p->out), "w");
	FILE *err = fmemopen(p->err, sizeof(p->err), "w");
	int argc = 0;

	while (argv[argc])
		argc++;
	memset(p->out, 0, sizeof(p->out));
	memset(p->err, 0, sizeof(p->err));
	config_init(&p->cfg);
	p->result = config_parse(&p->cfg, argc, (char **)argv, (char *const *)env, out, err);
	fclose(out);
	fclose(err);
}

static void parse(struct parsed *p, int argc, const char **argv)
{
	assert_null(argv[argc]);
	parse_env(p, argv, NULL);
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
	config_release(&p.cfg);
}

static void test_config_parses_every_flag(void **state)
{
	const char *argv[] = { "spanprof", "--pid",	   "12",  "-p",		"34", "--frequency",
			       "49",	   "--interval",   "5",	  "--duration", "60", "--output",
			       "/tmp/x",   "--span-scope", "all", "-v",		NULL };
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
	config_release(&p.cfg);
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
	config_release(&p.cfg);
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
	config_release(&p.cfg);
	parse(&p, 2, version);
	assert_int_equal(p.result, CONFIG_EXIT_OK);
	assert_true(!strncmp(p.out, "spanprof ", 9));
	config_release(&p.cfg);
}

static void assert_mentions(const struct parsed *p, const char *needle)
{
	if (!strstr(p->err, needle))
		fail_msg("errors were '%s', expected them to mention '%s'", p->err, needle);
}

/* Writes text to dir/name and returns the path (static buffer, one at a time per name). */
static const char *write_file(const char *dir, const char *name, const char *text)
{
	static char path[8][512];
	static int next;
	char *p = path[next++ % 8];
	FILE *f;

	snprintf(p, 512, "%s/%s", dir, name);
	f = fopen(p, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	return p;
}

static int setup_dir(void **state)
{
	*state = tmpdir_new("config");
	return *state ? 0 : -1;
}

static int teardown_dir(void **state)
{
	tmpdir_remove(*state);
	return 0;
}

static void test_config_defaults_of_upload_and_agent_options(void **state)
{
	const char *argv[] = { "spanprof", NULL };
	struct parsed p;

	(void)state;
	parse_env(&p, argv, NULL);
	assert_int_equal(p.result, CONFIG_RUN);
	assert_null(p.cfg.upload.server);
	assert_int_equal(p.cfg.upload.nlabels, 0);
	assert_int_equal(p.cfg.upload.connect_timeout_s, 5);
	assert_int_equal(p.cfg.upload.upload_timeout_s, 30);
	assert_int_equal(p.cfg.upload.queue_bytes, 64ull << 20);
	assert_int_equal(p.cfg.unwind_table_bytes, 64ull << 20);
	assert_int_equal(p.cfg.upload.spool_bytes, 512ull << 20);
	assert_null(p.cfg.upload.spool_dir);
	assert_null(p.cfg.metrics_addr);
	assert_int_equal(p.cfg.log_level, LOG_LEVEL_INFO);
	assert_int_equal(p.cfg.log_format, LOG_FORMAT_LOGFMT);
	config_release(&p.cfg);
}

static void test_config_parses_upload_and_agent_flags(void **state)
{
	const char *dir = *state;
	const char *ca = write_file(dir, "ca.pem", "pem");
	const char *argv[] = { "spanprof",
			       "--server",
			       "https://pyro.example:4040/",
			       "--label",
			       "env=prod",
			       "--label",
			       "team=a=b",
			       "--tenant",
			       "acme-1",
			       "--header",
			       "X-A:  b c ",
			       "--header",
			       "X-Other: 1",
			       "--ca-file",
			       ca,
			       "--tls-insecure",
			       "--connect-timeout",
			       "7",
			       "--upload-timeout",
			       "60",
			       "--queue-bytes",
			       "8MiB",
			       "--spool",
			       "/var/spool/sp",
			       "--spool-bytes",
			       "2G",
			       "--metrics-addr",
			       "127.0.0.1:9100",
			       "--log-level",
			       "warn",
			       "--log-format",
			       "json",
			       "--unwind-table-bytes",
			       "16MiB",
			       NULL };
	struct parsed p;

	parse_env(&p, argv, NULL);
	assert_int_equal(p.result, CONFIG_RUN);
	assert_int_equal(p.cfg.unwind_table_bytes, 16ull << 20);
	assert_string_equal(p.cfg.upload.server, "https://pyro.example:4040");
	assert_int_equal(p.cfg.upload.nlabels, 2);
	assert_string_equal(p.cfg.upload.labels[0].key, "env");
	assert_string_equal(p.cfg.upload.labels[0].value, "prod");
	assert_string_equal(p.cfg.upload.labels[1].key, "team");
	assert_string_equal(p.cfg.upload.labels[1].value, "a=b");
	assert_string_equal(p.cfg.upload.tenant, "acme-1");
	assert_int_equal(p.cfg.upload.nheaders, 2);
	assert_string_equal(p.cfg.upload.headers[0], "X-A: b c");
	assert_string_equal(p.cfg.upload.headers[1], "X-Other: 1");
	assert_string_equal(p.cfg.upload.ca_file, ca);
	assert_int_equal(p.cfg.upload.tls_insecure, 1);
	assert_int_equal(p.cfg.upload.connect_timeout_s, 7);
	assert_int_equal(p.cfg.upload.upload_timeout_s, 60);
	assert_int_equal(p.cfg.upload.queue_bytes, 8ull << 20);
	assert_string_equal(p.cfg.upload.spool_dir, "/var/spool/sp");
	assert_int_equal(p.cfg.upload.spool_bytes, 2ull << 30);
	assert_string_equal(p.cfg.metrics_addr, "127.0.0.1:9100");
	assert_int_equal(p.cfg.log_level, LOG_LEVEL_WARN);
	assert_int_equal(p.cfg.log_format, LOG_FORMAT_JSON);
	config_release(&p.cfg);
}

static void test_config_verbose_means_debug_and_the_last_flag_wins(void **state)
{
	const char *a[] = { "spanprof", "--log-level", "error", "-v", NULL };
	const char *b[] = { "spanprof", "-v", "--log-level", "warn", NULL };
	const char *env[] = { "SPANPROF_LOG_LEVEL=error", NULL };
	const char *c[] = { "spanprof", "-v", NULL };
	struct parsed p;

	(void)state;
	parse_env(&p, a, NULL);
	assert_int_equal(p.cfg.log_level, LOG_LEVEL_DEBUG);
	config_release(&p.cfg);
	parse_env(&p, b, NULL);
	assert_int_equal(p.cfg.log_level, LOG_LEVEL_WARN);
	config_release(&p.cfg);
	parse_env(&p, c, env);
	assert_int_equal(p.cfg.log_level, LOG_LEVEL_DEBUG);
	config_release(&p.cfg);
}

static void test_config_flag_beats_env_beats_file_beats_default(void **state)
{
	const char *file = write_file(*state, "c.yaml",
				      "frequency: 10\n"
				      "interval: 20\n"
				      "duration: 30\n"
				      "span-scope: all\n");
	const char *env[] = { "SPANPROF_FREQUENCY=11", "SPANPROF_INTERVAL=21", NULL };
	const char *argv[] = { "spanprof", "--config", file, "--frequency", "12", NULL };
	struct parsed p;

	parse_env(&p, argv, env);
	assert_int_equal(p.result, CONFIG_RUN);
	assert_int_equal(p.cfg.frequency, 12); /* flag */
	assert_int_equal(p.cfg.interval_s, 21); /* env */
	assert_int_equal(p.cfg.duration_s, 30); /* file */
	assert_int_equal(p.cfg.span_scope, SPAN_SCOPE_ALL);
	assert_string_equal(p.cfg.output_dir, "./spanprof-data"); /* default */
	assert_string_equal(p.cfg.config_file, file);
	config_release(&p.cfg);
}

/* --interpreter-frames: on by default; a flag, the environment or the file turns it off, the
 * flag winning; anything but a boolean is refused with the flag named. */
static void test_config_interpreter_frames_from_each_source(void **state)
{
	const char *file = write_file(*state, "c.yaml", "interpreter-frames: false\n");
	const char *env_off[] = { "SPANPROF_INTERPRETER_FRAMES=off", NULL };
	const char *env_on[] = { "SPANPROF_INTERPRETER_FRAMES=true", NULL };
	const char *none[] = { "spanprof", NULL };
	const char *flag[] = { "spanprof", "--interpreter-frames=false", NULL };
	const char *spaced[] = { "spanprof", "--interpreter-frames", "0", NULL };
	const char *from_file[] = { "spanprof", "--config", file, NULL };
	const char *flag_wins[] = { "spanprof", "--interpreter-frames", "yes", NULL };
	struct parsed p;

	parse_env(&p, none, NULL);
	assert_int_equal(p.result, CONFIG_RUN);
	assert_int_equal(p.cfg.interpreter_frames, 1);
	config_release(&p.cfg);
	parse_env(&p, flag, NULL);
	assert_int_equal(p.result, CONFIG_RUN);
	assert_int_equal(p.cfg.interpreter_frames, 0);
	config_release(&p.cfg);
	parse_env(&p, spaced, NULL);
	assert_int_equal(p.result, CONFIG_RUN);
	assert_int_equal(p.cfg.interpreter_frames, 0);
	config_release(&p.cfg);
	parse_env(&p, none, env_off);
	assert_int_equal(p.result, CONFIG_RUN);
	assert_int_equal(p.cfg.interpreter_frames, 0);
	config_release(&p.cfg);
	parse_env(&p, from_file, NULL);
	assert_int_equal(p.result, CONFIG_RUN);
	assert_int_equal(p.cfg.interpreter_frames, 0);
	config_release(&p.cfg);
	parse_env(&p, from_file, env_on); /* the environment beats the file */
	assert_int_equal(p.cfg.interpreter_frames, 1);
	config_release(&p.cfg);
	parse_env(&p, flag_wins, env_off);
	assert_int_equal(p.cfg.interpreter_frames, 1);
	config_release(&p.cfg);
	expect_error("--interpreter-frames", "python", "--interpreter-frames: invalid value");
	expect_error("--interpreter-frames", "python", "true or false");
}

/* --off-cpu-unwind: full stacks by default, frame pointers on request, nothing else. */
static void test_config_off_cpu_unwind(void **state)
{
	const char *fp[] = { "spanprof", "--off-cpu-unwind", "fp", NULL };
	const char *none[] = { "spanprof", NULL };
	struct parsed p;

	(void)state;
	parse(&p, 1, none);
	assert_int_equal(p.result, CONFIG_RUN);
	assert_int_equal(p.cfg.off_cpu_fp, 0);
	config_release(&p.cfg);
	parse(&p, 3, fp);
	assert_int_equal(p.result, CONFIG_RUN);
	assert_int_equal(p.cfg.off_cpu_fp, 1);
	config_release(&p.cfg);
	expect_error("--off-cpu-unwind", "cfi", "--off-cpu-unwind: invalid value 'cfi'");
	expect_error("--off-cpu-unwind", "cfi", "'full' or 'fp'");
}

static void test_config_file_comes_from_the_environment_too(void **state)
{
	const char *file = write_file(*state, "c.yaml", "frequency: 33\n");
	char var[600];
	const char *env[] = { var, NULL };
	const char *argv[] = { "spanprof", NULL };
	struct parsed p;

	snprintf(var, sizeof(var), "SPANPROF_CONFIG=%s", file);
	parse_env(&p, argv, env);
	assert_int_equal(p.result, CONFIG_RUN);
	assert_int_equal(p.cfg.frequency, 33);
	config_release(&p.cfg);
}

static void test_config_a_higher_source_replaces_a_whole_list(void **state)
{
	const char *file = write_file(*state, "c.yaml",
				      "server: http://pyro:4040\n"
				      "labels: {env: prod, region: eu}\n"
				      "pid: [1, 2, 3]\n"
				      "headers: [\"X-A: 1\"]\n");
	const char *env[] = { "SPANPROF_LABELS=team=a", NULL };
	const char *argv[] = { "spanprof", "--config", file, "--pid", "9", NULL };
	struct parsed p;

	parse_env(&p, argv, env);
	assert_int_equal(p.result, CONFIG_RUN);
	assert_int_equal(p.cfg.upload.nlabels, 1); /* env replaced the file's labels */
	assert_string_equal(p.cfg.upload.labels[0].key, "team");
	assert_int_equal(p.cfg.npids, 1); /* the flag replaced the file's pids */
	assert_int_equal(p.cfg.pids[0], 9);
	assert_int_equal(p.cfg.upload.nheaders, 1); /* nobody else set headers */
	assert_string_equal(p.cfg.upload.headers[0], "X-A: 1");
	config_release(&p.cfg);
}

static void test_config_sizes_take_binary_suffixes(void **state)
{
	static const struct {
		const char *text;
		unsigned long long bytes;
	} ok[] = {
		{ "1048576", 1ull << 20 }, { "1024K", 1ull << 20 },  { "1024KiB", 1ull << 20 },
		{ "64M", 64ull << 20 },	   { "64MiB", 64ull << 20 }, { "3G", 3ull << 30 },
		{ "16GiB", 16ull << 30 },
	};
	static const char *const bad[] = {
		"",   "M",    "64 MiB", "64MB", "64m",
		"-1", "1.5G", "1023K",	"17G",	"99999999999999999999999G"
	};
	const char *argv[] = { "spanprof", "--queue-bytes", NULL, NULL };
	struct parsed p;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		argv[2] = ok[i].text;
		parse_env(&p, argv, NULL);
		assert_int_equal(p.result, CONFIG_RUN);
		assert_int_equal(p.cfg.upload.queue_bytes, ok[i].bytes);
		config_release(&p.cfg);
	}
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		argv[2] = bad[i];
		parse_env(&p, argv, NULL);
		assert_int_equal(p.result, CONFIG_ERROR);
		assert_mentions(&p, "--queue-bytes: invalid value");
		assert_mentions(&p, "from 1MiB to 16GiB");
		config_release(&p.cfg);
	}
}

static void expect_label_error(const char *label, const char *needle)
{
	const char *argv[] = { "spanprof", "--server", "http://x", "--label", label, NULL };
	struct parsed p;

	parse_env(&p, argv, NULL);
	assert_int_equal(p.result, CONFIG_ERROR);
	assert_mentions(&p, "--label: invalid value");
	assert_mentions(&p, needle);
	config_release(&p.cfg);
}

static void test_config_checks_label_names_and_values(void **state)
{
	char name[1100], value[2100];

	(void)state;
	expect_label_error("novalue", "KEY=VALUE");
	expect_label_error("=v", "KEY=VALUE");
	expect_label_error("a\tb=v", "without control characters");
	expect_label_error("a,b=v", "or ','");
	expect_label_error("\xff=v", "UTF-8");
	expect_label_error("__name__=x", "'__' (reserved)");
	expect_label_error("service_name=x", "other than service_name: spanprof sets it on every "
					     "series it pushes");
	expect_label_error("span_id=x", "other than span_id: spanprof sets it on the samples");
	/* The server reads '.' as '_': service.name would become service_name. */
	expect_label_error("service.name=x", "other than service_name: spanprof sets it");
	expect_label_error("env=", "non-empty label value");
	expect_label_error("env=\xff", "UTF-8");
	memset(name, 'a', 1025);
	strcpy(name + 1025, "=v");
	expect_label_error(name, "at most 1024 bytes");
	memset(value, 'v', sizeof(value) - 1);
	value[sizeof(value) - 1] = '\0';
	memcpy(value, "k=", 2);
	expect_label_error(value, "at most 2048 bytes");
}

/* A --label named like a label spanprof puts on samples (which the server lifts into the series)
 * would reach the server twice: refused, naming the label and where spanprof sets it. The
 * Kubernetes names are refused off Kubernetes too (this test runs off it), so a configuration
 * that starts on a laptop also starts in a cluster. */
static void test_config_refuses_labels_spanprof_sets_on_samples(void **state)
{
	static const char k8s[] = "spanprof sets it on the samples of processes in Kubernetes pods";
	const char *fine[] = { "spanprof",
			       "--server",
			       "http://x",
			       "--label",
			       "pod_name=a",
			       "--label",
			       "k8s.namespace=b",
			       "--label",
			       "containers=c",
			       "--label",
			       "service.ns=d",
			       "--label",
			       "service_namespace_id=e",
			       NULL };
	struct parsed p;

	(void)state;
	expect_label_error("pod=x", "other than pod: spanprof sets it on the samples of processes "
				    "in Kubernetes pods (reserved off Kubernetes too)");
	expect_label_error("namespace=x", k8s);
	expect_label_error("container=x", k8s);
	expect_label_error("service_namespace=x",
			   "other than service_namespace: spanprof sets it on the samples of a "
			   "process whose OTel process context has service.namespace");
	expect_label_error("service.namespace=x", "other than service_namespace: spanprof sets");
	expect_label_error("span.name=x", "other than span_name: spanprof sets it on the samples "
					  "taken in a span");
	expect_label_error("trace_id=x", "other than trace_id: spanprof sets it on the samples");
	/* Near misses: other names, even ones that contain a reserved one. */
	parse_env(&p, fine, NULL);
	assert_int_equal(p.result, CONFIG_RUN);
	assert_int_equal(p.cfg.upload.nlabels, 5);
	config_release(&p.cfg);
}

/* Names the server accepts by default: Prometheus' UTF-8 label names, '.' read as '_'. */
static void test_config_accepts_label_names_the_server_accepts(void **state)
{
	const char *argv[] = { "spanprof",	 "--server", "http://x",    "--label",
			       "k8s.cluster=eu", "--label",  "1st=a",	    "--label",
			       "équipe=b",	 "--label",  "team-name=c", NULL };
	const char *twice[] = { "spanprof", "--server", "http://x", "--label",
				"a.b=1",    "--label",	"a_b=2",    NULL };
	struct parsed p;

	(void)state;
	parse_env(&p, argv, NULL);
	assert_int_equal(p.result, CONFIG_RUN);
	assert_int_equal(p.cfg.upload.nlabels, 4);
	assert_string_equal(p.cfg.upload.labels[0].key, "k8s.cluster");
	assert_string_equal(p.cfg.upload.labels[2].key, "équipe");
	assert_string_equal(p.cfg.upload.labels[3].key, "team-name");
	config_release(&p.cfg);
	parse_env(&p, twice, NULL);
	assert_int_equal(p.result, CONFIG_ERROR);
	assert_mentions(&p, "each label name once");
	config_release(&p.cfg);
}

/* Appends "--label lI=v" for I from 0 to count - 1 to argv at n (the texts kept in labels), ends
 * argv with NULL and returns its new length. */
static int append_labels(const char **argv, int n, char (*labels)[16], int count)
{
	int i;

	for (i = 0; i < count; i++) {
		snprintf(labels[i], sizeof(labels[i]), "l%d=v", i);
		argv[n++] = "--label";
		argv[n++] = labels[i];
	}
	argv[n] = NULL;
	return n;
}

/* argv is refused for its labels, the errors mentioning needle and, when set, also. */
static void expect_over_label_budget(const char **argv, const char *needle, const char *also)
{
	struct parsed p;

	parse_env(&p, argv, NULL);
	assert_int_equal(p.result, CONFIG_ERROR);
	assert_mentions(&p, needle);
	if (also)
		assert_mentions(&p, also);
	config_release(&p.cfg);
}

/* The server lifts span_name (and trace_id before v2.1.0) from the samples into the series and
 * counts it against its 30 labels: 27 --label options fit, 28 do not. */
static void test_config_label_budget_counts_lifted_labels(void **state)
{
	static char labels[28][16];
	const char *argv[64] = { "spanprof", "--server", "http://x" };
	struct parsed p;
	int n;

	(void)state;
	n = append_labels(argv, 3, labels, 28);
	expect_over_label_budget(argv, "28 --label options, at most 27 fit", "span_name");
	argv[n - 2] = "--trace-id-label"; /* 27 labels and trace_id: one too many */
	argv[n - 1] = NULL;
	expect_over_label_budget(argv, "27 --label options, at most 26 fit", NULL);
	argv[n - 2] = NULL;
	parse_env(&p, argv, NULL);
	assert_int_equal(p.result, CONFIG_RUN);
	assert_int_equal(p.cfg.upload.nlabels, 27);
	assert_int_equal(p.cfg.upload.trace_id_label, 0); /* off by default */
	assert_int_equal(config_label_budget(&p.cfg.upload, 1), 24); /* on Kubernetes */
	config_release(&p.cfg);
}

/* Each --thread-ctx-labels key is a label the server lifts from the samples: one --label fewer
 * fits per key, and the error names the option. */
static void test_config_label_budget_counts_thread_ctx_labels(void **state)
{
	static char labels[25][16];
	const char *argv[64] = { "spanprof", "--server", "http://x", "--thread-ctx-labels",
				 "http.route,thread.name,db-system" };
	struct parsed p;
	int n;

	(void)state;
	n = append_labels(argv, 5, labels, 25);
	expect_over_label_budget(argv, "25 --label options, at most 24 fit", "--thread-ctx-labels");
	argv[n - 2] = "--trace-id-label"; /* 24 labels, 3 keys and trace_id: one too many */
	argv[n - 1] = NULL;
	expect_over_label_budget(argv, "24 --label options, at most 23 fit",
				 "trace_id and the --thread-ctx-labels");
	argv[n - 2] = NULL;
	parse_env(&p, argv, NULL);
	assert_int_equal(p.result, CONFIG_RUN);
	assert_int_equal(p.cfg.upload.nlabels, 24);
	assert_int_equal(p.cfg.upload.nthread_ctx_labels, 3);
	assert_string_equal(p.cfg.upload.thread_ctx_labels[2], "db-system");
	assert_int_equal(config_label_budget(&p.cfg.upload, 1), 21); /* on Kubernetes */
	config_release(&p.cfg);
	/* The last option given counts: one key leaves room for 26. */
	argv[n - 2] = "--thread-ctx-labels";
	argv[n - 1] = "http.route";
	argv[n] = NULL;
	parse_env(&p, argv, NULL);
	assert_int_equal(p.result, CONFIG_RUN);
	assert_int_equal(p.cfg.upload.nthread_ctx_labels, 1);
	assert_int_equal(config_label_budget(&p.cfg.upload, 0), 26);
	config_release(&p.cfg);
}

/* --thread-ctx-labels takes at most 4 keys of letters, digits, '.', '_' and '-', each 1 to 64
 * bytes. */
static void test_config_checks_thread_ctx_label_keys(void **state)
{
	static const char *const bad[] = { "a,b,c,d,e", "http route", "a,,b", ",a", "a,", "a=b" };
	const char *argv[] = { "spanprof", "--thread-ctx-labels", NULL, NULL };
	char longest[66];
	struct parsed p;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		argv[2] = bad[i];
		parse_env(&p, argv, NULL);
		if (p.result != CONFIG_ERROR)
			fail_msg("--thread-ctx-labels '%s' was accepted", bad[i]);
		assert_mentions(&p, "at most 4 comma-separated attribute keys");
		config_release(&p.cfg);
	}
	memset(longest, 'k', 65);
	longest[65] = '\0';
	argv[2] = longest;
	parse_env(&p, argv, NULL);
	assert_int_equal(p.result, CONFIG_ERROR);
	config_release(&p.cfg);
	longest[64] = '\0';
	argv[2] = longest;
	parse_env(&p, argv, NULL);
	assert_int_equal(p.result, CONFIG_RUN);
	config_release(&p.cfg);
	argv[2] = "a.b,c_d,e-f,G9";
	parse_env(&p, argv, NULL);
	assert_int_equal(p.result, CONFIG_RUN);
	assert_int_equal(p.cfg.upload.nthread_ctx_labels, 4);
	assert_string_equal(p.cfg.upload.thread_ctx_labels[3], "G9");
	config_release(&p.cfg);
	argv[2] = ""; /* none, as by default */
	parse_env(&p, argv, NULL);
	assert_int_equal(p.result, CONFIG_RUN);
	assert_int_equal(p.cfg.upload.nthread_ctx_labels, 0);
	config_release(&p.cfg);
}

/* argv is accepted with n --thread-ctx-labels keys. */
static void expect_thread_ctx_keys(const char **argv, size_t n)
{
	struct parsed p;

	parse_env(&p, argv, NULL);
	assert_int_equal(p.result, CONFIG_RUN);
	assert_int_equal(p.cfg.upload.nthread_ctx_labels, n);
	config_release(&p.cfg);
}

/* The label a --thread-ctx-labels key becomes ('.' and '-' written '_') is refused when
 * spanprof sets it itself, the server reserves it, or a --label already names it. */
static void expect_tctx_label_clash(const char *label, const char *keys, const char *needle)
{
	const char *argv[] = { "spanprof", "--thread-ctx-labels",
			       keys,	   label ? "--label" : NULL,
			       label,	   NULL };
	struct parsed p;

	parse_env(&p, argv, NULL);
	if (p.result != CONFIG_ERROR)
		fail_msg("--thread-ctx-labels %s with --label %s was accepted", keys,
			 label ? label : "(none)");
	assert_mentions(&p, "--thread-ctx-labels");
	assert_mentions(&p, needle);
	config_release(&p.cfg);
}

static void test_config_thread_ctx_labels_clash_with_no_other_label(void **state)
{
	const char *fine[] = { "spanprof",
			       "--thread-ctx-labels",
			       "http.route,db-system",
			       "--label",
			       "http-route=x",
			       "--label",
			       "db.system.name=y",
			       NULL };

	(void)state;
	expect_tctx_label_clash(NULL, "http.route,span.id", "labels samples as span_id");
	expect_tctx_label_clash(NULL, "service-name",
				"as service_name, which spanprof sets on every series it pushes");
	expect_tctx_label_clash(NULL, "trace_id",
				"which spanprof sets on the samples taken in a span");
	expect_tctx_label_clash(NULL, "span.name",
				"as span_name, which spanprof sets on the samples");
	expect_tctx_label_clash(NULL, "__x", "'__' (reserved)");
	expect_tctx_label_clash("http.route=x", "http.route", "which --label http.route sets");
	expect_tctx_label_clash("http_route=x", "db.system,http-route", "as http_route, which");
	/* Other names, even ones alike before '.' and '-' are read: accepted. */
	expect_thread_ctx_keys(fine, 2);
}

/* A key labelling samples like the process labels spanprof adds (the Kubernetes ones off
 * Kubernetes too) would give a sample that label twice: refused, naming where spanprof sets it. */
static void test_config_thread_ctx_labels_clash_with_no_process_label(void **state)
{
	static const char k8s[] = "which spanprof sets on the samples of processes in Kubernetes "
				  "pods (reserved off Kubernetes too)";
	const char *fine[] = { "spanprof", "--thread-ctx-labels",
			       "k8s.pod.name,k8s-namespace,container.id,service.namespace.x",
			       NULL };

	(void)state;
	expect_tctx_label_clash(NULL, "http.route,pod",
				"--thread-ctx-labels: pod labels samples "
				"as pod, which spanprof sets");
	expect_tctx_label_clash(NULL, "pod", k8s);
	expect_tctx_label_clash(NULL, "namespace", k8s);
	expect_tctx_label_clash(NULL, "container", k8s);
	expect_tctx_label_clash(NULL, "service.namespace",
				"service.namespace labels samples as service_namespace, which "
				"spanprof sets on the samples of a process whose OTel process "
				"context has service.namespace");
	expect_tctx_label_clash(NULL, "service-namespace", "as service_namespace, which");
	/* Near misses: OTel's own Kubernetes attribute keys become other names. */
	expect_thread_ctx_keys(fine, 4);
}

/* Two keys that become one label name would give a sample that label twice: refused. */
static void test_config_thread_ctx_labels_clash_with_each_other(void **state)
{
	const char *fine[] = { "spanprof", "--thread-ctx-labels", "http.route,http.routes,route",
			       NULL };

	(void)state;
	expect_tctx_label_clash(
		NULL, "http.route,http-route",
		"--thread-ctx-labels: http-route labels samples as http_route, which "
		"http.route does too");
	expect_tctx_label_clash(NULL, "a,http_route,b,http.route",
				"http.route labels samples as http_route, which http_route does");
	expect_tctx_label_clash(NULL, "db.system,db.system", "which db.system does too");
	expect_thread_ctx_keys(fine, 3);
}

/* The environment and a configuration file reach the same checks as the flags. */
static void test_config_label_clashes_are_refused_from_env_and_file(void **state)
{
	const char *file = write_file(
		*state, "c.yaml", "server: http://x\nthread-ctx-labels: k8s.pod.name,container\n");
	const char *label_env[] = { "SPANPROF_SERVER=http://x", "SPANPROF_LABELS=env=a,namespace=b",
				    NULL };
	const char *tctx_env[] = { "SPANPROF_THREAD_CTX_LABELS=pod", NULL };
	const char *plain[] = { "spanprof", NULL };
	const char *with_file[] = { "spanprof", "--config", file, NULL };
	struct parsed p;

	parse_env(&p, plain, label_env);
	assert_int_equal(p.result, CONFIG_ERROR);
	assert_mentions(&p, "SPANPROF_LABELS: invalid value 'namespace=b': expected a label name "
			    "other than namespace: spanprof sets it on the samples of processes in "
			    "Kubernetes pods");
	config_release(&p.cfg);
	parse_env(&p, plain, tctx_env);
	assert_int_equal(p.result, CONFIG_ERROR);
	assert_mentions(&p, "--thread-ctx-labels: pod labels samples as pod, which spanprof sets "
			    "on the samples of processes in Kubernetes pods");
	config_release(&p.cfg);
	parse_env(&p, with_file, NULL);
	assert_int_equal(p.result, CONFIG_ERROR);
	assert_mentions(&p, "--thread-ctx-labels: container labels samples as container, which "
			    "spanprof sets on the samples of processes in Kubernetes pods");
	config_release(&p.cfg);
}

static void test_config_accepts_27_labels_of_the_largest_size(void **state)
{
	static char labels[29][3200];
	const char *argv[64] = { "spanprof", "--server", "http://x" };
	struct parsed p;
	int i, n = 3;

	(void)state;
	/* Distinct 1024-byte names ("aa", "ba", ... padded with 'n') and 2048-byte values. */
	for (i = 0; i < 29; i++) {
		memset(labels[i], 'n', 1024);
		labels[i][0] = 'a' + i % 26;
		labels[i][1] = 'a' + i / 26;
		labels[i][1024] = '=';
		memset(labels[i] + 1025, 'v', 2048);
		labels[i][1025 + 2048] = '\0';
	}
	for (i = 0; i < 27; i++) {
		argv[n++] = "--label";
		argv[n++] = labels[i];
	}
	argv[n] = NULL;
	parse_env(&p, argv, NULL);
	assert_int_equal(p.result, CONFIG_RUN);
	assert_int_equal(p.cfg.upload.nlabels, 27);
	assert_int_equal(strlen(p.cfg.upload.labels[26].key), 1024);
	assert_int_equal(strlen(p.cfg.upload.labels[26].value), 2048);
	config_release(&p.cfg);

	for (i = 27; i < 29; i++) {
		argv[n++] = "--label";
		argv[n++] = labels[i];
	}
	argv[n] = NULL;
	parse_env(&p, argv, NULL);
	assert_int_equal(p.result, CONFIG_ERROR);
	assert_mentions(&p, "at most 28 labels");
	config_release(&p.cfg);

	argv[3] = "--label";
	argv[4] = "env=a";
	argv[5] = "--label";
	argv[6] = "env=b";
	argv[7] = NULL;
	parse_env(&p, argv, NULL);
	assert_int_equal(p.result, CONFIG_ERROR);
	assert_mentions(&p, "each label name once");
	config_release(&p.cfg);
}

static void expect_flag_error(const char *flag, const char *value, const char *needle);

/* The caps and budgets on process-controlled files: defaults, flags, environment, bad values. */
static void test_config_sets_input_caps_and_budgets(void **state)
{
	const char *argv[] = { "spanprof", "--dwarf-budget",
			       "16MiB",	   "--perf-map-max-lines",
			       "5000",	   "--symbol-budget",
			       "4MiB",	   "--interp-cache-budget",
			       "2MiB",	   NULL };
	const char *env[] = { "SPANPROF_LOAD_BUDGET=50", "SPANPROF_PERF_MAP_MAX_BYTES=2MiB", NULL };
	const char *plain[] = { "spanprof", NULL };
	struct parsed p;

	(void)state;
	parse_env(&p, plain, NULL);
	assert_int_equal(p.result, CONFIG_RUN);
	assert_int_equal(p.cfg.max_dwarf_bytes, 8ull << 20);
	assert_int_equal(p.cfg.symbol_budget, 8ull << 20);
	assert_int_equal(p.cfg.interp_cache_budget, 4ull << 20);
	assert_int_equal(p.cfg.load_budget_ms, 200);
	assert_int_equal(p.cfg.perf_map_max_bytes, 16ull << 20);
	assert_int_equal(p.cfg.perf_map_max_lines, 256u << 10);
	config_release(&p.cfg);
	parse_env(&p, argv, env);
	assert_int_equal(p.result, CONFIG_RUN);
	assert_int_equal(p.cfg.max_dwarf_bytes, 16ull << 20);
	assert_int_equal(p.cfg.load_budget_ms, 50);
	assert_int_equal(p.cfg.perf_map_max_bytes, 2ull << 20);
	assert_int_equal(p.cfg.perf_map_max_lines, 5000);
	assert_int_equal(p.cfg.symbol_budget, 4ull << 20);
	assert_int_equal(p.cfg.interp_cache_budget, 2ull << 20);
	config_release(&p.cfg);
	expect_flag_error("--load-budget", "0", "milliseconds, from 10 to 10000");
	expect_flag_error("--dwarf-budget", "1k", "a size from 1MiB");
	expect_flag_error("--symbol-budget", "1k", "a size from 1MiB");
	expect_flag_error("--interp-cache-budget", "2GiB", "a size from 1MiB to 1GiB");
}

static void expect_flag_error(const char *flag, const char *value, const char *needle)
{
	const char *argv[] = { "spanprof", "--server", "http://x", flag, value, NULL };
	struct parsed p;

	parse_env(&p, argv, NULL);
	assert_int_equal(p.result, CONFIG_ERROR);
	if (!strstr(p.err, needle))
		fail_msg("error for %s %s was '%s', expected it to mention '%s'", flag, value,
			 p.err, needle);
	config_release(&p.cfg);
}

static void test_config_checks_server_header_tenant_and_addresses(void **state)
{
	(void)state;
	expect_flag_error("--server", "pyro:4040", "--server: invalid value 'pyro:4040'");
	expect_flag_error("--server", "ftp://pyro", "http:// or https://");
	expect_flag_error("--server", "http://", "with a host");
	expect_flag_error("--server", "http://a b", "no query, fragment or spaces");
	expect_flag_error("--server", "http://a/?x=1", "no query");
	expect_flag_error("--header", "NoColon", "'Name: value'");
	expect_flag_error("--header", "Bad Name: v", "token characters");
	expect_flag_error("--header", "X-A:   ", "non-empty value");
	expect_flag_error("--header", "X-A: a\r\nX-B: b", "without control characters");
	expect_flag_error("--header", "content-type: text/plain", "the uploader sets them");
	expect_flag_error("--tenant", "a/b", "--tenant: invalid value 'a/b'");
	expect_flag_error("--tenant", "..", "other than '.' and '..'");
	expect_flag_error("--metrics-addr", "9100", "HOST:PORT");
	expect_flag_error("--metrics-addr", "::1:9100", "[IPv6]:PORT");
	expect_flag_error("--log-level", "trace", "error, warn, info or debug");
	expect_flag_error("--log-format", "text", "logfmt or json");
	expect_flag_error("--connect-timeout", "0", "seconds, from 1 to 300");
	expect_flag_error("--basic-auth-user", "a:b", "without ':'");
}

/* "Name:value" without a blank used to be copied one byte past its buffer (ASan: heap overflow)
 * and sent with heap garbage. */
static void test_config_header_without_a_blank_is_normalised(void **state)
{
	const char *argv[] = { "spanprof",	   "--server", "http://x", "--header",
			       "X-Token:abc",	   "--header", "A:b",	   "--header",
			       "X-Long:\t  v w  ", NULL };
	struct parsed p;

	(void)state;
	parse_env(&p, argv, NULL);
	assert_int_equal(p.result, CONFIG_RUN);
	assert_int_equal(p.cfg.upload.nheaders, 3);
	assert_string_equal(p.cfg.upload.headers[0], "X-Token: abc");
	assert_string_equal(p.cfg.upload.headers[1], "A: b");
	assert_string_equal(p.cfg.upload.headers[2], "X-Long: v w");
	config_release(&p.cfg);
}

/* Header values are secrets (Authorization, API keys): an error shows the name at most. */
static void test_config_header_errors_never_show_the_value(void **state)
{
	const char *bad_value[] = {
		"spanprof", "--server", "http://x", "--header", "Authorization: Bearer s3cr3t\x01",
		NULL
	};
	const char *no_colon[] = { "spanprof", "--server",	"http://x",
				   "--header", "Bearer s3cr3t", NULL };
	const char *env[] = { "SPANPROF_HEADERS=X-Api-Key: s3cr3t\x7f", NULL };
	const char *plain[] = { "spanprof", "--server", "http://x", NULL };
	struct parsed p;

	(void)state;
	parse_env(&p, bad_value, NULL);
	assert_int_equal(p.result, CONFIG_ERROR);
	assert_mentions(&p, "--header: invalid value 'Authorization: (value not shown)'");
	assert_null(strstr(p.err, "s3cr3t"));
	config_release(&p.cfg);
	parse_env(&p, no_colon, NULL);
	assert_int_equal(p.result, CONFIG_ERROR);
	assert_mentions(&p, "--header: invalid value '(not shown)'");
	assert_null(strstr(p.err, "s3cr3t"));
	config_release(&p.cfg);
	parse_env(&p, plain, env);
	assert_int_equal(p.result, CONFIG_ERROR);
	assert_mentions(&p, "SPANPROF_HEADERS: invalid value 'X-Api-Key: (value not shown)'");
	assert_null(strstr(p.err, "s3cr3t"));
	config_release(&p.cfg);
}

/* A value, option or path with terminal escapes is printed escaped, never raw. */
static void test_config_errors_escape_control_characters(void **state)
{
	const char *bad_value[] = { "spanprof", "--frequency", "\x1b[31mred\x07", NULL };
	const char *bad_flag[] = { "spanprof", "--\x1b]0;title", NULL };
	const char *bad_c1[] = { "spanprof", "--span-scope",
				 "a\xc2\x9b"
				 "b",
				 NULL };
	struct parsed p;

	(void)state;
	parse_env(&p, bad_value, NULL);
	assert_int_equal(p.result, CONFIG_ERROR);
	assert_mentions(&p, "invalid value '\\x1b[31mred\\x07'");
	assert_null(strchr(p.err, '\x1b'));
	assert_null(strchr(p.err, '\x07'));
	config_release(&p.cfg);
	parse_env(&p, bad_flag, NULL);
	assert_int_equal(p.result, CONFIG_ERROR);
	assert_mentions(&p, "unknown option '--\\x1b]0;title'");
	assert_null(strchr(p.err, '\x1b'));
	config_release(&p.cfg);
	parse_env(&p, bad_c1, NULL);
	assert_int_equal(p.result, CONFIG_ERROR);
	assert_mentions(&p, "'a\\x9bb'"); /* U+009B (CSI) */
	config_release(&p.cfg);
}

/* An unclosed IPv6 bracket used to pass here and fail later with the wrong message. */
static void test_config_server_url_host_and_port_are_checked(void **state)
{
	static const char *const good[] = { "http://[::1]:4040", "https://[fe80::1%25eth0]",
					    "http://u:p@host:1/base/", "http://127.0.0.1" };
	const char *argv[] = { "spanprof", "--server", NULL, NULL };
	struct parsed p;
	size_t i;

	(void)state;
	expect_flag_error("--server", "http://[::1", "an IPv6 address in brackets");
	expect_flag_error("--server", "http://[::1]x", "an IPv6 address in brackets");
	expect_flag_error("--server", "http://[]:1", "an IPv6 address in brackets");
	expect_flag_error("--server", "http://host:99999", "a port from 1 to 65535");
	expect_flag_error("--server", "http://host:", "a port from 1 to 65535");
	expect_flag_error("--server", "http://host:0", "a port from 1 to 65535");
	expect_flag_error("--server", "http://ho]st", "with a host");
	expect_flag_error("--server", "http://u@", "with a host");
	for (i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		argv[2] = good[i];
		parse_env(&p, argv, NULL);
		if (p.result != CONFIG_RUN)
			fail_msg("%s refused: %s", good[i], p.err);
		config_release(&p.cfg);
	}
}

static void test_config_reads_secret_files_without_the_trailing_newline(void **state)
{
	const char *dir = *state;
	const char *pw = write_file(dir, "pw", "s3cr3t pass\n");
	const char *tok = write_file(dir, "tok", "tok-123\r\n");
	const char *a[] = { "spanprof",	 "--server",
			    "https://x", "--basic-auth-user",
			    "u",	 "--basic-auth-password-file",
			    pw,		 NULL };
	const char *b[] = { "spanprof", "--server", "https://x", "--bearer-token-file", tok, NULL };
	struct parsed p;

	parse_env(&p, a, NULL);
	assert_int_equal(p.result, CONFIG_RUN);
	assert_string_equal(p.cfg.upload.basic_auth_user, "u");
	assert_string_equal(p.cfg.upload.basic_auth_password, "s3cr3t pass");
	config_release(&p.cfg);
	parse_env(&p, b, NULL);
	assert_int_equal(p.result, CONFIG_RUN);
	assert_string_equal(p.cfg.upload.bearer_token, "tok-123");
	config_release(&p.cfg);
}

static void expect_secret_error(const char *path, const char *needle)
{
	const char *argv[] = { "spanprof", "--server", "https://x", "--bearer-token-file",
			       path,	   NULL };
	struct parsed p;

	parse_env(&p, argv, NULL);
	assert_int_equal(p.result, CONFIG_ERROR);
	assert_mentions(&p, "--bearer-token-file ");
	assert_mentions(&p, needle);
	assert_null(strstr(p.err, "hunter2"));
	config_release(&p.cfg);
}

static void test_config_secret_file_errors_never_show_the_secret(void **state)
{
	const char *dir = *state;
	char big[70 * 1024];

	memset(big, 'h', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	expect_secret_error("/nonexistent/token", "No such file or directory");
	expect_secret_error(write_file(dir, "empty", "\n"), "empty");
	expect_secret_error(write_file(dir, "two", "hunter2\nline2\n"), "control characters");
	expect_secret_error(write_file(dir, "big", big), "larger than 64 KiB");
}

static void test_config_secrets_from_the_environment_are_never_printed(void **state)
{
	const char *env[] = { "SPANPROF_BEARER_TOKEN=hunter2\x01", NULL };
	const char *ok_env[] = { "SPANPROF_BASIC_AUTH_PASSWORD=hunter2",
				 "SPANPROF_BASIC_AUTH_USER=me", NULL };
	const char *argv[] = { "spanprof", "--server", "https://x", NULL };
	struct parsed p;

	(void)state;
	parse_env(&p, argv, env);
	assert_int_equal(p.result, CONFIG_ERROR);
	assert_mentions(&p, "SPANPROF_BEARER_TOKEN: invalid value (not shown)");
	assert_null(strstr(p.err, "hunter2"));
	config_release(&p.cfg);
	parse_env(&p, argv, ok_env);
	assert_int_equal(p.result, CONFIG_RUN);
	assert_string_equal(p.cfg.upload.basic_auth_password, "hunter2");
	assert_string_equal(p.cfg.upload.basic_auth_user, "me");
	config_release(&p.cfg);
}

static void expect_combination_error(const char **argv, const char **env, const char *needle)
{
	struct parsed p;

	parse_env(&p, argv, env);
	assert_int_equal(p.result, CONFIG_ERROR);
	assert_mentions(&p, needle);
	config_release(&p.cfg);
}

static void test_config_rejects_options_that_do_not_go_together(void **state)
{
	const char *dir = *state;
	const char *pw = write_file(dir, "pw", "pw\n");
	const char *no_server[] = { "spanprof", "--tenant", "t", NULL };
	const char *user_only[] = { "spanprof",		 "--server", "http://x",
				    "--basic-auth-user", "u",	     NULL };
	const char *pw_only[] = { "spanprof", "--server", "http://x", "--basic-auth-password-file",
				  pw,	      NULL };
	const char *both_pw[] = { "spanprof", "--server",
				  "http://x", "--basic-auth-user",
				  "u",	      "--basic-auth-password-file",
				  pw,	      NULL };
	const char *env_pw[] = { "SPANPROF_BASIC_AUTH_PASSWORD=x", NULL };
	const char *env_tok[] = { "SPANPROF_BEARER_TOKEN=x", NULL };
	const char *cert_only[] = { "spanprof", "--server", "http://x", "--client-cert", pw, NULL };
	const char *auth_header[] = {
		"spanprof", "--server", "http://x", "--header", "authorization: Basic eA==", NULL
	};
	const char *org_header[] = { "spanprof", "--server", "http://x",	 "--tenant",
				     "t",	 "--header", "X-Scope-OrgID: u", NULL };
	const char *no_ca[] = { "spanprof",  "--server",     "http://x",
				"--ca-file", "/nonexistent", NULL };

	expect_combination_error(no_server, NULL, "--tenant is set but --server is not");
	expect_combination_error(user_only, NULL, "--basic-auth-user needs a password");
	expect_combination_error(pw_only, NULL, "needs --basic-auth-user");
	expect_combination_error(both_pw, env_pw, "give the basic auth password once");
	expect_combination_error(both_pw, env_tok, "basic auth or a bearer token, not both");
	expect_combination_error(cert_only, NULL, "--client-cert and --client-key go together");
	expect_combination_error(auth_header, env_tok, "--header Authorization conflicts");
	expect_combination_error(org_header, NULL, "conflicts with --tenant");
	expect_combination_error(no_ca, NULL, "--ca-file /nonexistent: No such file");
}

static void test_config_release_wipes_and_empties(void **state)
{
	const char *env[] = { "SPANPROF_OUTPUT=/tmp/out", "SPANPROF_BEARER_TOKEN=t0k",
			      "SPANPROF_SERVER=http://x", NULL };
	const char *argv[] = { "spanprof", NULL };
	struct parsed p;

	(void)state;
	parse_env(&p, argv, env);
	assert_int_equal(p.result, CONFIG_RUN);
	assert_string_equal(p.cfg.output_dir, "/tmp/out");
	assert_true(p.cfg.owned.n >= 3);
	config_release(&p.cfg);
	assert_null(p.cfg.output_dir);
	assert_null(p.cfg.owned.v);
	assert_int_equal(p.cfg.owned.n, 0);
	config_release(&p.cfg); /* twice is harmless */
}

static void test_config_help_lists_every_option_within_80_columns(void **state)
{
	static const char *const flags[] = {
		"--server URL",
		"--label KEY=VALUE",
		"--basic-auth-user",
		"--basic-auth-password-file",
		"--bearer-token-file",
		"--tenant ID",
		"--header",
		"--ca-file",
		"--client-cert",
		"--client-key",
		"--tls-insecure",
		"--connect-timeout",
		"--upload-timeout",
		"--queue-bytes SIZE",
		"--spool DIR",
		"--spool-bytes",
		"--metrics-addr HOST:PORT",
		"--log-level",
		"--log-format",
		"--config FILE",
		"--unwind-table-bytes SIZE",
		"--interpreter-frames BOOL",
		"SPANPROF_BEARER_TOKEN",
		"SPANPROF_LABELS",
		"SPANPROF_HEADERS",
	};
	const char *argv[] = { "spanprof", "--help", NULL };
	char *line, *save;
	struct parsed p;
	size_t i;

	(void)state;
	parse_env(&p, argv, NULL);
	assert_int_equal(p.result, CONFIG_EXIT_OK);
	for (i = 0; i < sizeof(flags) / sizeof(flags[0]); i++)
		if (!strstr(p.out, flags[i]))
			fail_msg("--help does not mention %s", flags[i]);
	/* The first line of the description predates this test and is 81 columns. */
	for (line = strtok_r(p.out, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
		if (strlen(line) > 81)
			fail_msg("help line longer than 80 columns: '%s'", line);
	config_release(&p.cfg);
}

#define T(name) cmocka_unit_test(name)
#define TD(name) cmocka_unit_test_setup_teardown(name, setup_dir, teardown_dir)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_config_sets_input_caps_and_budgets),
		T(test_config_defaults_match_the_documentation),
		T(test_config_parses_every_flag),
		T(test_config_rejects_bad_values_naming_the_flag),
		T(test_config_help_and_version_exit_cleanly),
		T(test_config_defaults_of_upload_and_agent_options),
		TD(test_config_parses_upload_and_agent_flags),
		T(test_config_verbose_means_debug_and_the_last_flag_wins),
		TD(test_config_flag_beats_env_beats_file_beats_default),
		T(test_config_off_cpu_unwind),
		TD(test_config_file_comes_from_the_environment_too),
		TD(test_config_interpreter_frames_from_each_source),
		TD(test_config_a_higher_source_replaces_a_whole_list),
		T(test_config_sizes_take_binary_suffixes),
		T(test_config_checks_label_names_and_values),
		T(test_config_refuses_labels_spanprof_sets_on_samples),
		T(test_config_accepts_27_labels_of_the_largest_size),
		T(test_config_accepts_label_names_the_server_accepts),
		T(test_config_header_without_a_blank_is_normalised),
		T(test_config_header_errors_never_show_the_value),
		T(test_config_errors_escape_control_characters),
		T(test_config_server_url_host_and_port_are_checked),
		T(test_config_label_budget_counts_lifted_labels),
		T(test_config_label_budget_counts_thread_ctx_labels),
		T(test_config_checks_thread_ctx_label_keys),
		T(test_config_thread_ctx_labels_clash_with_no_other_label),
		T(test_config_thread_ctx_labels_clash_with_no_process_label),
		T(test_config_thread_ctx_labels_clash_with_each_other),
		TD(test_config_label_clashes_are_refused_from_env_and_file),
		T(test_config_checks_server_header_tenant_and_addresses),
		TD(test_config_reads_secret_files_without_the_trailing_newline),
		TD(test_config_secret_file_errors_never_show_the_secret),
		T(test_config_secrets_from_the_environment_are_never_printed),
		TD(test_config_rejects_options_that_do_not_go_together),
		T(test_config_release_wipes_and_empties),
		T(test_config_help_lists_every_option_within_80_columns),
	};

	return cmocka_run_group_tests_name("config", tests, NULL, NULL);
}
