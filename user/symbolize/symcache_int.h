/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The symbol cache's internals, shared by symcache.c (lookups, snapshots, LRUs) and
 * symcache_load.c (loads of untrusted files within the load and DWARF budgets). */
#ifndef SPANPROF_SYMCACHE_INT_H
#define SPANPROF_SYMCACHE_INT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "discover/proc_maps.h"
#include "symbolize/addr_cache.h"
#include "symbolize/elf_syms.h"
#include "symbolize/load_budget.h"
#include "symbolize/perf_map.h"
#include "symbolize/symcache.h"
#include "symbolize/symcache_kernel.h"
#include "util/lru.h"

struct sc_module {
	struct lru_node node; /* key: (dev, inode) */
	struct elf_syms *es; /* NULL: the file is not usable ELF; remembered so we ask once */
	size_t bytes;
	size_t dwarf_bytes; /* accounted against limits.max_dwarf_bytes while DWARF is loaded */
	uint64_t last_used_ns;
	uint64_t round; /* the drain round it was last opened or looked up in */
	int tables_refused; /* its tables alone would pass the symbol budget: not read */
	size_t tables_need; /* elf_syms_tables_estimate(), asked once per change of bytes */
	int tables_need_known;
};

/* What a snapshot learnt about one mapping, parallel to proc_maps.maps. */
struct sc_mapinfo {
	char *build_id; /* recorded when opened, to recognise the file later by path */
	int failed; /* opening failed once: don't retry (or log) for every frame */
};

/* What tells a perf map file changed: another file, a size or a modification time. */
struct sc_file_id {
	uint64_t dev, ino, size, mtime_ns;
};

/* A perf map is read whole at most once per this interval per process (a new file, or one
 * rewritten rather than appended to); appended lines are read at every refresh. */
#define SC_PERF_MAP_FULL_READ_NS (10ull * 1000000000ull)

struct sc_pid {
	struct lru_node node; /* key: (pid, 0) */
	struct proc_maps maps;
	struct sc_mapinfo *info;
	uint64_t taken_ns;
	struct perf_map *jit;
	uint64_t jit_loaded_ns; /* 0: never tried */
	struct sc_file_id jit_file; /* the perf map file jit was read from, as last seen */
	uint64_t jit_full_ns; /* when it was last read whole (the per-process budget) */
};

struct symcache {
	struct symcache_limits lim; /* strings owned */
	struct lru modules, pids;
	size_t module_bytes;
	struct symcache_kernel kernel;
	struct addr_cache *addrs; /* symbolized addresses, so idle modules can be closed */
	struct load_budget budget;
	uint64_t round; /* drain rounds begun (symcache_new_round) */
	struct symcache_stats st;
};

/* (Re-)reads pid's perf map into p->jit (now_ns: when, for the refresh interval): only a regular
 * file of the process's owner, no symlinks, within the byte and line caps and the round's load
 * budget (refusals and caps are counted and logged). An unchanged file (device, inode, size,
 * modification time) is not read again; one that grew is read from where the last read ended;
 * any other change is read whole at most once per SC_PERF_MAP_FULL_READ_NS. Skips are counted. */
void symcache_load_jit(struct symcache *sc, struct sc_pid *p, pid_t pid, uint64_t now_ns);

/* Loads m's DWARF when it fits the DWARF budget, and accounts for it. Returns 1 when loaded, 0
 * when not (a refusal for size is counted and logged). The caller holds the round's load budget
 * and makes room first. */
int symcache_load_dwarf(struct symcache *sc, struct sc_module *m);

#endif /* SPANPROF_SYMCACHE_INT_H */
