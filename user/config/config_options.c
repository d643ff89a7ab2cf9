// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The one table of options (flag, file key, environment name, help, parser) and their setters,
 * so flags, the environment and the config file cannot drift apart. */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "config/config_int.h"
#include "util/hostport.h"

#define FIELD(f) offsetof(struct spanprof_config, f)
#define UPLOAD(f) offsetof(struct spanprof_config, upload.f)
#define MIB (1ull << 20)
#define GIB (1ull << 30)

static void *field(struct spanprof_config *cfg, const struct config_option *opt)
{
	return (char *)cfg + opt->offset;
}

static int invalid(const char **want, const char *text)
{
	*want = text;
	return -EINVAL;
}

static int set_uint(struct spanprof_config *cfg, const struct config_option *opt, const char *v,
		    const char **want)
{
	uint64_t n;

	if (config_parse_uint(v, opt->min, opt->max, &n))
		return invalid(want, opt->want);
	*(unsigned int *)field(cfg, opt) = n;
	return 0;
}

static int set_size(struct spanprof_config *cfg, const struct config_option *opt, const char *v,
		    const char **want)
{
	if (config_parse_size(v, opt->min, opt->max, field(cfg, opt)))
		return invalid(want, opt->want);
	return 0;
}

static int set_bool(struct spanprof_config *cfg, const struct config_option *opt, const char *v,
		    const char **want)
{
	if (config_parse_bool(v, field(cfg, opt)))
		return invalid(want, "true or false");
	return 0;
}

/* Stores a copy of v[0..n) in opt's string field. */
static int store(struct spanprof_config *cfg, const struct config_option *opt, const char *v,
		 size_t n)
{
	char *copy = config_strdup(cfg, v, n);

	if (!copy)
		return -ENOMEM;
	*(const char **)field(cfg, opt) = copy;
	return 0;
}

static int set_text(struct spanprof_config *cfg, const struct config_option *opt, const char *v,
		    const char **want)
{
	if (config_check_text(v, NULL))
		return invalid(want, opt->want);
	return store(cfg, opt, v, SIZE_MAX);
}

static int set_pid(struct spanprof_config *cfg, const struct config_option *opt, const char *v,
		   const char **want)
{
	uint64_t n;

	(void)opt;
	if (config_parse_uint(v, 1, INT_MAX, &n))
		return invalid(want, "a process id (a positive integer)");
	if (cfg->npids == CONFIG_MAX_PIDS)
		return invalid(want, "at most 1024 pids");
	cfg->pids[cfg->npids++] = n;
	return 0;
}

static void clear_pids(struct spanprof_config *cfg)
{
	cfg->npids = 0;
}

static int set_span_scope(struct spanprof_config *cfg, const struct config_option *opt,
			  const char *v, const char **want)
{
	(void)opt;
	if (!strcmp(v, "root"))
		cfg->span_scope = SPAN_SCOPE_ROOT;
	else if (!strcmp(v, "all"))
		cfg->span_scope = SPAN_SCOPE_ALL;
	else
		return invalid(want, "'root' or 'all'");
	return 0;
}

static int set_off_cpu_unwind(struct spanprof_config *cfg, const struct config_option *opt,
			      const char *v, const char **want)
{
	(void)opt;
	if (!strcmp(v, "full"))
		cfg->off_cpu_fp = 0;
	else if (!strcmp(v, "fp"))
		cfg->off_cpu_fp = 1;
	else
		return invalid(want, "'full' or 'fp'");
	return 0;
}

/* A comma-separated list of record keys, each one a label name once '.' becomes '_'. */
static int set_thread_ctx_labels(struct spanprof_config *cfg, const struct config_option *opt,
				 const char *v, const char **want)
{
	const char *bad = "at most 4 comma-separated attribute keys of letters, digits, '.', "
			  "'_' or '-', such as http.route";
	struct config_upload *up = &cfg->upload;
	const char *p = v, *end;
	char *copy;
	size_t n, i;

	(void)opt;
	up->nthread_ctx_labels = 0;
	while (*v) {
		end = strchr(p, ',');
		n = end ? (size_t)(end - p) : strlen(p);
		if (!n || n > 64 || up->nthread_ctx_labels == 4)
			return invalid(want, bad);
		for (i = 0; i < n; i++)
			if (!isalnum((unsigned char)p[i]) && !strchr("._-", p[i]))
				return invalid(want, bad);
		copy = config_strdup(cfg, p, n);
		if (!copy)
			return -ENOMEM;
		up->thread_ctx_labels[up->nthread_ctx_labels++] = copy;
		if (!end)
			break;
		p = end + 1;
	}
	return 0;
}

static int set_obi_map(struct spanprof_config *cfg, const struct config_option *opt, const char *v,
		       const char **want)
{
	if (*v && (*v != '/' || config_check_text(v, NULL)))
		return invalid(want, "an absolute path, or '' for none");
	return store(cfg, opt, v, SIZE_MAX);
}

static int set_server(struct spanprof_config *cfg, const struct config_option *opt, const char *v,
		      const char **want)
{
	size_t n;

	if (config_check_url(v, &n, want))
		return -EINVAL;
	return store(cfg, opt, v, n);
}

static int set_label(struct spanprof_config *cfg, const struct config_option *opt, const char *v,
		     const char **want)
{
	struct config_upload *up = &cfg->upload;
	struct pprof_label *l;
	size_t n, i;

	(void)opt;
	if (config_check_label(v, &n, want))
		return -EINVAL;
	for (i = 0; i < up->nlabels; i++)
		if (!series_label_name_cmp(up->labels[i].key, strlen(up->labels[i].key), v, n))
			return invalid(want, "each label name once (the server reads '.' as '_')");
	/* The exact budget, which counts the labels the server lifts from samples, is checked
	 * once every source is applied (config_check). */
	if (up->nlabels == CONFIG_MAX_LABELS)
		return invalid(want, "at most 28 labels (Pyroscope's 30 per series, less "
				     "__name__ and service_name)");
	l = &up->labels[up->nlabels];
	l->key = config_strdup(cfg, v, n);
	l->value = config_strdup(cfg, v + n + 1, SIZE_MAX);
	if (!l->key || !l->value)
		return -ENOMEM;
	up->nlabels++;
	return 0;
}

static void clear_labels(struct spanprof_config *cfg)
{
	cfg->upload.nlabels = 0;
}

static int set_header(struct spanprof_config *cfg, const struct config_option *opt, const char *v,
		      const char **want)
{
	struct config_upload *up = &cfg->upload;
	size_t name_len, value_len, len;
	const char *value;
	char *h, *line;

	(void)opt;
	if (config_check_header(v, &name_len, &value, &value_len, want))
		return -EINVAL;
	if (up->nheaders == CONFIG_MAX_HEADERS)
		return invalid(want, "at most 32 headers");
	/* Normalised to "Name: value". The copy is built from its parts: the input may have no
	 * blank after the colon ("Name:value") or several, so it is not a prefix of the result. */
	len = name_len + 2 + value_len;
	line = malloc(len + 1);
	if (!line)
		return -ENOMEM;
	memcpy(line, v, name_len);
	memcpy(line + name_len, ": ", 2);
	memcpy(line + name_len + 2, value, value_len);
	line[len] = '\0';
	h = config_strdup(cfg, line, len);
	explicit_bzero(line, len); /* the value may be a secret */
	free(line);
	if (!h)
		return -ENOMEM;
	up->headers[up->nheaders++] = h;
	return 0;
}

static void clear_headers(struct spanprof_config *cfg)
{
	cfg->upload.nheaders = 0;
}

static int set_tenant(struct spanprof_config *cfg, const struct config_option *opt, const char *v,
		      const char **want)
{
	if (config_check_tenant(v, want))
		return -EINVAL;
	return store(cfg, opt, v, SIZE_MAX);
}

static int set_user(struct spanprof_config *cfg, const struct config_option *opt, const char *v,
		    const char **want)
{
	if (config_check_text(v, ":"))
		return invalid(want, "a user name without ':' or control characters");
	return store(cfg, opt, v, SIZE_MAX);
}

static int set_secret(struct spanprof_config *cfg, const struct config_option *opt, const char *v,
		      const char **want)
{
	if (!*v)
		return invalid(want, opt->want);
	return store(cfg, opt, v, SIZE_MAX);
}

static int set_metrics_addr(struct spanprof_config *cfg, const struct config_option *opt,
			    const char *v, const char **want)
{
	char host[256];
	unsigned int port;

	if (hostport_split(v, host, sizeof(host), &port))
		return invalid(want, "HOST:PORT, [IPv6]:PORT or :PORT");
	return store(cfg, opt, v, SIZE_MAX);
}

static int set_log_level(struct spanprof_config *cfg, const struct config_option *opt,
			 const char *v, const char **want)
{
	(void)opt;
	if (log_parse_level(v, &cfg->log_level))
		return invalid(want, "error, warn, info or debug");
	return 0;
}

static int set_log_format(struct spanprof_config *cfg, const struct config_option *opt,
			  const char *v, const char **want)
{
	(void)opt;
	if (log_parse_format(v, &cfg->log_format))
		return invalid(want, "logfmt or json");
	return 0;
}

static int set_verbose(struct spanprof_config *cfg, const struct config_option *opt, const char *v,
		       const char **want)
{
	if (set_bool(cfg, opt, v, want))
		return -EINVAL;
	if (cfg->verbose)
		cfg->log_level = LOG_LEVEL_DEBUG;
	return 0;
}

#define UINT(f, lo, hi) .set = set_uint, .offset = FIELD(f), .min = lo, .max = hi
#define SIZE(f, lo, hi) .set = set_size, .offset = UPLOAD(f), .min = lo, .max = hi
#define SIZE_FIELD(f, lo, hi) .set = set_size, .offset = FIELD(f), .min = lo, .max = hi
#define TEXT(f) .set = set_text, .offset = f
#define A CONFIG_IN_ALL

/* Designated fields, a few to a line (a field left out is 0 or NULL); kept out of
 * clang-format, which would give each field a line of its own. */
/* clang-format off */
const struct config_option config_options[CONFIG_OPT__COUNT] = {
	[CONFIG_OPT_PID] = { .name = "pid", .short_name = 'p', .kind = CONFIG_KIND_LIST, .where = A,
		.metavar = "PID", .help = "profile only this process (repeatable; default: all)",
		.env_sep = ", \t", .set = set_pid, .clear = clear_pids },
	[CONFIG_OPT_FREQUENCY] = { .name = "frequency", .short_name = 'F',
		.kind = CONFIG_KIND_VALUE, .where = A, .metavar = "HZ",
		.help = "samples per second per CPU (default 100, 1..1000)",
		.want = "an integer from 1 to 1000", UINT(frequency, 1, 1000) },
	[CONFIG_OPT_INTERVAL] = { .name = "interval", .short_name = 'i', .kind = CONFIG_KIND_VALUE,
		.where = A, .metavar = "SEC",
		.help = "seconds of samples per profile (default 15, 1..3600)",
		.want = "seconds, from 1 to 3600", UINT(interval_s, 1, 3600) },
	[CONFIG_OPT_DURATION] = { .name = "duration", .short_name = 'd', .kind = CONFIG_KIND_VALUE,
		.where = A, .metavar = "SEC",
		.help = "stop after SEC seconds, flushing the last window\n"
			"(default: until SIGINT/SIGTERM)",
		.want = "seconds, at least 1", UINT(duration_s, 1, 31 * 24 * 3600) },
	[CONFIG_OPT_OUTPUT] = { .name = "output", .short_name = 'o', .kind = CONFIG_KIND_VALUE,
		.where = A, .metavar = "DIR",
		.help = "profile dir (default ./spanprof-data unless --server)",
		.want = "a directory path", TEXT(FIELD(output_dir)) },
	[CONFIG_OPT_SPAN_SCOPE] = { .name = "span-scope", .kind = CONFIG_KIND_VALUE, .where = A,
		.metavar = "S",
		.help = "root (default): samples carry the local root span id;\n"
			"all: the id of the span active at the sample",
		.set = set_span_scope },
	[CONFIG_OPT_OFF_CPU] = { .name = "off-cpu", .kind = CONFIG_KIND_VALUE, .where = A,
		.metavar = "BOOL", .help = "off-CPU profiles of threads in spans (default true)",
		.want = "true or false", .set = set_bool, .offset = FIELD(off_cpu) },
	[CONFIG_OPT_OFF_CPU_MIN] = { .name = "off-cpu-min", .kind = CONFIG_KIND_VALUE, .where = A,
		.metavar = "USEC",
		.help = "shortest off-CPU period counted, microseconds\n"
			"(default 1000, 0..10000000)",
		.want = "microseconds, from 0 to 10000000", UINT(off_cpu_min_us, 0, 10000000) },
	[CONFIG_OPT_OFF_CPU_UNWIND] = { .name = "off-cpu-unwind", .kind = CONFIG_KIND_VALUE,
		.where = A, .metavar = "U",
		.help = "full (default): off-CPU stacks with CFI and\n"
			"Python/Ruby frames; fp: frame pointers only",
		.set = set_off_cpu_unwind },
	[CONFIG_OPT_INTERPRETER_FRAMES] = { .name = "interpreter-frames", .kind = CONFIG_KIND_VALUE,
		.where = A, .metavar = "BOOL",
		.help = "Python and Ruby functions in the stacks, read by BPF\n"
			"(default true; false: native frames only)",
		.want = "true or false", .set = set_bool, .offset = FIELD(interpreter_frames) },
	[CONFIG_OPT_THREAD_CTX_LABELS] = { .name = "thread-ctx-labels", .kind = CONFIG_KIND_VALUE,
		.where = A, .metavar = "KEYS",
		.help = "OpenTelemetry thread context attributes whose values\n"
			"become sample labels, comma-separated\n"
			"(at most 4, e.g. http.route)",
		.set = set_thread_ctx_labels },
	[CONFIG_OPT_OBI_MAP] = { .name = "obi-map", .kind = CONFIG_KIND_VALUE, .where = A,
		.metavar = "PATH",
		.help = "OBI's pinned trace context map, read for threads\n"
			"with no other span ('': off; default\n"
			"/sys/fs/bpf/otel/traces_ctx_v1)",
		.set = set_obi_map, .offset = FIELD(obi_map) },
	[CONFIG_OPT_SPAN_STATS_MAX] = { .name = "span-stats-max", .kind = CONFIG_KIND_VALUE,
		.where = A, .metavar = "N",
		.help = "(service, span name) pairs of span times in /metrics;\n"
			"more go to span_name=\"other\"\n"
			"(default 1000; 0: no span times)",
		.want = "a count, from 0 to 100000", UINT(span_stats_max, 0, 100000) },
	[CONFIG_OPT_SPAN_LOG_MAX_BYTES] = { .name = "span-log-max-bytes",
		.kind = CONFIG_KIND_VALUE, .where = A, .metavar = "SIZE",
		.help = "size at which a service's .spans.jsonl rotates to .1\n"
			"(default 64MiB, 1MiB..64GiB)",
		.want = "a size from 1MiB to 64GiB, like 64MiB",
		SIZE_FIELD(span_log_max_bytes, MIB, 64 * GIB) },
	[CONFIG_OPT_MAX_SERVICES] = { .name = "max-services", .kind = CONFIG_KIND_VALUE,
		.where = A, .metavar = "N",
		.help = "services with a profile per window; one user\n"
			"takes at most half (default 512)",
		.want = "a count, from 1 to 65536", UINT(max_services, 1, 65536) },
	[CONFIG_OPT_SERVER] = { .name = "server", .kind = CONFIG_KIND_VALUE, .where = A,
		.metavar = "URL", .help = "push profiles to the Pyroscope server at URL",
		.set = set_server, .offset = UPLOAD(server) },
	[CONFIG_OPT_LABEL] = { .name = "label", .key = "labels", .kind = CONFIG_KIND_MAP,
		.where = A, .metavar = "KEY=VALUE",
		.help = "label every series pushed (repeatable, at most 28)", .env_sep = ",",
		.set = set_label, .clear = clear_labels },
	[CONFIG_OPT_TENANT] = { .name = "tenant", .kind = CONFIG_KIND_VALUE, .where = A,
		.metavar = "ID", .help = "tenant id, sent as X-Scope-OrgID", .set = set_tenant,
		.offset = UPLOAD(tenant) },
	[CONFIG_OPT_HEADER] = { .name = "header", .key = "headers", .kind = CONFIG_KIND_LIST,
		.where = A, .secret = CONFIG_SECRET_VALUE, .metavar = "'NAME: VALUE'",
		.help = "add this HTTP header to every push (repeatable)", .env_sep = ";\n",
		.set = set_header, .clear = clear_headers },
	[CONFIG_OPT_BASIC_AUTH_USER] = { .name = "basic-auth-user", .kind = CONFIG_KIND_VALUE,
		.where = A, .metavar = "USER", .help = "HTTP basic auth user name", .set = set_user,
		.offset = UPLOAD(basic_auth_user) },
	[CONFIG_OPT_BASIC_AUTH_PASSWORD_FILE] = { .name = "basic-auth-password-file",
		.kind = CONFIG_KIND_VALUE, .where = A, .metavar = "FILE",
		.help = "read the basic auth password from FILE", .want = "a file path",
		TEXT(UPLOAD(basic_auth_password_file)) },
	[CONFIG_OPT_BASIC_AUTH_PASSWORD] = { .name = "basic-auth-password",
		.kind = CONFIG_KIND_VALUE, .where = CONFIG_IN_ENV, .secret = CONFIG_SECRET_ALL,
		.want = "a non-empty password", .set = set_secret,
		.offset = UPLOAD(basic_auth_password) },
	[CONFIG_OPT_BEARER_TOKEN_FILE] = { .name = "bearer-token-file", .kind = CONFIG_KIND_VALUE,
		.where = A, .metavar = "FILE", .help = "read the bearer token from FILE",
		.want = "a file path", TEXT(UPLOAD(bearer_token_file)) },
	[CONFIG_OPT_BEARER_TOKEN] = { .name = "bearer-token", .kind = CONFIG_KIND_VALUE,
		.where = CONFIG_IN_ENV, .secret = CONFIG_SECRET_ALL, .want = "a token without control characters",
		TEXT(UPLOAD(bearer_token)) },
	[CONFIG_OPT_CA_FILE] = { .name = "ca-file", .kind = CONFIG_KIND_VALUE, .where = A,
		.metavar = "FILE", .help = "trust the CA certificates (PEM) in FILE",
		.want = "a file path", TEXT(UPLOAD(ca_file)) },
	[CONFIG_OPT_CLIENT_CERT] = { .name = "client-cert", .kind = CONFIG_KIND_VALUE, .where = A,
		.metavar = "FILE", .help = "client certificate (PEM) for mutual TLS",
		.want = "a file path", TEXT(UPLOAD(client_cert)) },
	[CONFIG_OPT_CLIENT_KEY] = { .name = "client-key", .kind = CONFIG_KIND_VALUE, .where = A,
		.metavar = "FILE", .help = "private key (PEM) of --client-cert",
		.want = "a file path", TEXT(UPLOAD(client_key)) },
	[CONFIG_OPT_TLS_INSECURE] = { .name = "tls-insecure", .kind = CONFIG_KIND_BOOL, .where = A,
		.help = "do not verify the server's certificate (testing only)", .set = set_bool,
		.offset = UPLOAD(tls_insecure) },
	[CONFIG_OPT_TRACE_ID_LABEL] = { .name = "trace-id-label", .kind = CONFIG_KIND_BOOL,
		.where = A, .help = "pushed samples carry trace_id too\n(needs Pyroscope 2.1.0 or later)",
		.set = set_bool, .offset = UPLOAD(trace_id_label) },
	[CONFIG_OPT_CONNECT_TIMEOUT] = { .name = "connect-timeout", .kind = CONFIG_KIND_VALUE,
		.where = A, .metavar = "SEC", .help = "connect timeout (default 5)",
		.want = "seconds, from 1 to 300", UINT(upload.connect_timeout_s, 1, 300) },
	[CONFIG_OPT_UPLOAD_TIMEOUT] = { .name = "upload-timeout", .kind = CONFIG_KIND_VALUE,
		.where = A, .metavar = "SEC", .help = "timeout of one push (default 30)",
		.want = "seconds, from 1 to 3600", UINT(upload.upload_timeout_s, 1, 3600) },
	[CONFIG_OPT_QUEUE_BYTES] = { .name = "queue-bytes", .kind = CONFIG_KIND_VALUE, .where = A,
		.metavar = "SIZE", .help = "memory for profiles not yet pushed (default 64MiB)",
		.want = "a size from 1MiB to 16GiB, like 64MiB", SIZE(queue_bytes, MIB, 16 * GIB) },
	[CONFIG_OPT_SPOOL] = { .name = "spool", .kind = CONFIG_KIND_VALUE, .where = A,
		.metavar = "DIR", .help = "keep profiles that cannot be pushed yet in DIR",
		.want = "a directory path", TEXT(UPLOAD(spool_dir)) },
	[CONFIG_OPT_SPOOL_BYTES] = { .name = "spool-bytes", .kind = CONFIG_KIND_VALUE, .where = A,
		.metavar = "SIZE", .help = "largest size of the spool (default 512MiB)",
		.want = "a size from 1MiB to 1024GiB, like 512MiB",
		SIZE(spool_bytes, MIB, 1024 * GIB) },
	[CONFIG_OPT_UNWIND_TABLE_BYTES] = { .name = "unwind-table-bytes", .kind = CONFIG_KIND_VALUE,
		.where = A, .metavar = "SIZE",
		.help = "unwind table memory (default 64MiB; 0: frame pointers)",
		.want = "0 or a size up to 4GiB, like 64MiB",
		SIZE_FIELD(unwind_table_bytes, 0, 4 * GIB) },
	[CONFIG_OPT_METRICS_ADDR] = { .name = "metrics-addr", .kind = CONFIG_KIND_VALUE, .where = A,
		.metavar = "HOST:PORT", .help = "serve /metrics, /healthz, /readyz (default: off)",
		.set = set_metrics_addr, .offset = FIELD(metrics_addr) },
	[CONFIG_OPT_DWARF_BUDGET] = { .name = "dwarf-budget", .kind = CONFIG_KIND_VALUE, .where = A,
		.metavar = "SIZE", .help = "DWARF kept in memory, all files (default 8MiB)",
		.want = "a size from 1MiB to 16GiB, like 8MiB",
		SIZE_FIELD(max_dwarf_bytes, MIB, 16 * GIB) },
	[CONFIG_OPT_SYMBOL_BUDGET] = { .name = "symbol-budget", .kind = CONFIG_KIND_VALUE,
		.where = A, .metavar = "SIZE",
		.help = "ELF symbol tables kept, all files (default 8MiB)",
		.want = "a size from 1MiB to 16GiB, like 8MiB",
		SIZE_FIELD(symbol_budget, MIB, 16 * GIB) },
	[CONFIG_OPT_INTERP_CACHE_BUDGET] = { .name = "interp-cache-budget",
		.kind = CONFIG_KIND_VALUE, .where = A, .metavar = "SIZE",
		.help = "Python and Ruby function names cached (default 4MiB)",
		.want = "a size from 1MiB to 1GiB, like 4MiB",
		SIZE_FIELD(interp_cache_budget, MIB, GIB) },
	[CONFIG_OPT_LOAD_BUDGET] = { .name = "load-budget", .kind = CONFIG_KIND_VALUE, .where = A,
		.metavar = "MS", .help = "time per drain for ELF/DWARF/perf maps (default 200)",
		.want = "milliseconds, from 10 to 10000", UINT(load_budget_ms, 10, 10000) },
	[CONFIG_OPT_PERF_MAP_MAX_BYTES] = { .name = "perf-map-max-bytes", .kind = CONFIG_KIND_VALUE,
		.where = A, .metavar = "SIZE", .help = "read at most SIZE of a perf map (default 16MiB)",
		.want = "a size from 1MiB to 1GiB, like 16MiB",
		SIZE_FIELD(perf_map_max_bytes, MIB, GIB) },
	[CONFIG_OPT_PERF_MAP_MAX_LINES] = { .name = "perf-map-max-lines", .kind = CONFIG_KIND_VALUE,
		.where = A, .metavar = "N", .help = "read at most N lines of a perf map (default 262144)",
		.want = "an integer from 1000 to 16777216", UINT(perf_map_max_lines, 1000, 16777216) },
	[CONFIG_OPT_PERF_MAP_BUDGET] = { .name = "perf-map-budget", .kind = CONFIG_KIND_VALUE,
		.where = A, .metavar = "SIZE",
		.help = "memory for perf maps, all processes (default 16MiB)",
		.want = "a size from 1MiB to 16GiB, like 16MiB",
		SIZE_FIELD(perf_map_budget, MIB, 16 * GIB) },
	[CONFIG_OPT_SAMPLE_MAP_ENTRIES] = { .name = "sample-map-entries",
		.kind = CONFIG_KIND_VALUE, .where = A, .metavar = "N",
		.help = "sample keys a BPF window holds (default 0: 16 x\n"
			"CPUs x frequency x drain period, 1024..32768)",
		.want = "an integer from 0 to 1048576", UINT(sample_entries, 0, 1u << 20) },
	[CONFIG_OPT_STACK_MAP_ENTRIES] = { .name = "stack-map-entries", .kind = CONFIG_KIND_VALUE,
		.where = A, .metavar = "N",
		.help = "stacks a window holds (default 0: 32 x CPUs x\n"
			"frequency x drain period, 2048..65536)",
		.want = "an integer from 0 to 1048576", UINT(stack_entries, 0, 1u << 20) },
	[CONFIG_OPT_OFF_CPU_MAP_ENTRIES] = { .name = "off-cpu-map-entries",
		.kind = CONFIG_KIND_VALUE, .where = A, .metavar = "N",
		.help = "off-CPU sample keys a window holds (default 8192)",
		.want = "an integer from 1 to 1048576", UINT(off_cpu_entries, 1, 1u << 20) },
	[CONFIG_OPT_GO_SPAN_MAP_ENTRIES] = { .name = "go-span-map-entries",
		.kind = CONFIG_KIND_VALUE, .where = A, .metavar = "N",
		.help = "goroutines in a span at once, at most (default\n"
			"16384; the map starts at 1024 and grows)",
		.want = "an integer from 16 to 4194304", UINT(goroutine_entries, 16, 4u << 20) },
	[CONFIG_OPT_SPAN_NAME_ENTRIES] = { .name = "span-name-entries", .kind = CONFIG_KIND_VALUE,
		.where = A, .metavar = "N",
		.help = "distinct span names held in BPF, node-wide (default\n"
			"4096; the least recent is forgotten)",
		.want = "an integer from 16 to 1048576", UINT(span_name_entries, 16, 1u << 20) },
	[CONFIG_OPT_PENDING_SCAN_ENTRIES] = { .name = "pending-scan-entries",
		.kind = CONFIG_KIND_VALUE, .where = A, .metavar = "N",
		.help = "processes with a rescan request pending in BPF\n"
			"(default 4096; beyond, requests are sent unmarked)",
		.want = "an integer from 1 to 1048576", UINT(pending_scan_entries, 1, 1u << 20) },
	[CONFIG_OPT_LOG_LEVEL] = { .name = "log-level", .kind = CONFIG_KIND_VALUE, .where = A,
		.metavar = "LEVEL", .help = "error, warn, info (default) or debug",
		.set = set_log_level },
	[CONFIG_OPT_LOG_FORMAT] = { .name = "log-format", .kind = CONFIG_KIND_VALUE, .where = A,
		.metavar = "FORMAT", .help = "logfmt (default) or json", .set = set_log_format },
	[CONFIG_OPT_VERBOSE] = { .name = "verbose", .short_name = 'v', .kind = CONFIG_KIND_BOOL,
		.where = A, .help = "same as --log-level debug (libbpf messages too)",
		.set = set_verbose, .offset = FIELD(verbose) },
	[CONFIG_OPT_CONFIG] = { .name = "config", .short_name = 'c', .kind = CONFIG_KIND_VALUE,
		.where = CONFIG_IN_FLAG | CONFIG_IN_ENV, .metavar = "FILE",
		.help = "read options from this YAML file", .want = "a file path",
		TEXT(FIELD(config_file)) },
	[CONFIG_OPT_HELP] = { .name = "help", .short_name = 'h', .kind = CONFIG_KIND_ACTION,
		.where = CONFIG_IN_FLAG, .help = "show this help" },
	[CONFIG_OPT_VERSION] = { .name = "version", .short_name = 'V', .kind = CONFIG_KIND_ACTION,
		.where = CONFIG_IN_FLAG, .help = "show the version" },
};
/* clang-format on */

const char *config_option_key(const struct config_option *opt)
{
	return opt->key ? opt->key : opt->name;
}

const struct config_option *config_option_by_key(const char *key)
{
	size_t i;

	for (i = 0; i < CONFIG_OPT__COUNT; i++)
		if (!strcmp(config_option_key(&config_options[i]), key))
			return &config_options[i];
	return NULL;
}

void config_env_name(const struct config_option *opt, char *buf, size_t size)
{
	size_t i;

	snprintf(buf, size, "SPANPROF_%s", config_option_key(opt));
	for (i = 0; buf[i]; i++)
		buf[i] = buf[i] == '-' ? '_' : toupper((unsigned char)buf[i]);
}

void config_touch(struct config_apply *ap, const struct config_option *opt)
{
	uint64_t bit = 1ull << (opt - config_options);

	if (opt->clear && !(ap->touched & bit))
		opt->clear(ap->cfg);
	ap->touched |= bit;
}

int config_apply(struct config_apply *ap, const struct config_option *opt, const char *value,
		 const char **want)
{
	config_touch(ap, opt);
	return opt->set(ap->cfg, opt, value, want);
}
