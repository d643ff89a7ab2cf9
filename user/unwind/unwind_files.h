/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The node-wide cache of unwind tables, one per ELF file: keyed by build id (else device and
 * inode), shared by every process that maps the file, in or out of containers. Misses are built
 * by the worker thread; finished tables go into the BPF maps within a memory budget shared
 * fairly between users (the uid of the process that mapped a file first): room is made by
 * evicting the least recently sampled table of the user holding the most, and a user at its
 * share evicts only its own. An evicted file is not rebuilt before UNWIND_EVICTED_RETRY_S
 * (UNWIND_SAMPLED_RETRY_S when sampled since), so a budget too small for the node cannot turn
 * into a rebuild loop. */
#ifndef SPANPROF_UNWIND_FILES_H
#define SPANPROF_UNWIND_FILES_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "discover/proc_maps.h"
#include "unwind/unwind_store.h"
#include "unwind/unwind_worker.h"

enum unwind_file_state {
	UNWIND_FILE_PENDING = 0, /* being built */
	UNWIND_FILE_READY, /* table in the BPF maps */
	UNWIND_FILE_NOCFI, /* no CFI at all: frame pointers */
	UNWIND_FILE_FAILED, /* unreadable, too big, or no room: frame pointers */
	UNWIND_FILE_EVICTED, /* table evicted for room: frame pointers, rebuilt after a while */
	UNWIND_FILE__COUNT,
};

#define UNWIND_EVICTED_RETRY_S 600
#define UNWIND_SAMPLED_RETRY_S 30

struct unwind_files_options {
	struct unwind_store *store; /* not owned */
	struct unwind_worker *worker; /* not owned */
	const char *proc_root;
	size_t max_files; /* entries kept, of any state */
};

struct unwind_files_stats {
	uint64_t files[UNWIND_FILE__COUNT]; /* by enum unwind_file_state */
	uint64_t built; /* tables built */
	uint64_t evicted; /* tables evicted for room (LRU) */
	uint64_t fair_refused; /* tables not stored: their user held its share of the budget */
	uint64_t build_us; /* time spent building tables (worker thread) */
	uint64_t text_bytes; /* executable bytes of the files built */
	uint64_t rows; /* rows of the tables built */
	uint64_t budget_spent; /* builds abandoned over their step or time budget (cfi_table.h) */
	uint64_t oversized; /* files whose CFI section or headers are over their stated maximum */
};

/* What a mapping resolves to. */
struct unwind_file_ref {
	enum unwind_file_state state;
	uint32_t table, gen; /* READY only */
	uint64_t bias; /* address - bias = the file's virtual address */
	uint64_t key[2]; /* names the file for unwind_files_pending() */
};

struct unwind_files *unwind_files_new(const struct unwind_files_options *opts);
void unwind_files_free(struct unwind_files *fs); /* NULL-safe */

/* Resolves executable mapping m of pid, opening the file the first time its device and inode
 * are seen and queueing its table build. Returns 0, or -errno when the file cannot be opened or
 * is not an ELF file we can place (the caller walks frame pointers there). */
int unwind_files_resolve(struct unwind_files *fs, pid_t pid, const struct proc_map *m,
			 struct unwind_file_ref *out);

/* A sampled process uses table (of generation gen, as its published mappings say): its file
 * becomes the most recently sampled, or, evicted, due for a rebuild sooner. */
void unwind_files_note_sampled(struct unwind_files *fs, uint32_t table, uint32_t gen);

/* 1 while the file a unwind_file_ref's key names still waits for its table; 0 once it is
 * ready, failed, evicted or forgotten. A hash lookup: no file or /proc read. */
int unwind_files_pending(const struct unwind_files *fs, const uint64_t key[2]);

/* Stores the tables the worker finished. Returns how many builds ended (ready or not). */
size_t unwind_files_poll(struct unwind_files *fs);

void unwind_files_get_stats(const struct unwind_files *fs, struct unwind_files_stats *out);

#endif /* SPANPROF_UNWIND_FILES_H */
