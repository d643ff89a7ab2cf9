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
#include "interp/interp_procs.h"
#include "interp/ruby_offsets.h"

struct ruby_proc {
	struct interp_file file; /* first: interp_procs reads it */
	const struct ruby_offsets *off; /* NULL when the version or its EC access is unsupported */
	struct rb_proc_info bpf; /* for rb_procs; valid when off is set */
	uint64_t exec_lo, exec_hi; /* rb_vm_exec in process memory; 0 when unknown */
	uint64_t global_symbols; /* ruby_global_symbols in process memory; 0 when not found */
};

/* CRuby for interp_procs: its find looks for the interpreter among pid's executable mappings,
 * reads it, and reads the TLS module id from <proc_root>/PID/mem. It returns 0 with a struct
 * ruby_proc filled (file.supported 0: a CRuby this agent cannot read, file.remark says why),
 * -ENOENT when no mapping is a CRuby interpreter, -EAGAIN when the dynamic linker has not
 * relocated it yet, or another -errno. */
extern const struct interp_kind ruby_interp;

#endif /* SPANPROF_RUBY_PROC_H */
