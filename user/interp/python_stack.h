/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Puts a sample's CPython frames into its symbolized stack, in runs: the frames one
 * _PyEval_EvalFrameDefault activation executes (one frame up to 3.10; on 3.11+ a run of inlined
 * Python-to-Python calls, ended by the entry frame the sampler flagged SPANPROF_PY_FRAME_ENTRY)
 * go above that activation's native frame (interp/interp_stack.h), so a builtin that calls
 * back into Python (sum over a generator, sorted with a key) sits between its caller and the
 * code it runs. */
#ifndef SPANPROF_PYTHON_STACK_H
#define SPANPROF_PYTHON_STACK_H

#include <sys/types.h>
#include <linux/types.h>

#include "spanprof_abi.h"
#include "interp/python_symbols.h"
#include "symbolize/stack_resolve.h"
#include "interp/python_proc.h"

/* Inserts py's frames (innermost first) into r, named through ps. Frames that do not fit r are
 * dropped and counted in *dropped. */
void python_stack_merge(struct stack_resolve *r, struct python_symbols *ps, pid_t pid,
			const struct python_proc *proc, const struct interp_stack *py,
			uint64_t *dropped);

#endif /* SPANPROF_PYTHON_STACK_H */
