// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Names and opens the file a process's interpreter lives in. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "discover/map_open.h"
#include "interp/interp_file.h"
#include "util/elf_guard.h"

int interp_file_open(const char *proc_root, pid_t pid, const struct proc_map *m,
		     struct interp_file *file)
{
	memset(file, 0, sizeof(*file));
	snprintf(file->path, sizeof(file->path), "%s", m->path);
	file->dev = m->dev;
	file->inode = m->inode;
	return map_open_fd(proc_root, pid, m);
}

int interp_file_read(const char *proc_root, pid_t pid, const struct proc_map *m,
		     struct interp_file *file, struct file_verdicts *verdicts, file_parse_fn parse,
		     void *out)
{
	const char *base;
	int fd, err;

	if (!m)
		return -ENOENT;
	fd = interp_file_open(proc_root, pid, m, file);
	if (fd < 0)
		return fd;
	base = strrchr(m->path, '/');
	err = file_verdicts_read(verdicts, fd, base ? base + 1 : m->path, parse, out);
	close(fd);
	return err;
}

Elf *interp_elf_begin(int fd, struct elf_wanted_sym *want, size_t n, elf_symbol_fn fn, void *ctx)
{
	Elf *elf = elf_guard_begin(fd);

	if (!elf)
		return NULL;
	/* The file is chosen by its name, which anyone can give a large executable: unless a string
	 * table holds want[0]'s name (with its NUL), its symbols are not walked. */
	if (!elf_symbol_names_hold(elf, fd, want[0].name, strlen(want[0].name) + 1)) {
		elf_end(elf);
		errno = ENOENT;
		return NULL;
	}
	if (fn)
		elf_each_defined_symbol(elf, fd, fn, ctx);
	else
		elf_find_symbols(elf, fd, want, n);
	if (!want[0].found) {
		elf_end(elf);
		errno = ENOENT;
		return NULL;
	}
	return elf;
}

int interp_file_place(struct interp_file *file, const struct proc_map *m,
		      const struct elf_loads *loads, int major, int minor, int patch,
		      uint64_t *bias)
{
	if (elf_loads_bias(loads, m->start, m->offset, bias))
		return -ENOEXEC;
	file->major = major;
	file->minor = minor;
	file->patch = patch;
	return 0;
}
