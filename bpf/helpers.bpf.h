/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* BPF-only helper functions shared by the programs: counters, lookup-or-init of a map entry,
 * user-memory reads, the interpreter walkers' common steps, the current goroutine. Map
 * definitions are in maps.bpf.h. */
#ifndef SPANPROF_HELPERS_BPF_H
#define SPANPROF_HELPERS_BPF_H

#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>

#include "spanprof_abi.h"

/* vmlinux.h has no errno macros; these are the values BPF helpers return, negated. */
#ifndef ENOENT
#define ENOENT 2
#endif
#ifndef EFAULT
#define EFAULT 14
#endif
#ifndef EEXIST
#define EEXIST 17
#endif
#ifndef E2BIG
#define E2BIG 7
#endif

/* Adds one to a per-CPU counter; the array lookup cannot fail for an index below max_entries. */
static __always_inline void counter_inc(void *map, __u32 index)
{
	__u64 *value = bpf_map_lookup_elem(map, &index);

	if (value)
		*value += 1;
}

/* Adds n to a per-CPU counter. */
static __always_inline void counter_add(void *map, __u32 index, __u64 n)
{
	__u64 *value = bpf_map_lookup_elem(map, &index);

	if (value)
		*value += n;
}

/* Stores an interpreter stack (struct interp_stack, CPython or CRuby frames) in a window slot's
 * interp_stacks map under its hash, made non-zero (0 means "no interpreter frames" in a sample).
 * Returns the hash, or 0 when the map is full, counted in drops at drop_reason. */
static __always_inline __u64 interp_stack_store(void *stacks, void *drops, __u64 hash,
						const void *stack, __u32 drop_reason)
{
	if (!hash)
		hash = 1;
	if (bpf_map_update_elem(stacks, &hash, stack, BPF_ANY)) {
		counter_inc(drops, drop_reason);
		return 0;
	}
	return hash;
}

/* Reads a word of user memory; 0 when it cannot be read (the walkers treat 0 as "none"). */
static __always_inline __u64 user_read_u64(__u64 addr)
{
	__u64 v = 0;

	bpf_probe_read_user(&v, sizeof(v), (void *)addr);
	return v;
}

static __always_inline __u32 user_read_u32(__u64 addr)
{
	__u32 v = 0;

	bpf_probe_read_user(&v, sizeof(v), (void *)addr);
	return v;
}

/* Empties an interpreter stack before a walk, for interpreter interp (enum spanprof_interp). */
static __always_inline void interp_stack_begin(struct interp_stack *stack, __u16 interp)
{
	stack->nframes = 0;
	stack->truncated = 0;
	stack->interp = interp;
}

/* Runs a walk: step (a bpf_loop callback that finds its state in its program's per-CPU
 * scratch, as bpf_loop's context must live on the stack) up to max times, then stores stack
 * under *hash as interp_stack_store() does. Returns the hash, or 0 when the walk found no
 * frames or the map is full. */
static __always_inline __u64 interp_walk_run(long (*step)(__u32, void *), __u32 max,
					     const struct interp_stack *stack, const __u64 *hash,
					     void *stacks, void *drops, __u32 drop_reason)
{
	bpf_loop(max, step, NULL, 0);
	if (!stack->nframes)
		return 0;
	return interp_stack_store(stacks, drops, *hash, stack, drop_reason);
}

/* A bpf_loop callback named fn that runs walk_fn on the walk state in the per-CPU map scratch
 * (a lookup is a few instructions; the state is too big for the 512-byte stack). */
#define WALK_STEP_FN(fn, walk_fn, scratch)                              \
	static long fn(__u32 i, void *ctx)                              \
	{                                                               \
		__u32 zero = 0;                                         \
		return walk_fn(bpf_map_lookup_elem(&(scratch), &zero)); \
	}

/* The running goroutine of a Go amd64 program: the runtime keeps its g pointer at g_tls_offset
 * from the thread's FS base (-8 when Go's own linker linked it; an offset into the executable's
 * TLS block when an external linker did, as with cgo: struct go_proc). Returns 0 or a
 * negative error. */
static __always_inline long current_goroutine(struct task_struct *task, __s32 g_tls_offset,
					      __u64 *g)
{
#if defined(__TARGET_ARCH_x86)
	__u64 fsbase = BPF_CORE_READ(task, thread.fsbase);

	if (!fsbase || g_tls_offset >= 0)
		return -EFAULT;
	return bpf_probe_read_user(g, sizeof(*g), (void *)(fsbase + (__s64)g_tls_offset));
#else
	return -EFAULT; /* goroutine tracking is x86-64 only for now */
#endif
}

/* Who set a goroutine_spans entry: the goroutine's id (g.goid at goid_offset in runtime.g, from
 * the per-version layout; ids are never reused in a process, g's are) and the address space
 * (task->mm: an exec gives the same pid a new one while the old still exists, so a new image
 * whose goroutines sit at the old g addresses with the old ids is still told apart). Returns 0,
 * or -EFAULT when the layout is unknown (offset 0) or the id unreadable or 0 (no goroutine has
 * id 0). */
static __always_inline long goroutine_owner(struct task_struct *task, __u64 g, __u32 goid_offset,
					    __u64 *goid, __u64 *mm)
{
	if (!goid_offset || bpf_probe_read_user(goid, sizeof(*goid), (void *)(g + goid_offset)) ||
	    !*goid)
		return -EFAULT;
	*mm = (__u64)BPF_CORE_READ(task, mm);
	return 0;
}

/* The value of key in a hash map, inserting init first when there is none. Another CPU inserting
 * the same key in between is no error: its entry is used. Returns the value, or NULL with *err
 * set: the insert's error (-E2BIG: the map is full), or -ENOENT when the entry vanished at once
 * (an LRU map evicted it). */
static __always_inline void *map_lookup_or_init(void *map, const void *key, const void *init,
						int *err)
{
	void *value = bpf_map_lookup_elem(map, key);
	int ret;

	*err = 0;
	if (value)
		return value;
	ret = bpf_map_update_elem(map, key, init, BPF_NOEXIST);
	if (ret && ret != -EEXIST) {
		*err = ret;
		return NULL;
	}
	value = bpf_map_lookup_elem(map, key);
	if (!value)
		*err = -ENOENT;
	return value;
}

#endif /* SPANPROF_HELPERS_BPF_H */
