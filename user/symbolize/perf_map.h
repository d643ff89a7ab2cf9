/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* JIT symbol maps (/tmp/perf-PID.map, "START SIZE name" in hex), also read inside containers. */
#ifndef SPANPROF_PERF_MAP_H
#define SPANPROF_PERF_MAP_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Files with more entries than this are cut off (the first ones are kept) to bound memory. */
#define PERF_MAP_MAX_ENTRIES (1u << 20)

struct perf_map;

/* Loads a perf map file. Malformed lines are skipped. When two entries start at the same
 * address the later one wins (JITs reuse code memory). Returns NULL and sets errno (ENOENT when
 * there is no file, ENOMEM). */
struct perf_map *perf_map_new(const char *path);

/* NULL-safe. */
void perf_map_free(struct perf_map *pm);

/* The name of the entry containing addr (owned by pm), or NULL. *start and *size get the entry's
 * range when not NULL. */
const char *perf_map_find(const struct perf_map *pm, uint64_t addr, uint64_t *start,
			  uint64_t *size);

size_t perf_map_count(const struct perf_map *pm);

/* The pid of the process in its innermost pid namespace (last "NSpid:" field of
 * <proc_root>/PID/status), which is the number a containerized JIT puts in its file name.
 * Returns the pid, or -errno (-ENOENT when the process is gone). Returns pid itself when the
 * kernel has no NSpid line. */
int perf_map_nspid(const char *proc_root, pid_t pid);

/* Builds the path of pid's perf map as seen from the host: <proc_root>/PID/root<dir>/perf-NSPID.map
 * ("dir" normally "/tmp"). Returns 0, -ENAMETOOLONG, or the error of perf_map_nspid(). */
int perf_map_path(const char *proc_root, const char *dir, pid_t pid, char *buf, size_t len);

#endif /* SPANPROF_PERF_MAP_H */
