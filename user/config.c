// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Defaults, flag parsing (getopt_long) and validation of struct spanprof_config. */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "spanprof_types.h"

#ifndef SPANPROF_VERSION
#define SPANPROF_VERSION "dev"
#endif

static const char usage[] =
	"Usage: spanprof [OPTION]...\n"
	"Samples on-CPU stacks of every process (or --pid) and labels each sample with the\n"
	"OpenTelemetry span its thread had set through spanprof_span_set().\n"
	"\n"
	"  -p, --pid PID          profile only this process (repeatable; default: all)\n"
	"  -F, --frequency HZ     samples per second per CPU (default 100, 1..1000)\n"
	"  -i, --interval SEC     seconds of samples per profile written (default 15, 1..3600)\n"
	"  -d, --duration SEC     stop after SEC seconds, flushing the last window (default: run\n"
	"                         until SIGINT/SIGTERM)\n"
	"  -o, --output DIR       write gzipped pprof files here (default ./spanprof-data)\n"
	"      --span-scope S     root: label samples with the local root span id (default);\n"
	"                         all: with the span active at the sample\n"
	"  -v, --verbose          debug logging (libbpf messages too)\n"
	"  -h, --help             show this help\n"
	"  -V, --version          show the version\n";

void config_init(struct spanprof_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->frequency = 100;
	cfg->interval_s = 15;
	cfg->output_dir = "./spanprof-data";
	cfg->span_scope = SPAN_SCOPE_ROOT;
	cfg->stack_entries = SPANPROF_DEFAULT_STACKS;
	cfg->count_entries = SPANPROF_DEFAULT_COUNTS;
	cfg->max_services = 512;
	cfg->max_procs = 32768;
	cfg->max_hook_files = 256;
	cfg->max_modules = 256;
	cfg->max_pid_snapshots = 4096;
	cfg->drain_ms = 1000;
	cfg->rescan_s = 30;
	cfg->proc_root = "/proc";
}

/* Parses a whole decimal number in [min, max]. */
static int parse_uint(const char *s, unsigned long min, unsigned long max, unsigned long *out)
{
	char *end;
	unsigned long v;

	if (!s || !*s || *s == '-' || *s == '+')
		return -EINVAL;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || *end || v < min || v > max)
		return -EINVAL;
	*out = v;
	return 0;
}

static int bad_value(FILE *err, const char *flag, const char *value, const char *want)
{
	fprintf(err, "spanprof: %s: invalid value '%s': expected %s\n", flag, value ? value : "",
		want);
	fprintf(err, "Try 'spanprof --help' for more information.\n");
	return CONFIG_ERROR;
}

static int set_option(struct spanprof_config *cfg, int opt, const char *arg, FILE *err)
{
	unsigned long v;

	switch (opt) {
	case 'p':
		if (parse_uint(arg, 1, INT_MAX, &v))
			return bad_value(err, "--pid", arg, "a process id (a positive integer)");
		if (cfg->npids == CONFIG_MAX_PIDS)
			return bad_value(err, "--pid", arg, "at most 1024 --pid flags");
		cfg->pids[cfg->npids++] = v;
		return CONFIG_RUN;
	case 'F':
		if (parse_uint(arg, 1, 1000, &v))
			return bad_value(err, "--frequency", arg, "an integer from 1 to 1000");
		cfg->frequency = v;
		return CONFIG_RUN;
	case 'i':
		if (parse_uint(arg, 1, 3600, &v))
			return bad_value(err, "--interval", arg, "seconds, from 1 to 3600");
		cfg->interval_s = v;
		return CONFIG_RUN;
	case 'd':
		if (parse_uint(arg, 1, 31 * 24 * 3600, &v))
			return bad_value(err, "--duration", arg, "seconds, at least 1");
		cfg->duration_s = v;
		return CONFIG_RUN;
	case 'o':
		if (!arg || !*arg)
			return bad_value(err, "--output", arg, "a directory path");
		cfg->output_dir = arg;
		return CONFIG_RUN;
	case 's':
		if (!strcmp(arg, "root"))
			cfg->span_scope = SPAN_SCOPE_ROOT;
		else if (!strcmp(arg, "all"))
			cfg->span_scope = SPAN_SCOPE_ALL;
		else
			return bad_value(err, "--span-scope", arg, "'root' or 'all'");
		return CONFIG_RUN;
	case 'v':
		cfg->verbose = 1;
		return CONFIG_RUN;
	}
	return CONFIG_ERROR;
}

enum config_result config_parse(struct spanprof_config *cfg, int argc, char **argv, FILE *out,
				FILE *err)
{
	static const struct option options[] = {
		{ "pid", required_argument, NULL, 'p' },
		{ "frequency", required_argument, NULL, 'F' },
		{ "interval", required_argument, NULL, 'i' },
		{ "duration", required_argument, NULL, 'd' },
		{ "output", required_argument, NULL, 'o' },
		{ "span-scope", required_argument, NULL, 's' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{},
	};
	int opt, ret;

	optind = 1;
	opterr = 0;
	while ((opt = getopt_long(argc, argv, ":p:F:i:d:o:vhV", options, NULL)) != -1) {
		if (opt == 'h') {
			fputs(usage, out);
			return CONFIG_EXIT_OK;
		}
		if (opt == 'V') {
			fprintf(out, "spanprof %s\n", SPANPROF_VERSION);
			return CONFIG_EXIT_OK;
		}
		if (opt == '?' || opt == ':') {
			fprintf(err, "spanprof: %s '%s'\n",
				opt == ':' ? "missing value for option" : "unknown option",
				argv[optind - 1]);
			fprintf(err, "Try 'spanprof --help' for more information.\n");
			return CONFIG_ERROR;
		}
		ret = set_option(cfg, opt, optarg, err);
		if (ret != CONFIG_RUN)
			return ret;
	}
	if (optind < argc) {
		fprintf(err, "spanprof: unexpected argument '%s'\n", argv[optind]);
		fprintf(err, "Try 'spanprof --help' for more information.\n");
		return CONFIG_ERROR;
	}
	return CONFIG_RUN;
}
