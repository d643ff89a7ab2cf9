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
#include "interp/interp_procs.h"
#include "interp/python_offsets.h"

struct python_proc {
	struct interp_file file; /* first: interp_procs reads it */
	const struct python_offsets *off; /* NULL when the version is unsupported */
	struct py_proc_info bpf; /* for py_procs; valid when off is set */
	uint64_t eval_lo, eval_hi; /* _PyEval_EvalFrameDefault in process memory; 0 when unknown */
	uint64_t eval_cold_lo, eval_cold_hi; /* its .cold part, where the file names it */
};

/* CPython for interp_procs: its find looks for the interpreter among pid's executable mappings
 * and reads it. It returns 0 with a struct python_proc filled (file.supported 0: a CPython this
 * agent does not read, file.remark says why), -ENOENT when no mapping is a CPython interpreter,
 * or another -errno. */
extern const struct interp_kind python_interp;

#endif /* SPANPROF_PYTHON_PROC_H */
