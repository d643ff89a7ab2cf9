/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Puts a sample's CRuby frames into its symbolized stack. The frames come in runs, one per
 * rb_vm_exec activation (a run ends at a frame flagged FINISH); each run goes above its own
 * native rb_vm_exec frame, innermost run above the innermost one, so native frames of a C
 * function (Integer#times, a native gem) sit between the Ruby method that called it and the
 * block it runs. Runs without a native rb_vm_exec frame (frame-pointer stacks, truncated
 * stacks) become the outermost user frames. */
#ifndef SPANPROF_RUBY_STACK_H
#define SPANPROF_RUBY_STACK_H

#include <stdint.h>
#include <sys/types.h>
#include <linux/types.h>

#include "spanprof_abi.h"
#include "interp/ruby_symbols.h"
#include "symbolize/stack_resolve.h"
#include "interp/ruby_proc.h"

/* Inserts rb's frames (innermost first) into r, named through rs. Frames that do not fit r are
 * dropped and counted in *dropped. */
void ruby_stack_merge(struct stack_resolve *r, struct ruby_symbols *rs, pid_t pid,
		      const struct ruby_proc *proc, const struct interp_stack *rb,
		      uint64_t *dropped);

#endif /* SPANPROF_RUBY_STACK_H */
