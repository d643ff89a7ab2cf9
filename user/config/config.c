// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Defaults, --help, flag parsing (getopt_long over the option table), and the order in which
 * the sources are applied: file, environment, flags, then the checks. */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/config_env.h"
#include "config/config_file.h"
#include "config/config_int.h"
#include "util/spanprof_types.h"

#ifndef SPANPROF_VERSION
#define SPANPROF_VERSION "dev"
#endif

/* getopt_long's value for options without a short name. */
#define LONG_ONLY_BASE 256
#define HELP_COLUMN 27

static const char usage_head[] =
	"Usage: spanprof [OPTION]...\n"
	"   or: spanprof view [DIR]  (a local web page on what it wrote; view --help)\n"
	"Samples on-CPU stacks of every process (or --pid) and labels each sample with\n"
	"the OpenTelemetry span its thread had set through spanprof_span_set().\n";

static const char usage_tail[] =
	"\n"
	"Every option can also be set in the environment as SPANPROF_<OPTION>:\n"
	"SPANPROF_SERVER=URL, SPANPROF_SPAN_SCOPE=all, SPANPROF_TLS_INSECURE=true; lists\n"
	"as SPANPROF_PID=\"1,2\", SPANPROF_LABELS=\"env=prod,team=a\" and\n"
	"SPANPROF_HEADERS=\"X-A: b;X-C: d\". Or in the YAML file of --config, keyed by the\n"
	"long option: server: URL, labels: {env: prod}, headers: [\"X-A: b\"], pid: [1, 2].\n"
	"A flag beats the environment, which beats the file; a source that sets a list\n"
	"replaces it whole. Secrets may also be given as SPANPROF_BASIC_AUTH_PASSWORD and\n"
	"SPANPROF_BEARER_TOKEN.\n"
	"SIZE takes a K, M, G, KiB, MiB or GiB suffix (all powers of 1024).\n";

/* Section titles, printed before the option they name. */
static const char *section_of(enum config_opt id)
{
	switch (id) {
	case CONFIG_OPT_PID:
		return "Profiling:";
	case CONFIG_OPT_SERVER:
		return "Pushing to Pyroscope:";
	case CONFIG_OPT_METRICS_ADDR:
		return "Agent:";
	default:
		return NULL;
	}
}

static void print_option_help(FILE *out, const struct config_option *opt)
{
	const char *line = opt->help, *nl;
	int n;

	if (opt->short_name)
		n = fprintf(out, "  -%c, --%s", opt->short_name, opt->name);
	else
		n = fprintf(out, "      --%s", opt->name);
	if (opt->metavar)
		n += fprintf(out, " %s", opt->metavar);
	if (n >= HELP_COLUMN - 1)
		n = fprintf(out, "\n") - 1;
	for (; (nl = strchr(line, '\n')); line = nl + 1, n = 0)
		fprintf(out, "%*s%.*s\n", HELP_COLUMN - n, "", (int)(nl - line), line);
	fprintf(out, "%*s%s\n", HELP_COLUMN - n, "", line);
}

static void print_usage(FILE *out)
{
	const char *section;
	int id;

	fputs(usage_head, out);
	for (id = 0; id < CONFIG_OPT__COUNT; id++) {
		if ((section = section_of(id)))
			fprintf(out, "\n%s\n", section);
		if (config_options[id].help && (config_options[id].where & CONFIG_IN_FLAG))
			print_option_help(out, &config_options[id]);
	}
	fputs(usage_tail, out);
}

void config_init(struct spanprof_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->frequency = 100;
	cfg->interval_s = 15;
	cfg->output_dir = NULL; /* config_check() picks the default when there is no --server */
	cfg->span_scope = SPAN_SCOPE_ROOT;
	cfg->off_cpu = 1;
	cfg->off_cpu_min_us = 1000;
	cfg->interpreter_frames = 1;
	cfg->obi_map = "/sys/fs/bpf/otel/traces_ctx_v1";
	cfg->span_stats_max = 1000;
	cfg->span_log_max_bytes = 64ull << 20;
	cfg->log_level = LOG_LEVEL_INFO;
	cfg->log_format = LOG_FORMAT_LOGFMT;
	cfg->upload.connect_timeout_s = CONFIG_DEFAULT_CONNECT_TIMEOUT_S;
	cfg->upload.upload_timeout_s = CONFIG_DEFAULT_UPLOAD_TIMEOUT_S;
	cfg->upload.queue_bytes = CONFIG_DEFAULT_QUEUE_BYTES;
	cfg->upload.spool_bytes = CONFIG_DEFAULT_SPOOL_BYTES;
	cfg->unwind_table_bytes = 64ull << 20;
	cfg->goroutine_entries = CONFIG_DEFAULT_GOROUTINE_ENTRIES;
	cfg->span_name_entries = CONFIG_DEFAULT_SPAN_NAME_ENTRIES;
	cfg->pending_scan_entries = CONFIG_DEFAULT_PENDING_SCAN_ENTRIES;
	cfg->off_cpu_entries = CONFIG_DEFAULT_OFF_CPU_ENTRIES;
	cfg->max_services = 512;
	cfg->max_procs = 32768;
	cfg->max_hook_files = 256;
	cfg->max_modules = 256;
	cfg->max_pid_snapshots = 4096;
	cfg->drain_ms = 1000;
	cfg->rescan_s = 30;
	cfg->perf_map_max_bytes = 16u << 20;
	cfg->perf_map_max_lines = 256u << 10;
	cfg->perf_map_budget = 16u << 20;
	cfg->max_dwarf_bytes = 8u << 20;
	cfg->symbol_budget = 8u << 20;
	cfg->interp_cache_budget = 4u << 20;
	cfg->load_budget_ms = 200;
	cfg->proc_root = "/proc";
}

void config_release(struct spanprof_config *cfg)
{
	struct config_strings *s = &cfg->owned;
	size_t i;

	/* Secrets are among these: wipe every string before it goes back to the allocator. */
	for (i = 0; i < s->n; i++) {
		explicit_bzero(s->v[i], strlen(s->v[i]));
		free(s->v[i]);
	}
	free(s->v);
	memset(cfg, 0, sizeof(*cfg));
}

/* The long options for getopt_long and the matching short option string, from the table. */
static void build_getopt(struct option *longs, char *shorts)
{
	const struct config_option *opt;
	int id, n = 0, s = 0;

	shorts[s++] = ':';
	for (id = 0; id < CONFIG_OPT__COUNT; id++) {
		opt = &config_options[id];
		if (!(opt->where & CONFIG_IN_FLAG))
			continue;
		longs[n].name = opt->name;
		longs[n].has_arg =
			opt->kind == CONFIG_KIND_BOOL || opt->kind == CONFIG_KIND_ACTION ?
				no_argument :
				required_argument;
		longs[n].flag = NULL;
		longs[n++].val = opt->short_name ? opt->short_name : LONG_ONLY_BASE + id;
		if (opt->short_name) {
			shorts[s++] = opt->short_name;
			if (longs[n - 1].has_arg == required_argument)
				shorts[s++] = ':';
		}
	}
	memset(&longs[n], 0, sizeof(longs[n]));
	shorts[s] = '\0';
}

static const struct config_option *option_of(int val)
{
	int id;

	if (val >= LONG_ONLY_BASE)
		return &config_options[val - LONG_ONLY_BASE];
	for (id = 0; id < CONFIG_OPT__COUNT; id++)
		if (config_options[id].short_name == val)
			return &config_options[id];
	return NULL;
}

/* A flag with its value, collected before any source is applied. */
struct flag_arg {
	const struct config_option *opt;
	const char *value;
};

/* Collects argv's options into flags (*n of them). Handles --help and --version. */
static int collect_flags(int argc, char **argv, struct flag_arg *flags, int *n, FILE *out,
			 FILE *err)
{
	struct option longs[CONFIG_OPT__COUNT + 1];
	char shorts[2 * CONFIG_OPT__COUNT + 2];
	const struct config_option *opt;
	int val;

	build_getopt(longs, shorts);
	optind = 1;
	opterr = 0;
	while ((val = getopt_long(argc, argv, shorts, longs, NULL)) != -1) {
		opt = option_of(val);
		if (val == '?' || val == ':' || !opt) {
			config_errorf(err, "%s '%s'\n",
				      val == ':' ? "missing value for option" : "unknown option",
				      argv[optind - 1]);
			return config_hint(err);
		}
		if (opt == &config_options[CONFIG_OPT_HELP]) {
			print_usage(out);
			return CONFIG_EXIT_OK;
		}
		if (opt == &config_options[CONFIG_OPT_VERSION]) {
			fprintf(out, "spanprof %s\n", SPANPROF_VERSION);
			return CONFIG_EXIT_OK;
		}
		flags[*n].opt = opt;
		flags[(*n)++].value = opt->kind == CONFIG_KIND_BOOL ? "true" : optarg;
	}
	if (optind < argc) {
		config_errorf(err, "unexpected argument '%s'\n", argv[optind]);
		return config_hint(err);
	}
	return CONFIG_RUN;
}

static int apply_flags(struct spanprof_config *cfg, const struct flag_arg *flags, int n, FILE *err)
{
	struct config_apply ap = { .cfg = cfg, .src = CONFIG_SRC_FLAG };
	const char *want;
	char where[64];
	int i, ret;

	for (i = 0; i < n; i++) {
		ret = config_apply(&ap, flags[i].opt, flags[i].value, &want);
		if (ret == -ENOMEM) {
			config_errorf(err, "out of memory\n");
			return CONFIG_ERROR;
		}
		if (ret) {
			snprintf(where, sizeof(where), "--%s", flags[i].opt->name);
			return config_bad_value(err, where, flags[i].opt, flags[i].value, want);
		}
	}
	return CONFIG_RUN;
}

/* The config file: the last --config flag, else SPANPROF_CONFIG. */
static const char *config_path(const struct flag_arg *flags, int n, char *const *envp)
{
	const struct config_option *opt = &config_options[CONFIG_OPT_CONFIG];
	const char *path = NULL;
	int i;

	for (i = 0; i < n; i++)
		if (flags[i].opt == opt)
			path = flags[i].value;
	return path ? path : config_env_get(envp, opt);
}

enum config_result config_parse(struct spanprof_config *cfg, int argc, char **argv,
				char *const *envp, FILE *out, FILE *err)
{
	struct flag_arg *flags = calloc(argc + 1, sizeof(*flags));
	const char *path;
	int n = 0, ret;

	if (!flags) {
		config_errorf(err, "out of memory\n");
		return CONFIG_ERROR;
	}
	ret = collect_flags(argc, argv, flags, &n, out, err);
	if (ret != CONFIG_RUN)
		goto out_free;
	path = config_path(flags, n, envp);
	if (path && *path)
		ret = config_file_load(cfg, path, err);
	if (ret == CONFIG_RUN)
		ret = config_env_load(cfg, envp, err);
	if (ret == CONFIG_RUN)
		ret = apply_flags(cfg, flags, n, err);
	if (ret == CONFIG_RUN)
		ret = config_check(cfg, err);
out_free:
	free(flags);
	return ret;
}
