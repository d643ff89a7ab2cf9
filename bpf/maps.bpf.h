/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Map definitions as macros: the file that writes a map defines it, readers declare it `extern`,
 * and both expand the same macro so the definitions cannot drift apart. */
#ifndef SPANPROF_MAPS_BPF_H
#define SPANPROF_MAPS_BPF_H

#include <bpf/bpf_core_read.h>

#include "spanprof_abi.h"

/* vmlinux.h has no errno macros; these are the values BPF helpers return, negated. */
#ifndef EFAULT
#define EFAULT 14
#endif
#ifndef EEXIST
#define EEXIST 17
#endif

/* Per-thread span context, freed by the kernel with the task: a reused thread id starts empty. */
#define THREAD_SPANS_MAP                                 \
	struct {                                         \
		__uint(type, BPF_MAP_TYPE_TASK_STORAGE); \
		__uint(map_flags, BPF_F_NO_PREALLOC);    \
		__type(key, int);                        \
		__type(value, struct thread_span);       \
	} thread_spans SEC(".maps")

/* Span of each goroutine of Go processes (see struct goroutine_key). LRU: a goroutine that exits
 * inside a span is eventually evicted rather than filling the map. */
#define GOROUTINE_SPANS_MAP                                   \
	struct {                                              \
		__uint(type, BPF_MAP_TYPE_LRU_HASH);          \
		__uint(max_entries, SPANPROF_MAX_GOROUTINES); \
		__type(key, struct goroutine_key);            \
		__type(value, struct thread_span);            \
	} goroutine_spans SEC(".maps")

/* Go processes (with the Go hook, or a known runtime whose pprof labels can be read): their
 * samples look spans up by goroutine. Written by the agent. */
#define GO_PIDS_MAP                                        \
	struct {                                           \
		__uint(type, BPF_MAP_TYPE_HASH);           \
		__uint(max_entries, SPANPROF_MAX_GO_PIDS); \
		__type(key, __u32);                        \
		__type(value, struct go_proc);             \
	} go_pids SEC(".maps")

/* Drop counters by enum spanprof_drop, per CPU so the hot paths never contend. */
#define DROP_COUNTS_MAP                                    \
	struct {                                           \
		__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);   \
		__uint(max_entries, SPANPROF_DROP__COUNT); \
		__type(key, __u32);                        \
		__type(value, __u64);                      \
	} drop_counts SEC(".maps")

/* Event counters by enum spanprof_event, per CPU. */
#define EVENT_COUNTS_MAP                                    \
	struct {                                            \
		__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);    \
		__uint(max_entries, SPANPROF_EVENT__COUNT); \
		__type(key, __u32);                         \
		__type(value, __u64);                       \
	} event_counts SEC(".maps")

/* Adds one to a per-CPU counter; the array lookup cannot fail for an index below max_entries. */
static __always_inline void counter_inc(void *map, __u32 index)
{
	__u64 *value = bpf_map_lookup_elem(map, &index);

	if (value)
		*value += 1;
}

/* The running goroutine of a pure-Go amd64 program: the runtime keeps its g pointer at -8 from
 * the thread's FS base. Returns 0 or a negative error. */
static __always_inline long current_goroutine(struct task_struct *task, __u64 *g)
{
#if defined(__TARGET_ARCH_x86)
	__u64 fsbase = BPF_CORE_READ(task, thread.fsbase);

	if (!fsbase)
		return -EFAULT;
	return bpf_probe_read_user(g, sizeof(*g), (void *)(fsbase - 8));
#else
	return -EFAULT; /* goroutine tracking is x86-64 only for now */
#endif
}

#endif /* SPANPROF_MAPS_BPF_H */
