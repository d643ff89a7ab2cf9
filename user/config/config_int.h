/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Inside the configuration: the one table of options that flags, environment and file all read,
 * and what they share to apply a value. Only config*.c include this. */
#ifndef SPANPROF_CONFIG_INT_H
#define SPANPROF_CONFIG_INT_H

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>

#include "config/config.h"

/* Sources in rising precedence. */
enum config_source {
	CONFIG_SRC_FILE = 0,
	CONFIG_SRC_ENV,
	CONFIG_SRC_FLAG,
};

/* Where an option may be given. */
#define CONFIG_IN_FLAG (1u << CONFIG_SRC_FLAG)
#define CONFIG_IN_ENV (1u << CONFIG_SRC_ENV)
#define CONFIG_IN_FILE (1u << CONFIG_SRC_FILE)
#define CONFIG_IN_ALL (CONFIG_IN_FLAG | CONFIG_IN_ENV | CONFIG_IN_FILE)

enum config_kind {
	CONFIG_KIND_VALUE, /* one value; a higher source replaces it */
	CONFIG_KIND_BOOL, /* a flag without a value; true/false in the environment and file */
	CONFIG_KIND_LIST, /* repeatable; a list in the file, separated items in the environment */
	CONFIG_KIND_MAP, /* repeatable KEY=VALUE; a mapping in the file */
	CONFIG_KIND_ACTION, /* --help, --version: flags only, handled by config_parse() */
};

/* Every option, in --help order. */
enum config_opt {
	CONFIG_OPT_PID = 0,
	CONFIG_OPT_FREQUENCY,
	CONFIG_OPT_INTERVAL,
	CONFIG_OPT_DURATION,
	CONFIG_OPT_OUTPUT,
	CONFIG_OPT_SPAN_SCOPE,
	CONFIG_OPT_OFF_CPU,
	CONFIG_OPT_OFF_CPU_MIN,
	CONFIG_OPT_OFF_CPU_UNWIND,
	CONFIG_OPT_INTERPRETER_FRAMES,
	CONFIG_OPT_THREAD_CTX_LABELS,
	CONFIG_OPT_OBI_MAP,
	CONFIG_OPT_SPAN_STATS_MAX,
	CONFIG_OPT_SPAN_LOG_MAX_BYTES,
	CONFIG_OPT_MAX_SERVICES,
	CONFIG_OPT_SERVER,
	CONFIG_OPT_LABEL,
	CONFIG_OPT_TENANT,
	CONFIG_OPT_HEADER,
	CONFIG_OPT_BASIC_AUTH_USER,
	CONFIG_OPT_BASIC_AUTH_PASSWORD_FILE,
	CONFIG_OPT_BASIC_AUTH_PASSWORD,
	CONFIG_OPT_BEARER_TOKEN_FILE,
	CONFIG_OPT_BEARER_TOKEN,
	CONFIG_OPT_CA_FILE,
	CONFIG_OPT_CLIENT_CERT,
	CONFIG_OPT_CLIENT_KEY,
	CONFIG_OPT_TLS_INSECURE,
	CONFIG_OPT_TRACE_ID_LABEL,
	CONFIG_OPT_CONNECT_TIMEOUT,
	CONFIG_OPT_UPLOAD_TIMEOUT,
	CONFIG_OPT_QUEUE_BYTES,
	CONFIG_OPT_SPOOL,
	CONFIG_OPT_SPOOL_BYTES,
	CONFIG_OPT_UNWIND_TABLE_BYTES,
	CONFIG_OPT_METRICS_ADDR,
	CONFIG_OPT_DWARF_BUDGET,
	CONFIG_OPT_SYMBOL_BUDGET,
	CONFIG_OPT_INTERP_CACHE_BUDGET,
	CONFIG_OPT_LOAD_BUDGET,
	CONFIG_OPT_PERF_MAP_MAX_BYTES,
	CONFIG_OPT_PERF_MAP_MAX_LINES,
	CONFIG_OPT_PERF_MAP_BUDGET,
	CONFIG_OPT_SAMPLE_MAP_ENTRIES,
	CONFIG_OPT_STACK_MAP_ENTRIES,
	CONFIG_OPT_OFF_CPU_MAP_ENTRIES,
	CONFIG_OPT_GO_SPAN_MAP_ENTRIES,
	CONFIG_OPT_SPAN_NAME_ENTRIES,
	CONFIG_OPT_PENDING_SCAN_ENTRIES,
	CONFIG_OPT_LOG_LEVEL,
	CONFIG_OPT_LOG_FORMAT,
	CONFIG_OPT_VERBOSE,
	CONFIG_OPT_CONFIG,
	CONFIG_OPT_HELP,
	CONFIG_OPT_VERSION,
	CONFIG_OPT__COUNT,
};

/* What an error may print of a bad value. */
enum config_secret {
	CONFIG_SECRET_NONE = 0, /* the value (control characters escaped) */
	CONFIG_SECRET_ALL, /* nothing */
	CONFIG_SECRET_VALUE, /* "Name: value" lists: the name only */
};

struct config_option;

/* Parses one value (one item of a list) into cfg. Returns 0; -EINVAL with *want set to what a
 * valid value looks like; or -ENOMEM. */
typedef int (*config_set_fn)(struct spanprof_config *cfg, const struct config_option *opt,
			     const char *value, const char **want);

struct config_option {
	const char *name; /* the long flag, and unless `key` is set the file key and env name */
	const char *key; /* lists: the plural used in the file and environment ("labels") */
	int short_name; /* 0: none */
	enum config_kind kind;
	unsigned int where; /* CONFIG_IN_* */
	/* CONFIG_SECRET_*: how much of a bad value an error may show */
	int secret;
	const char *metavar; /* --help: the value's placeholder */
	const char *help; /* --help text, '\n' between lines; NULL: not listed */
	const char *want; /* what a valid value looks like (the generic setters' errors) */
	const char *env_sep; /* lists from the environment: the item separators */
	config_set_fn set;
	void (*clear)(struct spanprof_config *cfg); /* lists: empty what a lower source set */
	size_t offset; /* the field the generic setters write */
	uint64_t min, max; /* their bounds */
};

extern const struct config_option config_options[CONFIG_OPT__COUNT];

/* The file key / environment suffix of opt: key, else name. */
const char *config_option_key(const struct config_option *opt);

/* The option whose file key is key, or NULL. */
const struct config_option *config_option_by_key(const char *key);

/* SPANPROF_<KEY> with '-' as '_', upper case, into buf. */
void config_env_name(const struct config_option *opt, char *buf, size_t size);

/* One source being applied: lists it sets replace, once, what lower sources set. */
struct config_apply {
	struct spanprof_config *cfg;
	enum config_source src;
	uint64_t touched; /* bit per enum config_opt set by this source */
};

_Static_assert(CONFIG_OPT__COUNT <= 64, "config_apply.touched has a bit per option");

/* Marks opt as set by ap's source; the first time, a list forgets what lower sources set. */
void config_touch(struct config_apply *ap, const struct config_option *opt);

/* Applies value to option opt for ap's source (touching it). Returns what opt->set returns. */
int config_apply(struct config_apply *ap, const struct config_option *opt, const char *value,
		 const char **want);

/* The values module (config_values.c), which calls no other config*.c file: */

/* A copy of s (n bytes, or all of it when n is SIZE_MAX) that cfg owns; NULL on ENOMEM. */
char *config_strdup(struct spanprof_config *cfg, const char *s, size_t n);

/* Prints "spanprof: " and the formatted message to err with every control character (C0, DEL,
 * C1) escaped as \xNN, so that a value, path or key from the user cannot drive the terminal; a
 * trailing newline is kept. Returns CONFIG_ERROR. */
__attribute__((format(printf, 2, 3))) int config_errorf(FILE *err, const char *fmt, ...);
/* The same with where ("PATH:LINE"), when not NULL, and ": " before the message, which then
 * always ends the line. */
__attribute__((format(printf, 3, 0))) int config_verrorf(FILE *err, const char *where,
							 const char *fmt, va_list ap);

/* Error lines: "spanprof: WHERE: invalid value 'V': expected WANT" (no value for secrets), and
 * the hint that follows every error. Both return CONFIG_ERROR. */
int config_bad_value(FILE *err, const char *where, const struct config_option *opt,
		     const char *value, const char *want);
int config_hint(FILE *err);

/* Parses the unsigned decimal s in [min, max]. 0 or -EINVAL. */
int config_parse_uint(const char *s, uint64_t min, uint64_t max, uint64_t *out);
/* Bytes with an optional K, M, G, KiB, MiB or GiB suffix (all powers of 1024). */
int config_parse_size(const char *s, uint64_t min, uint64_t max, uint64_t *out);
/* true/false, yes/no, on/off, 1/0 (any case). */
int config_parse_bool(const char *s, int *out);

/* Checks that follow return 0, or -EINVAL with *want saying what a valid value looks like. */
/* "name=value": a valid series label name and value. *name_len: the name's length. */
int config_check_label(const char *s, size_t *name_len, const char **want);
/* "Name: value": a token name the uploader does not own; the value without the blanks around
 * it is *value, *value_len bytes. */
int config_check_header(const char *s, size_t *name_len, const char **value, size_t *value_len,
			const char **want);
/* A Pyroscope/Mimir tenant id. */
int config_check_tenant(const char *s, const char **want);
/* An http(s) URL with a host; *len: its length without trailing '/'. */
int config_check_url(const char *s, size_t *len, const char **want);
/* Non-empty, no control characters, none of forbidden (NULL: none). -EINVAL otherwise. */
int config_check_text(const char *s, const char *forbidden);

/* Reads the secret files named in cfg and checks the options that depend on each other.
 * Prints the error and returns CONFIG_ERROR, or returns CONFIG_RUN. (config_check.c) */
int config_check(struct spanprof_config *cfg, FILE *err);

#endif /* SPANPROF_CONFIG_INT_H */
