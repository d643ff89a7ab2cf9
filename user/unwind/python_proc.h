/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Finds the CPython interpreter of one process (its python3.X executable or libpython3.X.so
 * mapping) and what the sampler needs to read its frames. */
#ifndef SPANPROF_PYTHON_PROC_H
#define SPANPROF_PYTHON_PROC_H

#include <stdint.h>
#include <sys/types.h>
#include <linux/types.h>

#include "discover/proc_maps.h"
#include "spanprof_abi.h"
#include "unwind/python_offsets.h"

struct python_proc {
	int major, minor, patch;
	const struct python_offsets *off; /* NULL when the version is unsupported */
	struct py_proc_info bpf; /* for py_procs; valid when off is set */
	uint64_t eval_lo, eval_hi; /* _PyEval_EvalFrameDefault in process memory; 0 when unknown */
	uint64_t dev, inode; /* the interpreter file */
	char path[256]; /* the interpreter file as maps names it */
};

/* Looks for the interpreter among maps (pid's executable mappings) and reads it through
 * <proc_root>/PID/map_files. Returns 0 with *out filled (out->off NULL: a CPython this agent does
 * not support), -ENOENT when no mapping is a CPython interpreter, or another -errno. */
int python_proc_find(const char *proc_root, pid_t pid, const struct proc_maps *maps,
		     struct python_proc *out);

#endif /* SPANPROF_PYTHON_PROC_H */
