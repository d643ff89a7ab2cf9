// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Merges CRuby frames into a symbolized native stack, one run per rb_vm_exec activation. */
#include <string.h>

#include "symbolize/ruby_stack.h"

/* Ruby frames have no mapping: a synthetic address per (function, file, line), with the top bit
 * set so it never equals a user-space address, keeps pprof's locations apart. */
static uint64_t frame_address(const struct sym_line *l)
{
	uint64_t h = 0x84222325cbf29ce4ull;
	const char *s;

	for (s = l->function; s && *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
	h = (h ^ 0xfe) * 0x100000001b3ull;
	for (s = l->file; s && *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
	h = (h ^ (uint64_t)l->line) * 0x100000001b3ull;
	return h | (1ull << 63);
}

/* Indexes of the user frames running rb_vm_exec, innermost first; returns how many (<= max). */
static size_t exec_positions(const struct stack_resolve *r, const struct ruby_proc *proc,
			     size_t *pos, size_t max)
{
	size_t i, n = 0;
	uint64_t pc;

	if (!proc->exec_hi)
		return 0;
	for (i = r->user_start; i < r->nframes && n < max; i++) {
		/* Return addresses may sit one past the function's last byte. */
		pc = i == r->user_start ? r->frames[i].addr : r->frames[i].addr - 1;
		if (pc >= proc->exec_lo && pc < proc->exec_hi)
			pos[n++] = i;
	}
	return n;
}

void ruby_stack_merge(struct stack_resolve *r, struct ruby_symbols *rs, pid_t pid,
		      const struct ruby_proc *proc, const struct py_stack *rb, uint64_t *dropped)
{
	size_t pos[SPANPROF_PY_MAX_FRAMES], npos, run = 0, at, inserted = 0, end = r->nframes;
	uint32_t i, n = rb->nframes < SPANPROF_PY_MAX_FRAMES ? rb->nframes : SPANPROF_PY_MAX_FRAMES;
	struct sym_frame f;

	npos = exec_positions(r, proc, pos, SPANPROF_PY_MAX_FRAMES);
	for (i = 0; i < n; i++) {
		memset(&f, 0, sizeof(f));
		f.nlines = 1;
		ruby_symbols_resolve(rs, pid, proc->off, proc->global_symbols, &rb->frames[i],
				     &f.lines[0]);
		f.addr = frame_address(&f.lines[0]);
		at = (run < npos ? pos[run] : end) + inserted;
		/* Within a run, each frame goes below (outer than) the one before it. */
		if (stack_resolve_insert(r, at, &f)) {
			*dropped += n - i;
			return;
		}
		inserted++;
		if (rb->frames[i].flags & SPANPROF_RB_FRAME_FINISH)
			run++;
	}
}
