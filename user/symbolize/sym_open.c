// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Finds and opens the file behind a process mapping (see sym_open.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "discover/map_open.h"
#include "symbolize/sym_open.h"

static struct elf_syms *open_plain(const char *debug_root, const struct proc_map *map,
				   const char *want_build_id)
{
	struct elf_syms *es;
	const char *id;
	int fd, same = 0;

	errno = ENOENT;
	if (map_open_is_deleted(map->path))
		return NULL;
	fd = map_open_candidate(NULL, map->path, 0, map, &same);
	if (fd < 0)
		return NULL;
	if (!same && !want_build_id) {
		close(fd);
		errno = ENOENT;
		return NULL;
	}
	es = elf_syms_new(fd, map->path, NULL, debug_root);
	if (!es || same)
		return es;
	id = elf_syms_build_id(es);
	if (id && !strcmp(id, want_build_id))
		return es;
	elf_syms_free(es); /* a different file by now: its symbols would lie */
	errno = ENOENT;
	return NULL;
}

struct elf_syms *sym_open_mapping(const char *proc_root, const char *debug_root, pid_t pid,
				  const struct proc_map *map, const char *want_build_id)
{
	char root[PATH_MAX];
	int fd;

	fd = map_open_from_proc(proc_root, pid, map);
	if (fd >= 0) {
		snprintf(root, sizeof(root), "%s/%d/root", proc_root, (int)pid);
		return elf_syms_new(fd, map->path, root, debug_root);
	}
	return open_plain(debug_root, map, want_build_id);
}
