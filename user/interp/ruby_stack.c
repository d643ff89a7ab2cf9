// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Merges CRuby frames into a symbolized native stack, one run per rb_vm_exec activation. */
#include "interp/interp_stack.h"
#include "interp/ruby_stack.h"

struct ruby_namer {
	struct ruby_symbols *rs;
	pid_t pid;
	const struct ruby_proc *proc;
};

static void name_ruby_frame(void *ctx, const struct interp_frame *f, struct sym_line *line)
{
	struct ruby_namer *n = ctx;

	ruby_symbols_resolve(n->rs, n->pid, n->proc->off, n->proc->global_symbols, f, line);
}

void ruby_stack_merge(struct stack_resolve *r, struct ruby_symbols *rs, pid_t pid,
		      const struct ruby_proc *proc, const struct interp_stack *rb,
		      uint64_t *dropped)
{
	struct ruby_namer namer = { .rs = rs, .pid = pid, .proc = proc };
	struct interp_stack_layout layout = {
		.runner = { { proc->exec_lo, proc->exec_hi } },
		.run_end_flag = SPANPROF_RB_FRAME_FINISH,
		.address_seed = 0x84222325cbf29ce4ull,
	};

	interp_stack_merge(r, &layout, rb, name_ruby_frame, &namer, dropped);
}
