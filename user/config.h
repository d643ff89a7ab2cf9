/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The agent's configuration: defaults, command-line parsing and validation. */
#ifndef SPANPROF_CONFIG_H
#define SPANPROF_CONFIG_H

#include <stddef.h>
#include <stdio.h>
#include <stdint.h>
#include <sys/types.h>

#include "aggregate.h"

#define CONFIG_MAX_PIDS 1024

struct spanprof_config {
	pid_t pids[CONFIG_MAX_PIDS]; /* --pid; empty: every process */
	size_t npids;
	unsigned int frequency;      /* --frequency, Hz per CPU */
	unsigned int interval_s;     /* --interval: seconds per written profile */
	unsigned int duration_s;     /* --duration: stop after this long; 0 = until a signal */
	const char *output_dir;      /* --output */
	enum span_scope span_scope;  /* --span-scope root|all */
	int verbose;                 /* -v */
	/* Limits (not flags yet): map and cache sizes. */
	uint32_t stack_entries, count_entries;
	size_t max_services, max_procs, max_hook_files, max_modules, max_pid_snapshots;
	unsigned int drain_ms;       /* how often BPF maps are drained */
	unsigned int rescan_s;       /* full /proc rescan, a safety net for missed events */
	const char *proc_root;
};

enum config_result {
	CONFIG_RUN = 0,  /* parsed: run the agent */
	CONFIG_EXIT_OK,  /* --help or --version printed */
	CONFIG_ERROR,    /* a bad flag; the error was printed */
};

void config_init(struct spanprof_config *cfg);

/* Parses argv into cfg (strings point into argv). Prints help/version to out and errors (one
 * line naming the flag and the bad value, then a hint) to err. */
enum config_result config_parse(struct spanprof_config *cfg, int argc, char **argv, FILE *out,
				FILE *err);

#endif /* SPANPROF_CONFIG_H */
