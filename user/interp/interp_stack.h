/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Puts a sample's interpreter frames (CPython or CRuby, innermost first) into its symbolized
 * native stack. The frames come in runs, one per activation of the native function that executes
 * them (_PyEval_EvalFrameDefault, rb_vm_exec); a run ends at a frame carrying the run-end flag.
 * Each run goes above its own native frame, the innermost run above the innermost one, so native
 * frames of C code (a builtin calling back into Python, Integer#times, a native gem) sit between
 * the function that called it and the code it runs. Runs without a native frame of their own
 * (frame-pointer stacks, truncated stacks) become the outermost user frames. */
#ifndef SPANPROF_INTERP_STACK_H
#define SPANPROF_INTERP_STACK_H

#include <stdint.h>
#include <linux/types.h>

#include "spanprof_abi.h"
#include "symbolize/stack_resolve.h"

/* Names one interpreter frame: fills *line (function, file, line). Its strings need only last
 * until the next call (the name caches refuse and evict within one sample): the merge copies
 * them into the stack before it names the next frame. */
typedef void (*interp_frame_namer)(void *ctx, const struct interp_frame *f, struct sym_line *line);

struct interp_stack_layout {
	/* [lo, hi): the native function running the frames, and its split-off .cold part (0/0:
	 * none); 0/0 in both: not known, every frame goes outermost */
	struct interp_range {
		uint64_t lo, hi;
	} runner[2];
	uint32_t run_end_flag; /* interp_frame.flags bit on the last frame of a run */
	/* Keeps one interpreter's synthetic frame addresses apart from another's. */
	uint64_t address_seed;
};

/* Inserts s's frames into r, named through name(ctx, ...). Frames that do not fit r are dropped
 * and counted in *dropped. */
void interp_stack_merge(struct stack_resolve *r, const struct interp_stack_layout *layout,
			const struct interp_stack *s, interp_frame_namer name, void *ctx,
			uint64_t *dropped);

#endif /* SPANPROF_INTERP_STACK_H */
