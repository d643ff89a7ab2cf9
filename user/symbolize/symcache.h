/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Bounded symbolization cache: user addresses through a process's mappings and ELF/DWARF (by
 * (device, inode) and build id), JIT perf maps, and kernel addresses through /proc/kallsyms. */
#ifndef SPANPROF_SYMCACHE_H
#define SPANPROF_SYMCACHE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "discover/proc_maps.h"
#include "util/frame.h"

/* Symbolized addresses kept (per file and offset) unless symcache_limits.max_addrs says. */
#define SYMCACHE_DEFAULT_ADDRS 16384

struct symcache_limits {
	size_t max_modules; /* ELF files kept open (LRU); >= 1 */
	size_t max_pids; /* per-process mapping snapshots kept (LRU); >= 1 */
	size_t max_bytes; /* symbol tables of all modules together (elf_syms_size), at every
			   * moment: before a file is opened or its tables read, least recently
			   * used modules not used in this round are closed to make room; when
			   * this round's fill it, the frame waits for a later round, and a file
			   * whose tables alone pass it is symbolized without them. 0: no cap */
	size_t max_addrs; /* symbolized addresses cached; 0: SYMCACHE_DEFAULT_ADDRS */
	const char *proc_root; /* normally "/proc"; tests may point elsewhere */
	const char *debug_root; /* normally "/usr/lib/debug" (build-id and debuglink lookups) */
	const char *kallsyms_path; /* normally "/proc/kallsyms" */
	const char *perf_map_dir; /* normally "/tmp" (perf-PID.map) */
	size_t perf_map_max_bytes; /* read of one perf map at most; 0: PERF_MAP_DEFAULT_MAX_BYTES */
	size_t perf_map_max_lines; /* ... and lines; 0: PERF_MAP_DEFAULT_MAX_LINES */
	size_t perf_map_budget; /* heap for perf maps, all processes together; a map that
				  * would go beyond it is not kept (counted). 0: no budget */
	size_t max_dwarf_bytes; /* DWARF (decompressed debug sections) held by all modules
				    * together; least recently used modules are closed beyond it
				    * and a module with more is symbolized from its symbol table.
				    * 0: SYMCACHE_DEFAULT_DWARF_BYTES */
	uint64_t load_budget_ns; /* time for file loads per round (symcache_new_round());
				    * 0: LOAD_BUDGET_DEFAULT_NS */
};

/* Default DWARF memory budget: small enough for the agent's 30 MB RSS target. */
#define SYMCACHE_DEFAULT_DWARF_BYTES (8ull << 20)

struct symcache_stats {
	uint64_t hits, misses; /* address lookups answered from / not from cache */
	uint64_t modules, pids; /* entries cached now */
	uint64_t evictions;
	uint64_t errors; /* malformed ELF, unreadable files, ... (each also logged) */
	uint64_t perf_maps_refused; /* perf maps not read: symlink, FIFO/device, foreign owner */
	uint64_t perf_maps_capped; /* perf maps cut short by the byte or line cap */
	uint64_t perf_map_rereads_skipped; /* misses not re-read: map unchanged, or budget spent */
	uint64_t sections_refused; /* files or sections over a stated maximum (elf_section.h) */
	uint64_t loads_deferred; /* loads put off to a later round (load budget spent) */
	uint64_t load_overruns; /* single loads longer than a round's whole budget */
	uint64_t dwarf_refused; /* modules symbolized without DWARF: larger than the budget */
	uint64_t dwarf_evictions; /* modules closed to keep DWARF within the budget */
	uint64_t dwarf_bytes; /* DWARF bytes held now */
	uint64_t kernel_symbol_bytes; /* the kernel symbol table's heap bytes */
	uint64_t perf_map_bytes; /* heap held by perf maps now */
	uint64_t symbol_bytes; /* heap held by the modules' symbol tables now */
	uint64_t symbol_evictions; /* modules closed to keep symbol tables within max_bytes */
	uint64_t symbol_deferred; /* opens and table reads put off: this round's tables fill it */
	uint64_t symbol_refused; /* modules whose tables alone pass max_bytes: not read */
	uint64_t perf_maps_over_budget; /* perf maps read but not kept: beyond perf_map_budget */
};

/* Creates a cache. Returns NULL and sets errno on failure. */
struct symcache *symcache_new(const struct symcache_limits *limits);
/* NULL-safe. */
void symcache_free(struct symcache *sc);

/* Reads (or re-reads) /proc/PID/maps and opens the ELF files it maps while the process is alive,
 * so frames of a process that has exited can still be symbolized later. Returns 0 or -errno
 * (-ENOENT/-ESRCH: process gone; its previous snapshot, if any, is kept). */
int symcache_snapshot_pid(struct symcache *sc, pid_t pid);

/* Snapshots pid only when the cache holds none for it: called for a window's processes before
 * its samples are symbolized, so a sample in hand finds its process read. Returns 0 or -errno as
 * symcache_snapshot_pid(). */
int symcache_prepare_pid(struct symcache *sc, pid_t pid);

/* Forgets a process's snapshot (after it exited and its last samples were written). */
void symcache_forget_pid(struct symcache *sc, pid_t pid);

/* Symbolizes a user address of pid; takes a snapshot first when there is none. Never fails:
 * on any error the frame is returned unsymbolized (nlines == 0), with the mapping if known. */
void symcache_resolve_user(struct symcache *sc, pid_t pid, uint64_t addr, struct sym_frame *out);

/* Symbolizes a kernel address through kallsyms (loaded lazily, reloaded when modules change). */
void symcache_resolve_kernel(struct symcache *sc, uint64_t addr, struct sym_frame *out);

/* Closes ELF modules that were looked up (their DWARF loaded, or refused by the DWARF budget)
 * and that no lookup needed for idle_ns: their addresses stay answered from the address cache,
 * and libdw's decompressed debug sections (tens of MB for a libc) or copied symbol tables go
 * back to the system. A later miss reopens the file. */
void symcache_release_idle(struct symcache *sc, uint64_t idle_ns);

/* Starts a new round of the load budget (call once per drain): loads of ELF, DWARF and perf
 * maps may again take up to limits.load_budget_ns until the next call. Frames whose file could
 * not be loaded within the budget are returned unsymbolized (module + offset), not cached, and
 * counted in loads_deferred; a later round symbolizes them. */
void symcache_new_round(struct symcache *sc);

void symcache_get_stats(const struct symcache *sc, struct symcache_stats *out);

#endif /* SPANPROF_SYMCACHE_H */
