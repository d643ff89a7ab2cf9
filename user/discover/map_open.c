// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Opens a mapping's file through /proc/PID/root or map_files, checking device and inode. */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "discover/map_open.h"
#include "util/proc_file.h"

#define DELETED_SUFFIX " (deleted)"

int map_open_is_deleted(const char *path)
{
	size_t n = strlen(path), s = strlen(DELETED_SUFFIX);

	return n > s && !strcmp(path + n - s, DELETED_SUFFIX);
}

int map_open_candidate(const char *root, const char *path, unsigned int flags,
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

int map_open_from_proc(const char *proc_root, pid_t pid, const struct proc_map *map)
{
	char path[PATH_MAX];
	int fd = -1, fallback = -1, same = 0;

	if (!map_open_is_deleted(map->path)) {
		snprintf(path, sizeof(path), "%s/%d/root", proc_root, (int)pid);
		fd = map_open_candidate(path, map->path, 0, map, &same);
		if (fd >= 0 && same)
			return fd;
		fallback = fd;
	}
	snprintf(path, sizeof(path), "%s/%d/map_files/%" PRIx64 "-%" PRIx64, proc_root, (int)pid,
		 map->start, map->end);
	fd = map_open_candidate(NULL, path, PROC_FILE_MAGIC_LINK, map, &same);
	if (fd >= 0 && (same || fallback < 0)) {
		if (fallback >= 0)
			close(fallback);
		return fd;
	}
	if (fd >= 0)
		close(fd);
	return fallback;
}

int map_open_fd(const char *proc_root, pid_t pid, const struct proc_map *map)
{
	int fd, same = 0;

	fd = map_open_from_proc(proc_root, pid, map);
	if (fd >= 0)
		return fd;
	if (map_open_is_deleted(map->path))
		return -ENOENT;
	fd = map_open_candidate(NULL, map->path, 0, map, &same);
	if (fd >= 0 && !same) {
		close(fd);
		return -ENOENT;
	}
	return fd >= 0 ? fd : -ENOENT;
}
