// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Merges CPython frames into a symbolized native stack, one run per _PyEval_EvalFrameDefault
 * activation. */
#include "interp/interp_stack.h"
#include "interp/python_stack.h"

struct python_namer {
	struct python_symbols *ps;
	pid_t pid;
	const struct python_offsets *off;
};

static void name_python_frame(void *ctx, const struct interp_frame *f, struct sym_line *line)
{
	struct python_namer *n = ctx;

	python_symbols_resolve(n->ps, n->pid, n->off, f, line);
}

void python_stack_merge(struct stack_resolve *r, struct python_symbols *ps, pid_t pid,
			const struct python_proc *proc, const struct interp_stack *py,
			uint64_t *dropped)
{
	struct python_namer namer = { .ps = ps, .pid = pid, .off = proc->off };
	struct interp_stack_layout layout = {
		.runner = { { proc->eval_lo, proc->eval_hi },
			    { proc->eval_cold_lo, proc->eval_cold_hi } },
		.run_end_flag = SPANPROF_PY_FRAME_ENTRY,
		.address_seed = 0xcbf29ce484222325ull,
	};

	interp_stack_merge(r, &layout, py, name_python_frame, &namer, dropped);
}
