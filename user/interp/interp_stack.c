// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Merges interpreter frames into a symbolized native stack, one run per activation of the native
 * function that executes them. */
#include <string.h>

#include "interp/interp_stack.h"

/* Interpreter frames have no mapping: a synthetic address per (function, file, line), with the
 * top bit set so it never equals a user-space address, keeps pprof's locations apart. */
static uint64_t frame_address(uint64_t seed, const struct sym_line *l)
{
	uint64_t h = seed;
	const char *s;

	for (s = l->function; s && *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
	h = (h ^ 0xff) * 0x100000001b3ull;
	for (s = l->file; s && *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
	h = (h ^ (uint64_t)l->line) * 0x100000001b3ull;
	return h | (1ull << 63);
}

static int in_runner(const struct interp_stack_layout *layout, uint64_t pc)
{
	size_t k;

	for (k = 0; k < sizeof(layout->runner) / sizeof(layout->runner[0]); k++)
		if (pc >= layout->runner[k].lo && pc < layout->runner[k].hi)
			return 1;
	return 0;
}

/* Indexes of the user frames running the runner function, innermost first; returns how many. */
static size_t runner_positions(const struct stack_resolve *r,
			       const struct interp_stack_layout *layout, size_t *pos, size_t max)
{
	size_t i, n = 0;
	uint64_t pc;

	for (i = r->user_start; i < r->nframes && n < max; i++) {
		/* Return addresses may sit one past the function's last byte. */
		pc = i == r->user_start ? r->frames[i].addr : r->frames[i].addr - 1;
		if (in_runner(layout, pc))
			pos[n++] = i;
	}
	return n;
}

/* How many of the innermost runner frames run no captured frame. The sample may catch a runner
 * activation between its entry and pushing its first frame, or after popping its last one:
 * fewer runs than runner frames then means the innermost runner frames are those, and the runs
 * belong to the outer ones. Not when the interpreter stack was cut short (its runs are not all
 * there): 0, runs match from the innermost. */
static size_t inner_runners_without_frames(const struct interp_stack *s, uint32_t n,
					   uint32_t end_flag, size_t npos)
{
	size_t runs = 0;
	uint32_t i;

	if (s->truncated || !n)
		return 0;
	for (i = 0; i < n; i++)
		runs += !!(s->frames[i].flags & end_flag);
	runs += !(s->frames[n - 1].flags & end_flag); /* an outermost run without its end */
	return runs < npos ? npos - runs : 0;
}

void interp_stack_merge(struct stack_resolve *r, const struct interp_stack_layout *layout,
			const struct interp_stack *s, interp_frame_namer name, void *ctx,
			uint64_t *dropped)
{
	size_t pos[SPANPROF_INTERP_MAX_FRAMES], npos, skip, run = 0, at, inserted = 0;
	size_t end = r->nframes;
	uint32_t i, n = s->nframes;
	struct sym_frame f;

	if (n > SPANPROF_INTERP_MAX_FRAMES)
		n = SPANPROF_INTERP_MAX_FRAMES;
	npos = runner_positions(r, layout, pos, SPANPROF_INTERP_MAX_FRAMES);
	skip = inner_runners_without_frames(s, n, layout->run_end_flag, npos);
	for (i = 0; i < n; i++) {
		memset(&f, 0, sizeof(f));
		f.nlines = 1;
		f.interpreted = 1;
		name(ctx, &s->frames[i], &f.lines[0]);
		f.addr = frame_address(layout->address_seed, &f.lines[0]);
		at = (run + skip < npos ? pos[run + skip] : end) + inserted;
		/* Within a run, each frame goes below (outer than) the one before it. Inserting copies
		 * the name's strings: the next name() may evict or reuse what they point at. */
		if (stack_resolve_insert(r, at, &f)) {
			*dropped += n - i;
			return;
		}
		inserted++;
		if (s->frames[i].flags & layout->run_end_flag)
			run++;
	}
}
