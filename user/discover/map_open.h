/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Opens the file behind one mapping of a (possibly containerized) process without blocking or
 * following symlinks, and says whether it is the very file the process mapped. Shared by the
 * unwinder and the symbolizer, which both read the files processes map. */
#ifndef SPANPROF_MAP_OPEN_H
#define SPANPROF_MAP_OPEN_H

#include <sys/types.h>

#include "discover/proc_maps.h"

/* 1 when path ends in " (deleted)", as /proc/PID/maps shows an unlinked file. */
int map_open_is_deleted(const char *path);

/* Opens path (inside root when not NULL) as a regular file without blocking on a FIFO or
 * following a final symlink (proc_file_open() with flags); *same tells whether its device and
 * inode are the mapping's. Returns the fd (O_CLOEXEC) or -1. */
int map_open_candidate(const char *root, const char *path, unsigned int flags,
		       const struct proc_map *map, int *same);

/* The /proc candidates for map: <proc_root>/PID/root<path> (skipped for deleted files), then
 * <proc_root>/PID/map_files/<start>-<end>. One whose device and inode match wins; else the first
 * that opened (overlayfs reports other numbers than the kernel's maps). Returns the fd or -1. */
int map_open_from_proc(const char *proc_root, pid_t pid, const struct proc_map *map);

/* The file descriptor behind map: map_open_from_proc(), then the plain path, but only when it
 * is the mapped file. Returns the fd (O_CLOEXEC) or -ENOENT. */
int map_open_fd(const char *proc_root, pid_t pid, const struct proc_map *map);

#endif /* SPANPROF_MAP_OPEN_H */
