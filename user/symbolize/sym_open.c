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

#include "symbolize/sym_open.h"
#include "util/proc_file.h"

#define DELETED_SUFFIX " (deleted)"

static int is_deleted(const char *path)
{
	size_t n = strlen(path), s = strlen(DELETED_SUFFIX);

	return n > s && !strcmp(path + n - s, DELETED_SUFFIX);
}

/* Opens path (inside root when not NULL) as a regular file without blocking on a FIFO or
 * following a final symlink (proc_file_open()); returns the fd and whether it is the mapped
 * file (device and inode agree), or -1. */
static int open_candidate(const char *root, const char *path, unsigned int flags,
			  const struct proc_map *map, int *same)
{
	struct stat st;
	int fd;

	fd = proc_file_open(root, path, flags, &st);
	if (fd < 0)
		return -1;
	*same = st.st_ino == map->inode && st.st_dev == map->dev;
	return fd;
}

/* The /proc candidates: the process's root view of the path, then its map_files entry. */
static int open_from_proc(const char *proc_root, pid_t pid, const struct proc_map *map)
{
	char path[PATH_MAX];
	int fd = -1, fallback = -1, same = 0;

	if (!is_deleted(map->path)) {
		snprintf(path, sizeof(path), "%s/%d/root", proc_root, (int)pid);
		fd = open_candidate(path, map->path, 0, map, &same);
		if (fd >= 0 && same)
			return fd;
		fallback = fd;
	}
	snprintf(path, sizeof(path), "%s/%d/map_files/%" PRIx64 "-%" PRIx64, proc_root, (int)pid,
		 map->start, map->end);
	fd = open_candidate(NULL, path, PROC_FILE_MAGIC_LINK, map, &same);
	if (fd >= 0 && (same || fallback < 0)) {
		if (fallback >= 0)
			close(fallback);
		return fd;
	}
	if (fd >= 0)
		close(fd);
	return fallback;
}

static struct elf_syms *open_plain(const char *debug_root, const struct proc_map *map,
				   const char *want_build_id)
{
	struct elf_syms *es;
	const char *id;
	int fd, same = 0;

	errno = ENOENT;
	if (is_deleted(map->path))
		return NULL;
	fd = open_candidate(NULL, map->path, 0, map, &same);
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

	fd = open_from_proc(proc_root, pid, map);
	if (fd >= 0) {
		snprintf(root, sizeof(root), "%s/%d/root", proc_root, (int)pid);
		return elf_syms_new(fd, map->path, root, debug_root);
	}
	return open_plain(debug_root, map, want_build_id);
}

int sym_open_mapping_fd(const char *proc_root, pid_t pid, const struct proc_map *map)
{
	int fd, same = 0;

	fd = open_from_proc(proc_root, pid, map);
	if (fd >= 0)
		return fd;
	if (is_deleted(map->path))
		return -ENOENT;
	fd = open_candidate(NULL, map->path, 0, map, &same);
	if (fd >= 0 && !same) {
		close(fd);
		return -ENOENT;
	}
	return fd >= 0 ? fd : -ENOENT;
}
