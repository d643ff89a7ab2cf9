/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* JIT symbol maps (/tmp/perf-PID.map, "START SIZE name" in hex), also read inside containers. */
#ifndef SPANPROF_PERF_MAP_H
#define SPANPROF_PERF_MAP_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Default caps on what is read of one perf map (the process writes it: untrusted input). */
#define PERF_MAP_DEFAULT_MAX_BYTES (16u << 20)
#define PERF_MAP_DEFAULT_MAX_LINES (256u << 10)
/* Longer lines are skipped (a JIT's symbol names are far shorter). */
#define PERF_MAP_MAX_LINE 4096

struct perf_map;

struct perf_map_limits {
	size_t max_bytes; /* stop reading after this many bytes; 0: PERF_MAP_DEFAULT_MAX_BYTES */
	size_t max_lines; /* ... or this many lines; 0: PERF_MAP_DEFAULT_MAX_LINES */
};

/* Reads a perf map from fd (not closed; the caller opened it safely, see proc_file.h), at most
 * lim's bytes and lines (lim may be NULL: defaults); what comes after a cap is ignored and
 * *capped (may be NULL) set to 1. Malformed and over-long lines are skipped. When two entries
 * start at the same address the later one wins (JITs reuse code memory). Returns NULL and sets
 * errno (ENOMEM, or read()'s error). */
struct perf_map *perf_map_read_fd(int fd, const struct perf_map_limits *lim, int *capped);

/* Reads the lines appended to the file since pm was read (from perf_map_offset(pm): the end of
 * its last newline-terminated line) into pm, within lim's caps counted over the whole map; the
 * later of two entries at one address still wins. Costs the new bytes plus one merge, not a
 * re-read. Returns 0 (*capped as above), -ENOSPC without reading when pm already holds the
 * caps' worth, or -errno (pm keeps what it had, maybe some new entries). */
int perf_map_append_fd(struct perf_map *pm, int fd, const struct perf_map_limits *lim, int *capped);

/* File offset where the next perf_map_append_fd() starts. */
uint64_t perf_map_offset(const struct perf_map *pm);

/* Opens path as a regular file, no symlinks, without blocking (proc_file_open()) and reads it
 * with the default limits. Returns NULL and sets errno (ENOENT when there is no file, ELOOP for
 * a symlink, EINVAL for a FIFO or device, ENOMEM). */
struct perf_map *perf_map_new(const char *path);

/* NULL-safe. */
void perf_map_free(struct perf_map *pm);

/* The name of the entry containing addr (owned by pm), or NULL. *start and *size get the entry's
 * range when not NULL. */
const char *perf_map_find(const struct perf_map *pm, uint64_t addr, uint64_t *start,
			  uint64_t *size);

size_t perf_map_count(const struct perf_map *pm);

/* Heap bytes pm holds (entries and names); 0 for NULL. */
size_t perf_map_bytes(const struct perf_map *pm);

/* The pid of the process in its innermost pid namespace (last "NSpid:" field of
 * <proc_root>/PID/status), which is the number a containerized JIT puts in its file name.
 * Returns the pid, or -errno (-ENOENT when the process is gone). Returns pid itself when the
 * kernel has no NSpid line. */
int perf_map_nspid(const char *proc_root, pid_t pid);

/* Builds the path of pid's perf map as seen from the host: <proc_root>/PID/root<dir>/perf-NSPID.map
 * ("dir" normally "/tmp"). Returns 0, -ENAMETOOLONG, or the error of perf_map_nspid(). */
int perf_map_path(const char *proc_root, const char *dir, pid_t pid, char *buf, size_t len);

/* Opens pid's perf map (<dir>/perf-NSPID.map inside the process's root directory) the way the
 * process's owner would see it: resolved inside its root, no symlink anywhere, a regular file
 * owned by the process's real or effective uid, never blocking. Returns the fd, or -errno:
 * -ENOENT (no file or process), -ELOOP (a symlink), -EINVAL (FIFO, device, ...), -EPERM (owned
 * by someone else). */
int perf_map_open(const char *proc_root, const char *dir, pid_t pid);

#endif /* SPANPROF_PERF_MAP_H */
