// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The YAML config file, read with libyaml's event parser (a syntax pass, then a pass that
 * applies values): one mapping of long option names to scalars, lists or (labels) a mapping;
 * every error names the file and line. */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <yaml.h>

#include "config/config_file.h"
#include "config/config_int.h"

#define KEY_MAX 64
/* A config file is a few hundred bytes; anything this large is the wrong file. */
#define FILE_MAX (1 << 20)

struct file_parser {
	yaml_parser_t parser;
	yaml_event_t event; /* the current event */
	int have_event;
	const char *path;
	FILE *err;
	struct config_apply ap;
	unsigned long lines[CONFIG_OPT__COUNT]; /* where each option was set; 0: not yet */
};

static unsigned long line_of(const struct file_parser *fp)
{
	return fp->event.start_mark.line + 1;
}

/* "spanprof: PATH:LINE: " + the message; returns CONFIG_ERROR. */
__attribute__((format(printf, 2, 3))) static int fail(struct file_parser *fp, const char *fmt, ...)
{
	char where[PATH_MAX + 24];
	va_list ap;

	snprintf(where, sizeof(where), "%s:%lu", fp->path, line_of(fp));
	va_start(ap, fmt);
	config_verrorf(fp->err, where, fmt, ap);
	va_end(ap);
	return CONFIG_ERROR;
}

static int syntax_error(struct file_parser *fp)
{
	const yaml_parser_t *p = &fp->parser;

	if (p->error == YAML_READER_ERROR)
		config_errorf(fp->err, "%s: unreadable at byte %zu: %s\n", fp->path,
			      p->problem_offset, p->problem ? p->problem : "invalid input");
	else
		config_errorf(fp->err, "%s:%zu: syntax error: %s%s%s\n", fp->path,
			      p->problem_mark.line + 1, p->problem ? p->problem : "invalid YAML",
			      p->context ? " " : "", p->context ? p->context : "");
	return CONFIG_ERROR;
}

/* Moves to the next event. */
static int next(struct file_parser *fp)
{
	if (fp->have_event)
		yaml_event_delete(&fp->event);
	fp->have_event = yaml_parser_parse(&fp->parser, &fp->event);
	return fp->have_event ? CONFIG_RUN : syntax_error(fp);
}

static int is_type(const struct file_parser *fp, yaml_event_type_t type)
{
	return fp->event.type == type;
}

static const char *scalar(const struct file_parser *fp)
{
	return (const char *)fp->event.data.scalar.value;
}

/* A plain ~, null or empty scalar is YAML's null: an empty value, which every option refuses. */
static const char *scalar_value(const struct file_parser *fp)
{
	static const char *const nulls[] = { "~", "null", "Null", "NULL" };
	size_t i;

	if (fp->event.data.scalar.style == YAML_PLAIN_SCALAR_STYLE)
		for (i = 0; i < 4; i++)
			if (!strcmp(scalar(fp), nulls[i]))
				return "";
	return scalar(fp);
}

static int apply(struct file_parser *fp, const struct config_option *opt, const char *value)
{
	char where[PATH_MAX + KEY_MAX + 32];
	const char *want;
	int ret = config_apply(&fp->ap, opt, value, &want);

	if (ret == -ENOMEM) {
		config_errorf(fp->err, "out of memory\n");
		return CONFIG_ERROR;
	}
	if (!ret)
		return CONFIG_RUN;
	snprintf(where, sizeof(where), "%s:%lu: %s", fp->path, line_of(fp), config_option_key(opt));
	return config_bad_value(fp->err, where, opt, value, want);
}

static int read_list(struct file_parser *fp, const struct config_option *opt)
{
	int ret;

	/* An empty list still replaces what lower sources set. */
	config_touch(&fp->ap, opt);
	while ((ret = next(fp)) == CONFIG_RUN && !is_type(fp, YAML_SEQUENCE_END_EVENT)) {
		if (!is_type(fp, YAML_SCALAR_EVENT))
			return fail(fp, "%s: expected a list of plain values",
				    config_option_key(opt));
		ret = apply(fp, opt, scalar_value(fp));
		if (ret != CONFIG_RUN)
			break;
	}
	return ret;
}

/* NAME: VALUE pairs, applied as "NAME=VALUE". */
static int read_pairs(struct file_parser *fp, const struct config_option *opt)
{
	const char *key = config_option_key(opt);
	char *name, *pair;
	int ret;

	config_touch(&fp->ap, opt);
	while ((ret = next(fp)) == CONFIG_RUN && !is_type(fp, YAML_MAPPING_END_EVENT)) {
		if (!is_type(fp, YAML_SCALAR_EVENT))
			return fail(fp, "%s: expected NAME: VALUE pairs", key);
		name = strdup(scalar(fp));
		if (!name)
			return fail(fp, "%s", "out of memory");
		ret = next(fp);
		if (ret == CONFIG_RUN && !is_type(fp, YAML_SCALAR_EVENT))
			ret = fail(fp, "%s: %s: expected a plain value", key, name);
		if (ret == CONFIG_RUN && strchr(name, '='))
			ret = fail(fp, "%s: invalid name '%s': expected letters, digits and '_'",
				   key, name);
		if (ret == CONFIG_RUN) {
			if (asprintf(&pair, "%s=%s", name, scalar_value(fp)) < 0) {
				pair = NULL;
				ret = fail(fp, "%s", "out of memory");
			}
			ret = ret ?: apply(fp, opt, pair);
			free(pair);
		}
		free(name);
		if (ret != CONFIG_RUN)
			break;
	}
	return ret;
}

static int read_value(struct file_parser *fp, const struct config_option *opt)
{
	const char *key = config_option_key(opt);

	switch (fp->event.type) {
	case YAML_SCALAR_EVENT:
		if (opt->kind == CONFIG_KIND_MAP)
			return fail(fp, "%s: expected a mapping of names to values", key);
		return apply(fp, opt, scalar_value(fp));
	case YAML_SEQUENCE_START_EVENT:
		if (opt->kind == CONFIG_KIND_MAP)
			return fail(fp, "%s: expected a mapping of names to values", key);
		if (opt->kind != CONFIG_KIND_LIST)
			return fail(fp, "%s: expected a single value, not a list", key);
		return read_list(fp, opt);
	case YAML_MAPPING_START_EVENT:
		if (opt->kind != CONFIG_KIND_MAP)
			return fail(fp, "%s: expected a %s, not a mapping", key,
				    opt->kind == CONFIG_KIND_LIST ? "list" : "single value");
		return read_pairs(fp, opt);
	case YAML_ALIAS_EVENT:
		return fail(fp, "%s: YAML aliases are not supported", key);
	default:
		return fail(fp, "%s: expected a value", key);
	}
}

/* The option named by the current key, or NULL after printing why there is none. */
static const struct config_option *key_option(struct file_parser *fp)
{
	const char *key = scalar(fp);
	const struct config_option *opt = config_option_by_key(key);
	char alt[KEY_MAX];
	size_t i;

	if (opt && (opt->where & CONFIG_IN_FILE))
		return opt;
	if (opt && opt->secret) {
		config_env_name(opt, alt, sizeof(alt));
		fail(fp, "'%s' cannot be set in a file: use %s-file, or %s", key, key, alt);
		return NULL;
	}
	if (opt && opt->kind != CONFIG_KIND_ACTION) {
		fail(fp, "'%s' cannot be set in a config file", key);
		return NULL;
	}
	/* A near miss: span_scope for span-scope, label for labels. */
	snprintf(alt, sizeof(alt), "%s", key);
	for (i = 0; alt[i]; i++)
		alt[i] = alt[i] == '_' ? '-' : alt[i];
	for (i = 0; i < CONFIG_OPT__COUNT; i++) {
		opt = &config_options[i];
		if ((opt->where & CONFIG_IN_FILE) &&
		    (!strcmp(opt->name, alt) || !strcmp(config_option_key(opt), alt))) {
			fail(fp, "unknown key '%s' (did you mean '%s'?)", key,
			     config_option_key(opt));
			return NULL;
		}
	}
	fail(fp, "unknown key '%s'", key);
	return NULL;
}

static int read_mapping(struct file_parser *fp)
{
	const struct config_option *opt;
	unsigned long *line;
	int ret;

	while ((ret = next(fp)) == CONFIG_RUN && !is_type(fp, YAML_MAPPING_END_EVENT)) {
		if (!is_type(fp, YAML_SCALAR_EVENT))
			return fail(fp, "%s", "expected an option name");
		opt = key_option(fp);
		if (!opt)
			return CONFIG_ERROR;
		line = &fp->lines[opt - config_options];
		if (*line)
			return fail(fp, "duplicate key '%s' (first on line %lu)", scalar(fp),
				    *line);
		*line = line_of(fp);
		ret = next(fp);
		ret = ret ?: read_value(fp, opt);
		if (ret != CONFIG_RUN)
			break;
	}
	return ret;
}

/* The stream: nothing, or one document holding a mapping (or YAML's null). */
static int read_stream(struct file_parser *fp)
{
	int ret;

	ret = next(fp); /* stream start */
	ret = ret ?: next(fp);
	if (ret || is_type(fp, YAML_STREAM_END_EVENT))
		return ret;
	ret = next(fp); /* the document's content */
	if (ret)
		return ret;
	if (is_type(fp, YAML_MAPPING_START_EVENT))
		ret = read_mapping(fp);
	else if (!is_type(fp, YAML_SCALAR_EVENT) || *scalar_value(fp))
		return fail(fp, "%s", "expected a mapping of option names to values");
	ret = ret ?: next(fp); /* document end */
	ret = ret ?: next(fp);
	if (!ret && !is_type(fp, YAML_STREAM_END_EVENT))
		return fail(fp, "%s", "expected one YAML document, found another");
	return ret;
}

/* Runs pass over text with a fresh parser. */
static int parse_pass(struct file_parser *fp, const char *text, size_t len,
		      int (*pass)(struct file_parser *))
{
	int ret;

	if (!yaml_parser_initialize(&fp->parser)) {
		config_errorf(fp->err, "out of memory\n");
		return CONFIG_ERROR;
	}
	yaml_parser_set_input_string(&fp->parser, (const unsigned char *)text, len);
	ret = pass(fp);
	if (fp->have_event)
		yaml_event_delete(&fp->event);
	fp->have_event = 0;
	yaml_parser_delete(&fp->parser);
	return ret;
}

/* Reads every event, so that a syntax error is reported before any value is looked at. */
static int check_syntax(struct file_parser *fp)
{
	int ret;

	while ((ret = next(fp)) == CONFIG_RUN && !is_type(fp, YAML_STREAM_END_EVENT))
		;
	return ret;
}

/* The whole file, read once so that it is parsed twice even from a pipe. NULL: printed. */
static char *slurp(const char *path, size_t *len, FILE *err)
{
	const char *why = NULL;
	struct stat st;
	char *text;
	FILE *f;

	f = fopen(path, "re");
	if (!f) {
		config_errorf(err, "config file %s: %s\n", path, strerror(errno));
		return NULL;
	}
	/* A directory opens fine and then fails to read with EISDIR ("I/O error" from stdio). */
	if (!fstat(fileno(f), &st) && S_ISDIR(st.st_mode)) {
		config_errorf(err, "config file %s: is a directory, expected a YAML file\n", path);
		fclose(f);
		return NULL;
	}
	text = malloc(FILE_MAX + 1);
	if (!text)
		why = strerror(ENOMEM);
	else if ((*len = fread(text, 1, FILE_MAX + 1, f)) > FILE_MAX)
		why = "larger than 1 MiB";
	else if (ferror(f))
		why = strerror(EIO);
	fclose(f);
	if (why) {
		config_errorf(err, "config file %s: %s\n", path, why);
		free(text);
		return NULL;
	}
	return text;
}

int config_file_load(struct spanprof_config *cfg, const char *path, FILE *err)
{
	struct file_parser fp = { .path = path, .err = err };
	size_t len = 0;
	char *text;
	int ret;

	text = slurp(path, &len, err);
	if (!text)
		return CONFIG_ERROR;
	fp.ap.cfg = cfg;
	fp.ap.src = CONFIG_SRC_FILE;
	ret = parse_pass(&fp, text, len, check_syntax);
	ret = ret ?: parse_pass(&fp, text, len, read_stream);
	free(text);
	return ret;
}
