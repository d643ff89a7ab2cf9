/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The agent's configuration: defaults, then a YAML file, the environment and flags (in rising
 * precedence), validation, and the secrets read from files at start. */
#ifndef SPANPROF_CONFIG_H
#define SPANPROF_CONFIG_H

#include <stddef.h>
#include <stdio.h>
#include <stdint.h>
#include <sys/types.h>

#include "config/config_types.h"
#include "util/series_labels.h"
#include "util/log.h"

#define CONFIG_MAX_PIDS 1024
#define CONFIG_DEFAULT_OUTPUT "./spanprof-data"
/* At most this many --label; how many fit beside the labels the server lifts from the samples
 * is series_labels_budget()'s answer, checked by config_check() and again on Kubernetes. */
#define CONFIG_MAX_LABELS SERIES_LABELS_MAX_STATIC
#define CONFIG_MAX_HEADERS 32

/* Pushing profiles to a Pyroscope-compatible server; off while server is NULL. */
struct config_upload {
	const char *server; /* --server: http(s)://host[:port][/path], no '/' at end */
	/* --label: series labels, checked by series_label_check(). The type is pprof's, so these
	 * go to struct upload_options.static_labels as they are. */
	struct pprof_label labels[CONFIG_MAX_LABELS];
	size_t nlabels;
	const char *headers[CONFIG_MAX_HEADERS]; /* --header: "Name: value", checked and trimmed */
	size_t nheaders;
	const char *basic_auth_user;
	const char *basic_auth_password_file;
	const char *bearer_token_file;
	/* Secrets, from SPANPROF_BASIC_AUTH_PASSWORD / SPANPROF_BEARER_TOKEN or read from the files
	 * above at start (a trailing newline removed). Never log them. */
	const char *basic_auth_password;
	const char *bearer_token;
	const char *tenant; /* --tenant: sent as X-Scope-OrgID */
	const char *ca_file, *client_cert, *client_key; /* readable at start */
	int tls_insecure; /* --tls-insecure: skip server certificate checks */
	/* --trace-id-label: pushed samples carry trace_id too. Off by default: Pyroscope before
	 * v2.1.0 lifts it into a series label (a series per trace). Local files always carry it. */
	int trace_id_label;
	unsigned int connect_timeout_s; /* default 5 */
	unsigned int upload_timeout_s; /* default 30 */
	uint64_t queue_bytes; /* in-memory queue limit, default 64 MiB */
	/* --thread-ctx-labels: OpenTelemetry thread context attributes (record keys) whose values
	 * become sample labels ('.' written '_'), at most SPANPROF_TCTX_MAX_LABELS, checked. */
	const char *thread_ctx_labels[4];
	size_t nthread_ctx_labels;
	const char *spool_dir; /* --spool: NULL = no spool */
	uint64_t spool_bytes; /* default 512 MiB */
};

/* The most --label options the server's series limit leaves room for (series_labels_budget()
 * of the labels it lifts from samples; k8s != 0: on Kubernetes, with the pod labels). */
size_t config_label_budget(const struct config_upload *up, int k8s);

/* Strings the configuration allocated (values from the environment, the file, secrets). */
struct config_strings {
	char **v;
	size_t n, cap;
};

struct spanprof_config {
	pid_t pids[CONFIG_MAX_PIDS]; /* --pid; empty: every process */
	size_t npids;
	unsigned int frequency; /* --frequency, Hz per CPU */
	unsigned int interval_s; /* --interval: seconds per written profile */
	unsigned int duration_s; /* --duration: stop after this long; 0 = until a signal */
	const char *output_dir; /* --output; NULL: no local files (only with --server) */
	enum span_scope span_scope; /* --span-scope root|all */
	int off_cpu; /* --off-cpu: off-CPU profiles (default on) */
	unsigned int off_cpu_min_us; /* --off-cpu-min: shortest off-CPU period counted */
	int off_cpu_fp; /* --off-cpu-unwind=fp: off-CPU stacks by frame pointer, at switch-out */
	int interpreter_frames; /* --interpreter-frames: Python/Ruby frames read in BPF (default on) */
	unsigned int span_stats_max; /* --span-stats-max: pairs in /metrics; 0: no span times */
	unsigned int max_services; /* --max-services: services with a profile per window */
	uint64_t span_log_max_bytes; /* --span-log-max-bytes: a .spans.jsonl file's rotation size */
	int verbose; /* -v (also sets log_level to debug) */
	enum log_level log_level; /* --log-level, default info */
	enum log_format log_format; /* --log-format, default logfmt */
	const char *metrics_addr; /* --metrics-addr HOST:PORT; NULL = no metrics server */
	const char *config_file; /* --config / SPANPROF_CONFIG; NULL = none */
	uint64_t unwind_table_bytes; /* --unwind-table-bytes: CFI tables, 64 MiB; 0: FP only */
	struct config_upload upload;
	/* BPF map bounds: --sample-map-entries (sample counts and interpreter stacks of a window),
	 * --stack-map-entries (kernel and user stacks of a window); 0: from CPUs x frequency x
	 * drain period (map_sizes.h). --off-cpu-map-entries: off-CPU keys of a window (their
	 * stacks: twice that). --go-span-map-entries: goroutines in a span at once.
	 * --span-name-entries: distinct span names the BPF side holds (an LRU, preallocated).
	 * --pending-scan-entries: processes with a rescan request pending. */
	unsigned int sample_entries, stack_entries, off_cpu_entries, goroutine_entries;
	unsigned int span_name_entries, pending_scan_entries;
	/* Limits (not flags yet): cache sizes. */
	size_t max_procs, max_hook_files, max_modules, max_pid_snapshots;
	unsigned int drain_ms; /* how often BPF maps are drained */
	unsigned int rescan_s; /* full /proc rescan, a safety net for missed events */
	/* Caps and budgets on process-controlled files (README "Security model"). */
	uint64_t perf_map_max_bytes; /* --perf-map-max-bytes: read of one perf map */
	unsigned int perf_map_max_lines; /* --perf-map-max-lines */
	uint64_t perf_map_budget; /* --perf-map-budget: perf maps held, all processes */
	uint64_t max_dwarf_bytes; /* --dwarf-budget: DWARF held, all modules together */
	uint64_t symbol_budget; /* --symbol-budget: symbol tables held, all modules together */
	uint64_t interp_cache_budget; /* --interp-cache-budget: Python and Ruby names held */
	unsigned int load_budget_ms; /* --load-budget: ELF/DWARF/perf-map loading per drain */
	const char *obi_map; /* --obi-map: OBI's pinned trace context map; "": not read */
	const char *proc_root;
	struct config_strings owned; /* freed by config_release() */
};

enum config_result {
	CONFIG_RUN = 0, /* parsed: run the agent */
	CONFIG_EXIT_OK, /* --help or --version printed */
	CONFIG_ERROR, /* a bad flag, variable, file or secret; the error was printed */
};

/* Sets the defaults. Always pair with config_release(). */
void config_init(struct spanprof_config *cfg);

/* Frees the strings cfg owns (secrets are wiped first) and resets it to empty. */
void config_release(struct spanprof_config *cfg);

/* Fills cfg from, in rising precedence: the YAML file named by --config or SPANPROF_CONFIG,
 * the SPANPROF_* variables of envp (NULL: none), then argv. A source that sets a repeatable
 * option (pid, label, header) replaces the whole list a lower source set. Then reads the
 * secret files and checks the options that depend on each other. Prints help/version to out;
 * errors to err, one line naming the flag, variable, or file:line and the bad value (never a
 * secret's value), then a hint. Every string cfg holds after this is a default literal or
 * owned by cfg (config_release() frees it), never a pointer into argv or envp. */
enum config_result config_parse(struct spanprof_config *cfg, int argc, char **argv,
				char *const *envp, FILE *out, FILE *err);

#endif /* SPANPROF_CONFIG_H */
