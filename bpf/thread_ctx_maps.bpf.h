/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Maps of the thread context reader, as macros: thread_ctx.bpf.c defines them, the programs
 * that read spans through thread_ctx.bpf.h declare them extern. */
#ifndef SPANPROF_THREAD_CTX_MAPS_BPF_H
#define SPANPROF_THREAD_CTX_MAPS_BPF_H

#include "spanprof_abi.h"

/* Processes that publish OpenTelemetry thread context: where the TLS slot is, which keys.
 * Written by the agent, so not preallocated (memory for the processes there are). */
#define TCTX_PROCS_MAP                                        \
	struct {                                              \
		__uint(type, BPF_MAP_TYPE_HASH);              \
		__uint(map_flags, BPF_F_NO_PREALLOC);         \
		__uint(max_entries, SPANPROF_MAX_TCTX_PROCS); \
		__type(key, __u32);                           \
		__type(value, struct tctx_proc);              \
	} tctx_procs SEC(".maps")

/* A record's attributes and the label string built from them. Too big for the stack; one
 * slot per program that reads records (TCTX_SCRATCH_SAMPLE, TCTX_SCRATCH_OFF_CPU), so a
 * program interrupted on its CPU by the other never sees its bytes rewritten. */
#define TCTX_SCRATCH_SAMPLE 0
#define TCTX_SCRATCH_OFF_CPU 1
/* Attribute bytes are indexed with `& TCTX_ATTRS_MASK`; the tail room keeps a value of up to
 * 255 bytes that starts anywhere below the mask inside the buffer. */
#define TCTX_ATTRS_MASK 1023
#define TCTX_OUT_MASK 255
struct tctx_scratch {
	__u8 attrs[TCTX_ATTRS_MASK + 1 + 256];
	char out[2 * (TCTX_OUT_MASK + 1)];
};
#define TCTX_SCRATCH_MAP                                 \
	struct {                                         \
		__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY); \
		__uint(max_entries, 2);                  \
		__type(key, __u32);                      \
		__type(value, struct tctx_scratch);      \
	} tctx_scratch SEC(".maps")

/* OBI's map as OBI creates it (a pinned LRU hash keyed by pid_tgid), held in slot 0 of this
 * array once the agent has found it pinned; empty until then. */
#define OBI_TRACES_ENTRIES 16384
struct obi_traces_inner {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, OBI_TRACES_ENTRIES);
	__uint(key_size, sizeof(__u64));
	__uint(value_size, sizeof(struct obi_trace_ctx));
};
#define OBI_TRACES_MAP                                    \
	struct {                                          \
		__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS); \
		__uint(max_entries, 1);                   \
		__type(key, __u32);                       \
		__array(values, struct obi_traces_inner); \
	} obi_traces SEC(".maps")

#endif /* SPANPROF_THREAD_CTX_MAPS_BPF_H */
