/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Puts a sample's CPython frames into its symbolized stack: above the innermost native
 * _PyEval_EvalFrameDefault frame when the native stack shows one, else as the outermost user
 * frames (native frames found without it then show as called from the innermost Python one). */
#ifndef SPANPROF_PYTHON_STACK_H
#define SPANPROF_PYTHON_STACK_H

#include <sys/types.h>
#include <linux/types.h>

#include "spanprof_abi.h"
#include "symbolize/python_symbols.h"
#include "symbolize/stack_resolve.h"
#include "unwind/python_proc.h"

/* Inserts py's frames (innermost first) into r, named through ps. Frames that do not fit r are
 * dropped and counted in *dropped. */
void python_stack_merge(struct stack_resolve *r, struct python_symbols *ps, pid_t pid,
			const struct python_proc *proc, const struct py_stack *py,
			uint64_t *dropped);

#endif /* SPANPROF_PYTHON_STACK_H */
