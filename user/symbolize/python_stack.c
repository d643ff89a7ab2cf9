// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Merges CPython frames into a symbolized native stack. */
#include <string.h>

#include "symbolize/python_stack.h"

/* Python frames have no mapping: a synthetic address per (function, file, line), with the top bit
 * set so it never equals a user-space address, keeps pprof's locations apart. */
static uint64_t frame_address(const struct sym_line *l)
{
	uint64_t h = 0xcbf29ce484222325ull;
	const char *s;

	for (s = l->function; s && *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
	h = (h ^ 0xff) * 0x100000001b3ull;
	for (s = l->file; s && *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
	h = (h ^ (uint64_t)l->line) * 0x100000001b3ull;
	return h | (1ull << 63);
}

/* Index of the innermost user frame running _PyEval_EvalFrameDefault, or r->nframes. */
static size_t eval_position(const struct stack_resolve *r, const struct python_proc *proc)
{
	uint64_t pc;
	size_t i;

	if (!proc->eval_hi)
		return r->nframes;
	for (i = r->user_start; i < r->nframes; i++) {
		/* Return addresses may sit one past the function's last byte. */
		pc = i == r->user_start ? r->frames[i].addr : r->frames[i].addr - 1;
		if (pc >= proc->eval_lo && pc < proc->eval_hi)
			return i;
	}
	return r->nframes;
}

void python_stack_merge(struct stack_resolve *r, struct python_symbols *ps, pid_t pid,
			const struct python_proc *proc, const struct py_stack *py,
			uint64_t *dropped)
{
	size_t at = eval_position(r, proc);
	struct sym_frame f;
	uint32_t i;

	for (i = 0; i < py->nframes && i < SPANPROF_PY_MAX_FRAMES; i++) {
		memset(&f, 0, sizeof(f));
		f.nlines = 1;
		python_symbols_resolve(ps, pid, proc->off, &py->frames[i], &f.lines[0]);
		f.addr = frame_address(&f.lines[0]);
		if (stack_resolve_insert(r, at + i, &f)) {
			*dropped += py->nframes - i;
			return;
		}
	}
}
