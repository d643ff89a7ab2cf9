/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Opens the ELF file behind one mapping of a (possibly containerized) process, checking that
 * it is the very file the process mapped. */
#ifndef SPANPROF_SYM_OPEN_H
#define SPANPROF_SYM_OPEN_H

#include <sys/types.h>

#include "discover/proc_maps.h"
#include "symbolize/elf_syms.h"

/* Opens map's file for pid, trying <proc_root>/PID/root<path> (skipped for "(deleted)" files),
 * then <proc_root>/PID/map_files/<start>-<end>, then the plain path. A candidate whose device
 * and inode differ from the mapping's is only used when no candidate matches (overlayfs reports
 * other numbers than the kernel's maps), and the plain path only when it matches, or when its
 * build id equals want_build_id (may be NULL). Returns NULL with errno set: ENOENT when no
 * candidate could be opened, else as elf_syms_new(). */
struct elf_syms *sym_open_mapping(const char *proc_root, const char *debug_root, pid_t pid,
				  const struct proc_map *map, const char *want_build_id);

#endif /* SPANPROF_SYM_OPEN_H */
