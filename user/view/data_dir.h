/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* What an agent's output directory holds: its profiles (by service, kind and window start) and
 * span logs, found from the file names alone (nothing is opened here). */
#ifndef SPANPROF_VIEW_DATA_DIR_H
#define SPANPROF_VIEW_DATA_DIR_H

#include <stddef.h>
#include <stdint.h>

#include "view/problems.h"
#include "view/view_profile.h"

#define DATA_NAME_MAX 256

struct profile_file {
	char name[DATA_NAME_MAX];
	char stem[DATA_NAME_MAX]; /* the service as in the file name */
	enum view_kind kind; /* from the name: ".off_cpu.pb.gz" or ".pb.gz" */
	int64_t start_ns; /* window start, Unix ns, from the name */
	uint64_t size;
};

struct span_log_file {
	char name[DATA_NAME_MAX];
	char stem[DATA_NAME_MAX];
	uint64_t size;
};

struct data_dir {
	struct profile_file *profiles; /* sorted by stem, kind, start */
	size_t nprofiles;
	struct span_log_file *logs;
	size_t nlogs;
	uint64_t skipped; /* profiles and logs past max_files, not listed */
};

/* Lists dir: profiles named <YYYYmmddTHHMMSS.mmmZ>-<seq>-<stem>[.off_cpu].pb.gz and span logs
 * <stem>.spans.jsonl[.N]; temp files (leading '.'), other names, and entries that are not
 * regular files are left out. At most max_files of each (counted in skipped past it). Empty
 * files go to pr. Returns 0 or -errno (opendir's, or -ENOMEM). */
int data_dir_scan(struct data_dir *dd, const char *dir, size_t max_files, struct problems *pr);

void data_dir_release(struct data_dir *dd);

/* Parses a profile file name into pf (name, stem, kind, start). Returns 0 or -EINVAL. */
int data_dir_parse_profile_name(const char *name, struct profile_file *pf);

/* Index of the first profile of (stem, kind) in dd->profiles, and how many follow (*n); -1
 * when there are none. */
long data_dir_find(const struct data_dir *dd, const char *stem, enum view_kind kind, size_t *n);

#endif /* SPANPROF_VIEW_DATA_DIR_H */
