/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Finds the CRuby interpreter of one process (its libruby*.so mapping, or a statically linked
 * ruby executable) and what the sampler needs to read its control frames. */
#ifndef SPANPROF_RUBY_PROC_H
#define SPANPROF_RUBY_PROC_H

#include <stdint.h>
#include <sys/types.h>
#include <linux/types.h>

#include "discover/proc_maps.h"
#include "spanprof_abi.h"
#include "unwind/ruby_offsets.h"

struct ruby_proc {
	int major, minor, patch;
	const struct ruby_offsets *off; /* NULL when the version or its EC access is unsupported */
	const char *why; /* with off NULL: what is unsupported */
	struct rb_proc_info bpf; /* for rb_procs; valid when off is set */
	uint64_t exec_lo, exec_hi; /* rb_vm_exec in process memory; 0 when unknown */
	uint64_t global_symbols; /* ruby_global_symbols in process memory; 0 when not found */
	uint64_t dev, inode; /* the interpreter file */
	char path[256]; /* the interpreter file as maps names it */
};

/* Looks for the interpreter among maps (pid's executable mappings), reads it through
 * <proc_root>/PID/map_files and the TLS module id from <proc_root>/PID/mem. Returns 0 with *out
 * filled (out->off NULL: a CRuby this agent cannot read, out->why says why), -ENOENT when no
 * mapping is a CRuby interpreter, -EAGAIN when the dynamic linker has not relocated it yet, or
 * another -errno. */
int ruby_proc_find(const char *proc_root, pid_t pid, const struct proc_maps *maps,
		   struct ruby_proc *out);

#endif /* SPANPROF_RUBY_PROC_H */
