/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The only user of the BPF skeleton: opens, configures, loads and attaches spanprof's programs,
 * and hands out the maps and links the rest of the agent works with. */
#ifndef SPANPROF_LOADER_H
#define SPANPROF_LOADER_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct bpf_link;
struct ring_buffer;
struct go_proc; /* include/spanprof_abi.h */

struct loader_options {
	unsigned int frequency; /* samples per second per CPU */
	const pid_t *pids; /* only these processes (empty: all) */
	size_t npids;
	uint32_t stack_entries; /* per window stack map size (kernel, frame-pointer and CFI) */
	uint32_t count_entries; /* per window count and interpreter stack map size */
	uint32_t off_cpu_entries; /* per window off-CPU count map size (stacks: twice that) */
	/* goroutine_spans grows up to this (0: stays at SPANPROF_GOROUTINES_START) */
	uint32_t goroutine_entries;
	uint32_t span_name_entries; /* span_names (0: SPANPROF_MAX_SPAN_NAMES) */
	uint32_t pending_scan_entries; /* pending_scans (0: the object's 4096) */
	uint32_t unwind_chunks; /* row chunks for CFI tables (the table memory budget) */
	uint32_t unwind_pids; /* processes whose mappings the unwinder knows */
	int off_cpu; /* attach the sched_switch program (off-CPU profiles) */
	uint64_t off_cpu_min_ns; /* shortest off-CPU period counted */
	int off_cpu_fp; /* off-CPU stacks by frame pointer at switch-out, not full ones at resume */
	int span_times; /* with off_cpu: exact CPU and off-CPU time per span (span_ends) */
};

/* Map fds of one sampling window. */
struct loader_window {
	int counts_fd; /* struct sample_key -> __u64 */
	int stacks_fd; /* __u64 hash -> struct spanprof_user_stack (every stack the keys name) */
	int interp_stacks_fd; /* __u64 hash -> struct interp_stack */
	int names_fd; /* span name id -> struct span_name, shared by both windows; -1: none */
	/* stacks_fd is shared by both windows and outlives them: read it, do not empty it (the
	 * off-CPU stacks of frame-pointer mode, swept by age instead) */
	int shared_stacks;
};

/* Map fds of the native unwinder's tables (filled by user/unwind/). */
struct loader_unwind_maps {
	int rules, chunks, tables, procs;
};

/* Opens the skeleton, applies options, loads the programs and attaches the samplers (one
 * cpu-clock perf event per online CPU) and the process-event programs. Hooks are attached
 * separately. Returns NULL with errno set; the reason is logged (missing capability, no BTF...). */
struct loader *loader_open(const struct loader_options *opts);
void loader_close(struct loader *l); /* NULL-safe; detaches everything */

/* Makes the other window the one samples go to and returns the one to drain. Programs that
 * read the old slot may still be running: callers wait a moment before draining. */
struct loader_window loader_flip_window(struct loader *l);

/* Which program a hook site gets: the C hook keys spans by thread, the Go hook by goroutine. */
enum loader_hook_kind {
	LOADER_HOOK_C = 0,
	LOADER_HOOK_GO,
};

/* The off-CPU maps of the window loader_flip_window() just closed: counts_fd maps
 * struct sample_key -> nanoseconds; stacks_fd and interp_stacks_fd are the window's own with
 * full stacks, and in frame-pointer mode stacks_fd is the map both windows share (shared_stacks)
 * and there are no interpreter stacks (-1). All -1 when off-CPU profiles are off. */
struct loader_window loader_off_cpu_window(struct loader *l);

/* Attaches the span-set uprobe to file `path` at file offset `offset`, with the kernel-raised
 * semaphore at `ref_ctr_offset` (0: none). `cookie` is what the program reads with
 * bpf_get_attach_cookie(): for LOADER_HOOK_GO the g pointer's offset from FS base (a signed
 * value, go_tls.h), ignored for LOADER_HOOK_C. Returns the link or NULL with errno set. */
struct bpf_link *loader_attach_hook(struct loader *l, const char *path, uint64_t offset,
				    uint64_t ref_ctr_offset, enum loader_hook_kind kind,
				    uint64_t cookie);

/* Marks pid as a Go process (its samples look spans up by goroutine, then in the goroutine's
 * pprof labels as go says) or, with go NULL, unmarks it.
 * Returns 0 or -errno (-E2BIG: too many Go processes). */
int loader_set_go_pid(struct loader *l, pid_t pid, const struct go_proc *go);

struct py_proc_info;
/* Tells the sampler how to read pid's CPython frames (info), or to stop (info NULL). Returns 0
 * or -errno (-E2BIG: py_procs is full; deleting an absent pid is no error). */
int loader_set_py_proc(struct loader *l, pid_t pid, const struct py_proc_info *info);

struct rb_proc_info;
/* The same for pid's CRuby frames. Returns 0 or -errno (-E2BIG: rb_procs is full). */
int loader_set_rb_proc(struct loader *l, pid_t pid, const struct rb_proc_info *info);

struct tctx_proc;
/* Tells the sampler where pid keeps its OpenTelemetry thread context (NULL: it has none). */
int loader_set_tctx_proc(struct loader *l, pid_t pid, const struct tctx_proc *info);
/* What the sampler holds for pid (its rescan flag set on an unknown key). 0 or -errno. */
int loader_get_tctx_proc(struct loader *l, pid_t pid, struct tctx_proc *out);
/* Makes the sampler read OBI's map (an fd of it, checked by the caller). 0 or -errno. */
int loader_set_obi_map(struct loader *l, int map_fd);

/* Ring buffer of struct spanprof_proc_event; `fn` is called for each. Owned by the caller
 * (ring_buffer__free). */
typedef int (*loader_event_fn)(void *ctx, void *data, size_t size);
struct ring_buffer *loader_proc_events(struct loader *l, loader_event_fn fn, void *ctx);

/* Adds the span_ends ring buffer (struct spanprof_span_end records) to rb, calling fn for each
 * record. Returns 0 or -errno. */
int loader_add_span_ends(struct loader *l, struct ring_buffer *rb, loader_event_fn fn, void *ctx);

/* The span_names map (u64 name id -> struct span_name). */
int loader_span_names_fd(struct loader *l);

/* Forgets a pending rescan request so the next exec/mmap of pid raises a new event. */
void loader_scan_done(struct loader *l, pid_t pid);

/* 1 when the optional code-mapping events (mmap and mprotect with PROT_EXEC) are attached: then
 * every change a rescan would find in a process raises an event. */
int loader_code_events_attached(const struct loader *l);

struct loader_unwind_maps loader_unwind_maps(struct loader *l);

/* The fd of the program a hook of this kind runs (for its run-time statistics). */
int loader_hook_prog_fd(struct loader *l, enum loader_hook_kind kind);

/* The fd of the program the BPF object calls name (on_sched_switch...), for its run-time
 * statistics (the benchmarks use it to tell two agents' programs apart; the agent does not);
 * below 0 when there is none or it was not loaded (an option left it out). */
int loader_prog_fd(struct loader *l, const char *name);

/* BPF maps by what they hold, for the memory they cost. A map no group names (one added later)
 * is counted in LOADER_MAPS_OTHER, so the sum always covers every map. */
enum loader_map_group {
	LOADER_MAPS_WINDOWS = 0, /* sample counts and stacks of the two windows */
	LOADER_MAPS_UNWIND, /* CFI chunks, tables, rules, process mappings */
	LOADER_MAPS_SPANS, /* thread and goroutine spans, span names, span times */
	LOADER_MAPS_OFF_CPU, /* off-CPU stacks and counts */
	LOADER_MAPS_PROCESSES, /* process events, per-process settings, --pid filter */
	LOADER_MAPS_OTHER, /* scratch, counters, globals */
	LOADER_MAPS__COUNT,
};

/* Kernel memory of every map the programs use (memlock in /proc/self/fdinfo), summed by group
 * into out[LOADER_MAPS__COUNT]. Returns 0 or -errno (a map's fdinfo unreadable: out holds the
 * maps read before it). */
int loader_map_memory(struct loader *l, uint64_t *out);

/* One BPF map as the programs would create it: what bounds its kernel memory. */
struct loader_map_bound {
	char name[64];
	uint32_t type; /* enum bpf_map_type */
	uint32_t key_size, value_size, max_entries, flags;
};

/* The maps of the BPF object configured for opts, read without loading it (no privileges
 * needed), goroutine_spans' inner map at its limit among them, into out (at most max). Returns
 * how many there are (more than max: only max filled), or -errno. */
int loader_map_bounds(const struct loader_options *opts, struct loader_map_bound *out, size_t max);

/* Sums the per-CPU counters: out[i] for enum spanprof_drop / enum spanprof_event. */
int loader_read_drops(struct loader *l, uint64_t *out, size_t n);
int loader_read_events(struct loader *l, uint64_t *out, size_t n);

/* A map that grows with what it holds: its entries at the last check, its size, the size it
 * stops at, how many times it was replaced by a bigger one, and how many checks found it at
 * its limit and three quarters full. */
struct loader_map_use {
	uint32_t entries, capacity, limit;
	uint64_t grown, full;
};

/* Grows the maps that start small (goroutine_spans, map_grow.h) when they fill, and tells how
 * full they are. Returns 1 when one grew, 0, or -errno (logged; the map stays as it is). */
int loader_grow_maps(struct loader *l, struct loader_map_use *goroutines);

#endif /* SPANPROF_LOADER_H */
