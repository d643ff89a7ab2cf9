/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Kernel and frame-pointer user stacks stored by hash, as the CFI unwinder stores its stacks:
 * bpf_get_stack() into per-CPU scratch, then the frames under a hash of them in a stack map
 * without preallocation (STACKS_MAP). The kernel holds memory for the stacks a window has, not
 * for a stack-trace map's every bucket, and a full map is an error the caller counts rather than
 * a stack silently lost to (or overwritten in) a colliding bucket. */
#ifndef SPANPROF_STACK_STORE_BPF_H
#define SPANPROF_STACK_STORE_BPF_H

#include "helpers.bpf.h"
#include "maps.bpf.h"

/* One program's buffer for the stack being stored, per CPU: a program another can interrupt on
 * its CPU (the sampler interrupts the off-CPU capture) has its own. */
#define STACK_SCRATCH_MAP(name)                            \
	struct {                                           \
		__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);   \
		__uint(max_entries, 1);                    \
		__type(key, __u32);                        \
		__type(value, struct spanprof_user_stack); \
	} name SEC(".maps")

/* The hash of a stack's frames: the CFI unwinder's mix (unwind_native.bpf.h), so one stack gets
 * one key whichever way it was taken. */
static __always_inline __u64 stack_hash(const struct spanprof_user_stack *s)
{
	__u64 h = 0xcbf29ce484222325ull;
	__u32 i;

	for (i = 0; i < SPANPROF_MAX_STACK_DEPTH; i++) {
		if (i >= s->nframes)
			break;
		h = (h ^ s->ips[i]) * 0x9e3779b97f4a7c15ull;
		h ^= h >> 29;
	}
	return h ?: 1;
}

/* Takes the current stack (bpf_get_stack() flags: BPF_F_USER_STACK and the frames to skip) and
 * stores it in stacks under its hash, which it returns; 0 when there is no such stack (a kernel
 * thread has no user stack, a user-mode interrupt no kernel stack). A stack the map cannot take
 * keeps its hash and is counted as drop_reason: the agent finds no stack under it and counts it
 * lost too. taken != 0: the stack's time stamp (struct spanprof_user_stack), refreshed when the
 * map already holds it. */
static __always_inline __u64 stack_store(void *ctx, void *scratch, void *stacks, __u64 flags,
					 __u32 taken, __u32 drop_reason)
{
	struct spanprof_user_stack *s, *held;
	__u32 zero = 0;
	long n, err;
	__u64 h;

	s = bpf_map_lookup_elem(scratch, &zero);
	if (!s)
		return 0;
	n = bpf_get_stack(ctx, s->ips, sizeof(s->ips), flags);
	if (n <= 0)
		return 0;
	s->nframes = n / sizeof(s->ips[0]);
	s->taken = taken;
	h = stack_hash(s);
	held = bpf_map_lookup_elem(stacks, &h);
	if (held) {
		if (taken)
			held->taken = taken;
		return h;
	}
	err = bpf_map_update_elem(stacks, &h, s, BPF_NOEXIST);
	if (err && err != -EEXIST)
		counter_inc(&drop_counts, drop_reason);
	return h;
}

#endif /* SPANPROF_STACK_STORE_BPF_H */
