/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Map definitions as macros: the file that writes a map defines it, readers declare it `extern`,
 * and both expand the same macro so the definitions cannot drift apart. */
#ifndef SPANPROF_MAPS_BPF_H
#define SPANPROF_MAPS_BPF_H

#include "spanprof_abi.h"

/* Per-thread span context, freed by the kernel with the task: a reused thread id starts empty. */
#define THREAD_SPANS_MAP                                 \
	struct {                                         \
		__uint(type, BPF_MAP_TYPE_TASK_STORAGE); \
		__uint(map_flags, BPF_F_NO_PREALLOC);    \
		__type(key, int);                        \
		__type(value, struct thread_span);       \
	} thread_spans SEC(".maps")

/* Span of each goroutine of Go processes (see struct goroutine_key), with the goid of the
 * goroutine that set it. LRU: the entry of a g the runtime freed is eventually evicted rather than
 * filling the map (a g it reuses overwrites its entry at the new goroutine's first span). An LRU
 * hash is preallocated whole, so the map starts small and the agent replaces it with one twice as
 * big when it is three quarters full (user/agent/map_grow.h), up to --go-span-map-entries: the
 * programs find the current one in slot 0 of goroutine_spans (goroutine_spans_of()). */
struct goroutine_spans_map {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, SPANPROF_GOROUTINES_START);
	/* Sizes, not types: a program that only declares the map extern carries no BTF of them. */
	__uint(key_size, sizeof(struct goroutine_key));
	__uint(value_size, sizeof(struct goroutine_span));
};
#define GOROUTINE_SPANS_MAP                                  \
	struct {                                             \
		__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);    \
		__uint(max_entries, 1);                      \
		__type(key, __u32);                          \
		__array(values, struct goroutine_spans_map); \
	} goroutine_spans SEC(".maps")
/* The current goroutine span map; NULL before the agent put one in (no Go span is kept then). */
#define goroutine_spans_of()                                    \
	({                                                      \
		__u32 __zero = 0;                               \
		bpf_map_lookup_elem(&goroutine_spans, &__zero); \
	})

/* Span names by id (struct span_ctx.name_id), written by the span hook when it meets a name
 * the map does not hold, and by the sampler for a Go goroutine's span_name pprof label; read by
 * the agent when it labels samples. LRU: a name no hook call or sample refreshed for long is the
 * one evicted. */
#define SPAN_NAMES_MAP                                        \
	struct {                                              \
		__uint(type, BPF_MAP_TYPE_LRU_HASH);          \
		__uint(max_entries, SPANPROF_MAX_SPAN_NAMES); \
		__type(key, __u64);                           \
		__type(value, struct span_name);              \
	} span_names SEC(".maps")

/* What each user (each process, for root) spent of its budgets this second (struct user_budget,
 * user_budget.bpf.h): defined by the span hook; the sampler and the sched_switch program charge
 * the span names they intern to it too. */
#define USER_BUDGETS_MAP                                        \
	struct {                                                \
		__uint(type, BPF_MAP_TYPE_LRU_HASH);            \
		__uint(max_entries, SPANPROF_MAX_BUDGET_USERS); \
		__type(key, __u64);                             \
		__type(value, struct user_budget);              \
	} user_budgets SEC(".maps")

/* Go processes (with the Go hook, or a known runtime whose pprof labels can be read): their
 * samples look spans up by goroutine. Written by the agent, so not preallocated (memory for the
 * Go processes there are). */
#define GO_PIDS_MAP                                        \
	struct {                                           \
		__uint(type, BPF_MAP_TYPE_HASH);           \
		__uint(map_flags, BPF_F_NO_PREALLOC);      \
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

/* The processes named with --pid (filled by the agent before attaching; empty without --pid). */
#define SPANPROF_MAX_TARGET_PIDS 1024
#define TARGET_PIDS_MAP                                        \
	struct {                                               \
		__uint(type, BPF_MAP_TYPE_HASH);               \
		__uint(max_entries, SPANPROF_MAX_TARGET_PIDS); \
		__type(key, __u32);                            \
		__type(value, __u8);                           \
	} target_pids SEC(".maps")

/* Interpreter stacks (struct interp_stack: CPython or CRuby frames) of a window slot, by hash;
 * python_frames.bpf.c defines both slots, ruby_frames.bpf.c declares them. Not preallocated:
 * the kernel holds memory for the stacks a window has, not for max_entries 1.5 KiB values. */
#define INTERP_STACK_MAP(name)                                       \
	struct {                                                     \
		__uint(type, BPF_MAP_TYPE_HASH);                     \
		__uint(map_flags, BPF_F_NO_PREALLOC);                \
		__uint(max_entries, SPANPROF_DEFAULT_INTERP_STACKS); \
		__type(key, __u64);                                  \
		__type(value, struct interp_stack);                  \
	} name SEC(".maps")
/* The same for off-CPU stacks: allocated as used, as most windows hold few waits. */
#define OFF_CPU_INTERP_STACK_MAP(name)                               \
	struct {                                                     \
		__uint(type, BPF_MAP_TYPE_HASH);                     \
		__uint(map_flags, BPF_F_NO_PREALLOC);                \
		__uint(max_entries, SPANPROF_OFF_CPU_INTERP_STACKS); \
		__type(key, __u64);                                  \
		__type(value, struct interp_stack);                  \
	} name SEC(".maps")

/* The CFI tables of each file (user/unwind/), written by the agent: the rows in 32 KiB chunks,
 * the interned rules, each file's list of chunks, and each process's executable mappings. Only
 * processes whose mappings the agent has published are unwound with CFI; the others keep the
 * frame-pointer stack of bpf_get_stack. Defined in unwind_tables.bpf.c. */
#define UNWIND_CHUNKS_MAP                                                                  \
	struct {                                                                           \
		__uint(type, BPF_MAP_TYPE_HASH);                                           \
		__uint(map_flags, BPF_F_NO_PREALLOC);                                      \
		__uint(max_entries, 1); /* set from the table memory budget before load */ \
		__type(key, __u32);                                                        \
		__type(value, struct spanprof_unwind_chunk);                               \
	} unwind_chunks SEC(".maps")
#define UNWIND_RULES_MAP                                        \
	struct {                                                \
		__uint(type, BPF_MAP_TYPE_ARRAY);               \
		__uint(max_entries, SPANPROF_UNWIND_MAX_RULES); \
		__type(key, __u32);                             \
		__type(value, struct spanprof_unwind_rule);     \
	} unwind_rules SEC(".maps")
#define UNWIND_TABLES_MAP                                        \
	struct {                                                 \
		__uint(type, BPF_MAP_TYPE_HASH);                 \
		__uint(map_flags, BPF_F_NO_PREALLOC);            \
		__uint(max_entries, SPANPROF_UNWIND_MAX_TABLES); \
		__type(key, __u32);                              \
		__type(value, struct spanprof_unwind_table);     \
	} unwind_tables SEC(".maps")
#define UNWIND_PROCS_MAP                                                                \
	struct {                                                                        \
		__uint(type, BPF_MAP_TYPE_HASH);                                        \
		__uint(map_flags, BPF_F_NO_PREALLOC);                                   \
		__uint(max_entries, 4096); /* the agent sets it to its process limit */ \
		__type(key, __u32);                                                     \
		__type(value, struct spanprof_unwind_proc);                             \
	} unwind_procs SEC(".maps")

/* The stacks of each window (kernel, frame-pointer and CFI-unwound user stacks), keyed by a hash
 * of the frames (the sample key names them); each program that takes stacks defines its own
 * pair. Not preallocated: the kernel holds memory for the stacks a window has. */
#define STACKS_MAP(name)                                      \
	struct {                                              \
		__uint(type, BPF_MAP_TYPE_HASH);              \
		__uint(map_flags, BPF_F_NO_PREALLOC);         \
		__uint(max_entries, SPANPROF_DEFAULT_STACKS); \
		__type(key, __u64);                           \
		__type(value, struct spanprof_user_stack);    \
	} name SEC(".maps")

/* Window slot's interpreter stack maps, for CPU samples and for off-CPU stacks. */
#define INTERP_STACKS_OF(slot) ((slot) ? (void *)&interp_stacks_1 : (void *)&interp_stacks_0)
#define OFF_CPU_INTERP_STACKS_OF(slot) \
	((slot) ? (void *)&off_cpu_interp_stacks_1 : (void *)&off_cpu_interp_stacks_0)

/* An interpreter walk's per-CPU state (an interp_stack is too big for the 512-byte stack), one per
 * program that walks: the sampler can interrupt the off-CPU program on its CPU, so they must
 * not share one. */
#define WALK_SCRATCH_MAP(name, walk_type)                \
	struct {                                         \
		__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY); \
		__uint(max_entries, 1);                  \
		__type(key, __u32);                      \
		__type(value, walk_type);                \
	} name SEC(".maps")

/* What the kernel keeps per thread in a span for exact CPU time per span and for off-CPU
 * profiles: the span hook starts and ends a span's segment, the sched_switch program adds the
 * thread's time on and off the CPU. BPF-only: user space never reads it. */
struct span_task {
	__u64 on_cpu_ns; /* when the thread last came on the CPU (0: off it, or unknown) */
	__u64 off_since_ns; /* when it blocked (0: not blocked) */
	__u64 start_ns; /* when the current span began on this thread */
	__u64 cpu_ns; /* of the current span so far */
	__u64 off_cpu_ns;
	/* A wait of at least --off-cpu-min that ended: its time, counted under the stacks taken
	 * once the thread is back in its own context (0: none pending) */
	__u64 pending_ns;
	__u32 active; /* 1: in a span whose times are kept (the process is profiled) */
	__u32 _pad;
	struct sample_key key; /* off-CPU profile: where the current wait goes */
};

/* Freed by the kernel with the task: a thread that exits inside a span leaves no record. */
#define SPAN_TASKS_MAP                                   \
	struct {                                         \
		__uint(type, BPF_MAP_TYPE_TASK_STORAGE); \
		__uint(map_flags, BPF_F_NO_PREALLOC);    \
		__type(key, int);                        \
		__type(value, struct span_task);         \
	} span_tasks SEC(".maps")

/* Threads whose hook library (ABI version 3) registered its per-thread area: where it is, how
 * far its ring of span changes was read, and the span segment it is in. */
#define SPAN_AREAS_MAP                                   \
	struct {                                         \
		__uint(type, BPF_MAP_TYPE_TASK_STORAGE); \
		__uint(map_flags, BPF_F_NO_PREALLOC);    \
		__type(key, int);                        \
		__type(value, struct span_area);         \
	} span_areas SEC(".maps")

/* Records of ended spans (struct spanprof_span_end) for the agent. */
#define SPAN_ENDS_MAP                                          \
	struct {                                               \
		__uint(type, BPF_MAP_TYPE_RINGBUF);            \
		__uint(max_entries, SPANPROF_SPAN_ENDS_BYTES); \
	} span_ends SEC(".maps")

#endif /* SPANPROF_MAPS_BPF_H */
