/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Parses /proc/PID/maps into a snapshot of a process's executable mappings: those of files (and
 * pseudo files), and apart from them the ranges of anonymous executable memory (JIT code). */
#ifndef SPANPROF_PROC_MAPS_H
#define SPANPROF_PROC_MAPS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* One executable mapping of a file (or a pseudo file such as "[vdso]"). */
struct proc_map {
	uint64_t start; /* first address */
	uint64_t end; /* one past the last address */
	uint64_t offset; /* file offset mapped at start */
	uint64_t dev; /* makedev(major, minor) of the file; 0 for pseudo files */
	uint64_t inode; /* 0 for pseudo files and anonymous memory */
	char *path; /* as printed in maps ("/usr/lib/x.so", "[vdso]"), "\012" decoded to a
			  * newline; " (deleted)" kept */
};

/* A range of anonymous executable memory (no path): code a JIT wrote. */
struct proc_range {
	uint64_t start, end; /* end: one past the last address */
};

/* All executable mappings of one process, sorted by start address. */
struct proc_maps {
	struct proc_map *maps;
	size_t count;
	/* Anonymous executable memory, sorted, adjacent ranges merged into one. Kept apart from
	 * maps: only the unwinder needs it (symbolization finds JIT code through perf maps). */
	struct proc_range *anon;
	size_t anon_count;
};

/* Parses maps text (the contents of /proc/PID/maps) keeping only executable mappings ("r-xp",
 * "--xp", ...), anonymous ones in anon. Returns 0 or -EINVAL on a malformed line, -ENOMEM. On
 * error *out is empty. */
int proc_maps_parse(const char *text, struct proc_maps *out);

/* Reads and parses /proc/PID/maps. Returns 0, -ENOENT/-ESRCH when the process is gone, or
 * another -errno. */
int proc_maps_read(pid_t pid, struct proc_maps *out);

/* As proc_maps_read(), but reads <proc_root>/PID/maps (tests use a fake proc root). */
int proc_maps_read_at(const char *proc_root, pid_t pid, struct proc_maps *out);

/* The mapping of a file or pseudo file containing addr, or NULL (anon is not searched). */
const struct proc_map *proc_maps_find(const struct proc_maps *maps, uint64_t addr);

/* Frees what proc_maps_parse() allocated and empties *maps. NULL-safe. */
void proc_maps_release(struct proc_maps *maps);

#endif /* SPANPROF_PROC_MAPS_H */
