/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The processes running one kind of interpreter (CPython, CRuby): per pid, what the last scan
 * found (a value of the kind's size that starts with struct interp_file), bounded; one log line
 * per interpreter file this agent cannot read; counters of both. */
#ifndef SPANPROF_INTERP_PROCS_H
#define SPANPROF_INTERP_PROCS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "discover/proc_maps.h"
#include "interp/interp_file.h"
#include "util/file_verdicts.h"

/* An interpreter kind: python_proc.h and ruby_proc.h define one each. */
struct interp_kind {
	const char *name; /* in logs: "CPython" */
	size_t value_size; /* the value starts with struct interp_file */
	size_t parsed_size; /* what parsing its file gives, remembered per file in verdicts */
	/* Looks for the interpreter among maps (pid's executable mappings) and fills value,
	 * parsing its file through verdicts. Returns 0 when one was found (supported or not: see
	 * its interp_file), -ENOENT when none, -EBUSY when its file is being parsed (off the
	 * run loop), another -errno when it could not be read. */
	int (*find)(const char *proc_root, pid_t pid, const struct proc_maps *maps,
		    struct file_verdicts *verdicts, void *value);
};

struct interp_procs;

struct interp_procs_stats {
	uint64_t supported; /* processes whose frames the sampler reads now */
	uint64_t unsupported; /* scans that found an interpreter this agent cannot read */
	uint64_t full; /* processes not tracked because max_pids were */
	struct file_verdicts_stats files; /* the per-file verdicts and parse budget */
};

/* Interpreter files whose verdicts are remembered, per kind (about 0.5 KiB each). */
#define INTERP_MAX_FILES 1024

/* A table of at most max_pids processes of kind. NULL (errno ENOMEM) on failure. */
struct interp_procs *interp_procs_new(const struct interp_kind *kind, const char *proc_root,
				      size_t max_pids);
void interp_procs_free(struct interp_procs *ip);
/* The agent is exiting: the interpreter file parser stops after its parse in progress, without
 * waiting (file_verdicts_stop()). NULL-safe. */
void interp_procs_stop_parses(struct interp_procs *ip);

/* Rescans pid. Returns its value when the sampler must read its frames, NULL when it must not
 * (no interpreter of this kind, unsupported, unreadable, or the table is full); NULL with errno
 * EBUSY when its interpreter file is being parsed: scan it again later. */
const void *interp_procs_update(struct interp_procs *ip, pid_t pid, const struct proc_maps *maps);

/* What the last scan found for pid (supported only), or NULL. Valid until the next update or
 * forget of pid. */
const void *interp_procs_get(const struct interp_procs *ip, pid_t pid);

void interp_procs_forget(struct interp_procs *ip, pid_t pid);

void interp_procs_get_stats(const struct interp_procs *ip, struct interp_procs_stats *out);

#endif /* SPANPROF_INTERP_PROCS_H */
