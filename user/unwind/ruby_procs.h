/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The processes running CRuby: per pid the interpreter found at the last scan, bounded, with
 * one log line per unsupported interpreter file and counters. */
#ifndef SPANPROF_RUBY_PROCS_H
#define SPANPROF_RUBY_PROCS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "discover/proc_maps.h"
#include "unwind/ruby_proc.h"

struct ruby_procs;

struct ruby_procs_stats {
	uint64_t supported; /* processes whose frames the sampler reads now */
	uint64_t unsupported; /* scans that found a CRuby this agent cannot read */
	uint64_t full; /* processes not tracked because max_pids were */
};

struct ruby_procs *ruby_procs_new(const char *proc_root, size_t max_pids);
void ruby_procs_free(struct ruby_procs *rp);

/* Rescans pid (maps: its executable mappings). Returns 1 and sets *info when the sampler must
 * read its frames, 0 when it must not (no CRuby, unsupported, or the table is full). */
int ruby_procs_update(struct ruby_procs *rp, pid_t pid, const struct proc_maps *maps,
		      const struct ruby_proc **info);

/* What the last scan found for pid (supported only), or NULL. */
const struct ruby_proc *ruby_procs_get(struct ruby_procs *rp, pid_t pid);

void ruby_procs_forget(struct ruby_procs *rp, pid_t pid);

void ruby_procs_get_stats(const struct ruby_procs *rp, struct ruby_procs_stats *out);

#endif /* SPANPROF_RUBY_PROCS_H */
