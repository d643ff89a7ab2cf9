/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Private to unwind_files*.c: the registry's records and the calls between its files. */
#ifndef SPANPROF_UNWIND_FILES_INT_H
#define SPANPROF_UNWIND_FILES_INT_H

#include <stdint.h>
#include <sys/types.h>

#include "unwind/unwind_files.h"
#include "util/lru.h"

#define MAX_SEGS 16
/* Key tags (k1's top bits) so build ids, device/inode pairs and the vDSO never collide. */
#define KEY_DEVINO (1ull << 63)
#define KEY_VDSO (1ull << 62)
#define VDSO_PATH "[vdso]"

struct seg {
	uint64_t vaddr, offset, filesz;
};

struct alias;

struct file {
	/* By build id, or the alias's key when the file has none. Recency: the last window in which
	 * a process using its table was sampled (or its table was stored). */
	struct lru_node node;
	enum unwind_file_state state;
	uint64_t evicted_ns; /* EVICTED: when */
	uint64_t sampled_ns; /* last noted in a sampled process (0: never) */
	uid_t uid; /* real uid of the process that mapped it first: whose share it counts in */
	uint32_t chunks; /* READY: chunks its table holds */
	char *path; /* as first mapped, for logs */
	uint32_t table, gen;
	struct seg segs[MAX_SEGS];
	unsigned int nsegs;
	struct alias *aliases;
};

/* A device/inode pair under which a file was seen (a container's copy has its own). */
struct alias {
	struct lru_node node;
	struct file *file;
	struct alias *next;
};

struct unwind_files {
	struct unwind_files_options opts;
	struct lru files; /* recency: see struct file */
	struct lru aliases; /* (dev, inode) -> file */
	/* Table slot -> the file whose table it holds or last held (EVICTED), so that samples
	 * can be traced to files. */
	struct file *by_table[SPANPROF_UNWIND_MAX_TABLES];
	struct unwind_files_stats stats;
};

/* Removes f (its aliases, its table from the maps) and frees it (unwind_files_entry.c). */
void unwind_files_drop_file(struct unwind_files *fs, struct file *f);
/* Moves f to state s, keeping the per-state counts. */
void unwind_files_set_state(struct unwind_files *fs, struct file *f, enum unwind_file_state s);

/* First sight of m's (dev, inode) in pid: opens the file, finds it by build id or adds it and
 * queues its build. NULL when it cannot be read (or memory ran out). */
struct file *unwind_files_open_file(struct unwind_files *fs, pid_t pid, const struct proc_map *m);
/* The vDSO's file, added and queued from our own copy on first use; NULL if there is none. */
struct file *unwind_files_vdso(struct unwind_files *fs);

/* Makes room in the BPF maps for a table of `want` (a file of uid): the least recently sampled
 * table of the user holding the most goes, and its file is remembered as evicted; a user
 * already at its share (the budget divided among the users holding tables) only evicts its own
 * tables. Returns 0, -ENOSPC (no table to evict) or -EDQUOT (uid at its share, none of its
 * own to evict). */
int unwind_files_evict_for(struct unwind_files *fs, const struct file *want);

#endif /* SPANPROF_UNWIND_FILES_INT_H */
