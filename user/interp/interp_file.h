/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* What identifies a process's interpreter (CPython, CRuby): the file that holds it, as the
 * process maps it, and its version; and opening that file safely. */
#ifndef SPANPROF_INTERP_FILE_H
#define SPANPROF_INTERP_FILE_H

#include <stdint.h>
#include <sys/types.h>

#include "discover/proc_maps.h"
#include "util/elf_layout.h"
#include "util/file_verdicts.h"

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

/* The step every language takes first: opens the file mapping m names (interp_file_open()),
 * has it parsed into out by parse through the verdicts remembered across processes
 * (file_verdicts_read(): a remembered verdict, a parse here for root's files, or -EBUSY while
 * the parse thread has it), and closes it. Returns 0, -ENOENT when m is NULL (no interpreter
 * mapped), the open's -errno or the verdict's error. */
int interp_file_read(const char *proc_root, pid_t pid, const struct proc_map *m,
		     struct interp_file *file, struct file_verdicts *verdicts, file_parse_fn parse,
		     void *out);

/* The opening every language's reader makes: fd for libelf (elf_guard_begin()), and one walk of
 * its defined symbols, calling fn(ctx, ...) for each (fn notes want[] itself) or, when fn is
 * NULL, noting the first of each name in want[0..n). want[0] is the symbol that marks the
 * interpreter: when no string table of the file holds its name, nothing is walked (a large
 * executable named like an interpreter costs one read of its string tables through a small
 * buffer). Returns the Elf (elf_end() it) when want[0] was found, else NULL with errno ENOENT,
 * or elf_guard_begin()'s errno. */
Elf *interp_elf_begin(int fd, struct elf_wanted_sym *want, size_t n, elf_symbol_fn fn, void *ctx);

/* Notes the version the reader found in file, and in *bias where the file's loads sit in memory
 * through mapping m. Returns 0, or -ENOEXEC when m maps none of them. */
int interp_file_place(struct interp_file *file, const struct proc_map *m,
		      const struct elf_loads *loads, int major, int minor, int patch,
		      uint64_t *bias);

#endif /* SPANPROF_INTERP_FILE_H */
