/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The processes running CPython: per pid the interpreter found at the last scan, bounded, with
 * one log line per unsupported interpreter file and counters. */
#ifndef SPANPROF_PYTHON_PROCS_H
#define SPANPROF_PYTHON_PROCS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "discover/proc_maps.h"
#include "unwind/python_proc.h"

struct python_procs;

struct python_procs_stats {
	uint64_t supported; /* processes whose frames the sampler reads now */
	uint64_t unsupported; /* scans that found a CPython this agent cannot read */
	uint64_t full; /* processes not tracked because max_pids were */
};

struct python_procs *python_procs_new(const char *proc_root, size_t max_pids);
void python_procs_free(struct python_procs *pp);

/* Rescans pid (maps: its executable mappings). Returns 1 and sets *info when the sampler must
 * read its frames, 0 when it must not (no CPython, unsupported, or the table is full). */
int python_procs_update(struct python_procs *pp, pid_t pid, const struct proc_maps *maps,
			const struct python_proc **info);

/* What the last scan found for pid (supported only), or NULL. */
const struct python_proc *python_procs_get(struct python_procs *pp, pid_t pid);

void python_procs_forget(struct python_procs *pp, pid_t pid);

void python_procs_get_stats(const struct python_procs *pp, struct python_procs_stats *out);

#endif /* SPANPROF_PYTHON_PROCS_H */
