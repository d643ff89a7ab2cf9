/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Native unwinding, the agent's side: for each profiled process, publishes its executable
 * mappings (anonymous JIT code too, walked by frame pointer) and their files' CFI tables to the BPF
 * unwinder (bpf/unwind_native.bpf.h), building tables on a worker thread and keeping their memory
 * within a budget. */
#ifndef SPANPROF_UNWIND_H
#define SPANPROF_UNWIND_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "discover/proc_maps.h"
#include "unwind/unwind_files.h"
#include "unwind/unwind_store.h"

struct unwind_options {
	struct unwind_store_fds fds;
	int procs_fd; /* HASH pid -> struct spanprof_unwind_proc */
	uint32_t nchunks; /* size of the chunks map: the table memory budget / chunk size */
	size_t max_pids; /* processes published at once (the procs map's size) */
	size_t max_files; /* files remembered, with or without a table */
	const char *proc_root;
	/* 1: a process's mappings are published at its first sample (unwind_note_sampled()), not
	 * when it is scanned: the procs map holds 8 KiB per process whatever it maps, and most
	 * processes of a node are idle. Its tables are built from the scan on, and its samples
	 * before that drain are unwound by frame pointer. 0: published at the scan (--pid, where
	 * every process named is expected to run). */
	int publish_on_sample;
};

struct unwind_stats {
	struct unwind_files_stats files;
	struct unwind_store_stats store;
	uint64_t pids; /* processes published */
	uint64_t
		mappings_dropped; /* file mappings beyond SPANPROF_UNWIND_MAX_MAPPINGS (per publish) */
	uint64_t anon_dropped; /* anonymous code ranges without a slot left (per publish) */
	uint64_t publish_errors; /* failed writes of a process's mappings */
};

/* Whether this architecture has the BPF unwinder (x86-64); elsewhere frame pointers only. */
#if defined(__x86_64__)
#define UNWIND_SUPPORTED 1
#else
#define UNWIND_SUPPORTED 0
#endif

/* NULL with errno (logged) on failure. The functions below accept u == NULL (unwinding off) and
 * then do nothing. */
struct unwind *unwind_new(const struct unwind_options *opts);
void unwind_free(struct unwind *u); /* NULL-safe; stops the worker */

/* (Re)publishes pid's mappings, queueing builds for files not seen before. A process whose
 * files are all resolved logs "unwind: pid N ready" at debug level. */
void unwind_scan_pid(struct unwind *u, pid_t pid, const struct proc_maps *maps);

/* Starts a drain round: unwind_note_sampled() then reads each process once per round. */
void unwind_new_round(struct unwind *u);

/* pid had samples in this round: its mappings are published if they were held for this
 * (publish_on_sample), and the files whose tables they name count as sampled now (evicted last;
 * rebuilt sooner when evicted). One map read per pid and round. */
void unwind_note_sampled(struct unwind *u, pid_t pid);

/* The process exited: its mappings leave the BPF map. */
void unwind_forget_pid(struct unwind *u, pid_t pid);

/* Stores finished tables and republishes the processes that waited for them. Cheap when
 * nothing finished. Call it when unwind_wake_fd() polls readable and by the time it returns
 * (CLOCK_MONOTONIC ns; UINT64_MAX: nothing left to do until a table finishes). */
uint64_t unwind_poll(struct unwind *u);

/* Polls readable (POLLIN) when tables have finished building; -1 when u is NULL. */
int unwind_wake_fd(const struct unwind *u);

void unwind_get_stats(const struct unwind *u, struct unwind_stats *out);

#endif /* SPANPROF_UNWIND_H */
