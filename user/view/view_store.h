/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Everything the viewer knows about one data directory: its listing, the span records (read at
 * load), the decoded profiles (read on demand, cached), and the files it skipped. */
#ifndef SPANPROF_VIEW_STORE_H
#define SPANPROF_VIEW_STORE_H

#include <stddef.h>
#include <stdint.h>

#include "view/data_dir.h"
#include "view/problems.h"
#include "view/profile_cache.h"
#include "view/span_table.h"

struct view_limits {
	size_t max_files; /* profiles (and span logs) listed */
	size_t max_spans; /* span records kept */
	size_t max_file_bytes; /* a larger file (or unpacked profile) is skipped */
	size_t max_cache_bytes; /* decoded profiles held */
	size_t max_name_files; /* a span name's profile reads at most the newest this many */
	size_t max_nodes; /* nodes of one flame graph */
};

/* Defaults: 100,000 files, 2,000,000 spans, 256 MiB files, 512 MiB of profiles, 600 files per
 * span name, 200,000 nodes. */
void view_limits_default(struct view_limits *l);

struct view_store {
	const char *dir; /* not owned */
	struct view_limits limits;
	struct data_dir dd;
	struct span_table spans;
	struct problems problems;
	struct profile_cache *cache;
	uint64_t span_log_bytes; /* read at the last load */
	uint64_t load_ms; /* how long the last load took */
	uint64_t loaded_at_ns; /* Unix ns of the last load */
};

/* Lists dir and reads its span logs (a bad log line, file or a full table is counted and shown,
 * never fatal). vs must be zeroed or released. Returns 0, or -errno when dir cannot be listed
 * (logged with the path) or memory runs out. */
int view_store_load(struct view_store *vs, const char *dir, const struct view_limits *limits);

/* Reads the directory again (a running agent adds windows and spans): the new state replaces
 * the old one only when the load succeeds. Returns 0 or -errno. */
int view_store_reload(struct view_store *vs);

void view_store_release(struct view_store *vs);

#endif /* SPANPROF_VIEW_STORE_H */
