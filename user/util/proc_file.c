// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Safe opens of process-controlled files (see proc_file.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "util/proc_file.h"

/* openat2() relative to root (resolved inside it) or, without a root, to the working
 * directory. Returns the fd or -errno. */
static int open2(const char *root, const char *path, int oflags, unsigned int flags)
{
	struct open_how how = { .flags = oflags };
	int dirfd = AT_FDCWD, fd, err;

	if (flags & PROC_FILE_NO_SYMLINKS)
		how.resolve |= RESOLVE_NO_SYMLINKS;
	if (root && *root) {
		how.resolve |= RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS;
		dirfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (dirfd < 0)
			return -errno;
		while (*path == '/')
			path++;
	}
	fd = syscall(SYS_openat2, dirfd, path, &how, sizeof(how));
	err = fd < 0 ? -errno : 0;
	if (dirfd != AT_FDCWD)
		close(dirfd);
	return fd < 0 ? err : fd;
}

int proc_file_open(const char *root, const char *path, unsigned int flags, struct stat *st)
{
	int oflags = O_RDONLY | O_NONBLOCK | O_CLOEXEC;
	struct stat tmp;
	int fd, err;

	if (!(flags & PROC_FILE_MAGIC_LINK))
		oflags |= O_NOFOLLOW;
	fd = open2(root, path, oflags, flags);
	if (fd < 0)
		return fd;
	if (!st)
		st = &tmp;
	if (fstat(fd, st)) {
		err = -errno;
		close(fd);
		return err;
	}
	if (!S_ISREG(st->st_mode)) {
		close(fd);
		return -EINVAL;
	}
	return fd;
}

int proc_file_uids(const char *proc_root, pid_t pid, uid_t *ruid, uid_t *euid)
{
	char path[256], line[256];
	unsigned int r, e;
	int err = -ENOENT;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%d/status", proc_root, (int)pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "Uid:", 4) && sscanf(line + 4, "%u %u", &r, &e) == 2) {
			*ruid = r;
			*euid = e;
			err = 0;
			break;
		}
	fclose(f);
	return err;
}

int proc_file_open_owned(const char *proc_root, pid_t pid, const char *root, const char *path,
			 struct stat *st)
{
	struct stat tmp;
	uid_t ruid, euid;
	int fd, err;

	err = proc_file_uids(proc_root, pid, &ruid, &euid);
	if (err)
		return err;
	if (!st)
		st = &tmp;
	fd = proc_file_open(root, path, PROC_FILE_NO_SYMLINKS, st);
	if (fd < 0)
		return fd;
	if (st->st_uid != ruid && st->st_uid != euid) {
		close(fd);
		return -EPERM;
	}
	return fd;
}
