/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* What identifies a process's interpreter (CPython, CRuby): the file that holds it, as the
 * process maps it, and its version; and opening that file safely. */
#ifndef SPANPROF_INTERP_FILE_H
#define SPANPROF_INTERP_FILE_H

#include <stdint.h>
#include <sys/types.h>

#include "discover/proc_maps.h"

struct interp_file {
	uint64_t dev, inode; /* the interpreter file */
	int major, minor, patch;
	int supported; /* 1: the sampler can read this interpreter's frames */
	const char *remark; /* unsupported: why; supported: a caveat, or NULL */
	char path[256]; /* the interpreter file as maps names it */
};

/* Zeroes file, names it after mapping m of pid and opens the mapped file (through
 * <proc_root>/PID/root or map_files, never blocking, checked against the mapping's device and
 * inode). Returns the fd (O_CLOEXEC) or -errno. */
int interp_file_open(const char *proc_root, pid_t pid, const struct proc_map *m,
		     struct interp_file *file);

#endif /* SPANPROF_INTERP_FILE_H */
