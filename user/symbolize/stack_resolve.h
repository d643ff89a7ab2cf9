/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Turns one sample's raw kernel and user stacks into symbolized frames, leaf first, with the
 * frames' strings copied into storage owned here (the cache's strings are short-lived). */
#ifndef SPANPROF_STACK_RESOLVE_H
#define SPANPROF_STACK_RESOLVE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "symbolize/symcache.h"
#include "util/spanprof_types.h"

/* Both stacks of a sample, a marker frame for each lost stack, and the interpreter frames. */
#define STACK_RESOLVE_MAX_FRAMES (2 * SPANPROF_MAX_STACK_DEPTH + 2 + SPANPROF_INTERP_MAX_FRAMES)

struct stack_resolve {
	struct sym_frame frames[STACK_RESOLVE_MAX_FRAMES];
	size_t nframes;
	size_t user_start; /* index of the first user frame (== nframes when there are none) */
	char strings[64 * 1024]; /* copies of the frames' strings */
	size_t used;
};

/* Fills r->frames: the kernel stack (leaf first) then the user stack. ips arrays end at the first
 * zero or after SPANPROF_MAX_STACK_DEPTH entries; NULL means "no such stack". lost_* marks a
 * stack the BPF side could not record: a "[kernel stack lost]"/"[user stack lost]" frame stands in.
 * Return addresses (all user frames but the leaf) are looked up at address - 1 so the line is the
 * call's, while the frame keeps the real address. */
void stack_resolve(struct stack_resolve *r, struct symcache *sc, pid_t pid,
		   const uint64_t *kern_ips, int lost_kern, const uint64_t *user_ips,
		   int lost_user);

/* Inserts f (strings copied) at index at (<= r->nframes), moving later frames up. Returns 0, or
 * -E2BIG when r is full. */
int stack_resolve_insert(struct stack_resolve *r, size_t at, const struct sym_frame *f);

#endif /* SPANPROF_STACK_RESOLVE_H */
