/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The off-CPU stacks of frame-pointer mode live in one map both windows share (a thread takes its
 * stacks when it blocks and may be counted windows later), so no drain may empty it. Each stack
 * carries when it was last taken (struct spanprof_user_stack.taken); a sweep deletes those not
 * taken for long, so the map holds the stacks of recent waits, not every stack ever seen. */
#ifndef SPANPROF_STACK_SWEEP_H
#define SPANPROF_STACK_SWEEP_H

#include <stdint.h>

/* Stacks not taken for this long are deleted (a wait longer than this whose stack was not taken
 * again since loses it: counted as a lost stack when it is drained). */
#define STACK_SWEEP_MAX_AGE_S 300
/* Keys deleted by one sweep at most (the rest go at the next). */
#define STACK_SWEEP_BATCH 4096

/* Deletes from fd (__u64 hash -> struct spanprof_user_stack) the stacks taken more than
 * max_age_ns before now_ns (CLOCK_MONOTONIC, as bpf_ktime_get_ns()). Sets *deleted. Returns 0 or
 * -errno (-ENOMEM; a stack that cannot be read is skipped). */
int stack_sweep(int fd, uint64_t now_ns, uint64_t max_age_ns, uint32_t *deleted);

#endif /* SPANPROF_STACK_SWEEP_H */
