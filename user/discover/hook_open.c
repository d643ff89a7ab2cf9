// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Opens a mapping's file by the mapping, not by its name (map_files, else openat2 with no
 * symlinks), and checks that the inode is the one /proc/PID/maps named. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "discover/hook_open.h"

#define OPEN_FLAGS (O_RDONLY | O_NONBLOCK | O_CLOEXEC)
#define DELETED_SUFFIX " (deleted)"

/* The mapping's own file. No O_NOFOLLOW: the entry is a kernel link to vma->vm_file, resolved
 * without looking the name up, and O_NOFOLLOW would refuse it. */
static int open_map_files(const char *proc_root, pid_t pid, const struct proc_map *m)
{
	char path[PATH_MAX];
	int fd;

	snprintf(path, sizeof(path), "%s/%d/map_files/%" PRIx64 "-%" PRIx64, proc_root, (int)pid,
		 m->start, m->end);
	fd = open(path, OPEN_FLAGS);
	return fd < 0 ? -errno : fd;
}

/* The path inside the process's root, following no symlink at all (maps prints resolved paths,
 * so a symlink on the way means the tree changed since). */
static int open_in_root(const char *proc_root, pid_t pid, const struct proc_map *m)
{
	struct open_how how = {
		.flags = OPEN_FLAGS | O_NOFOLLOW,
		.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
	};
	size_t len = strlen(m->path), slen = strlen(DELETED_SUFFIX);
	char path[PATH_MAX];
	int root, fd;

	if (m->path[0] != '/' || (len > slen && !strcmp(m->path + len - slen, DELETED_SUFFIX)))
		return -ENOENT; /* a pseudo file, or a file with no name left */
	snprintf(path, sizeof(path), "%s/%d/root", proc_root, (int)pid);
	root = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (root < 0)
		return -errno;
	fd = syscall(SYS_openat2, root, m->path, &how, sizeof(how));
	fd = fd < 0 ? -errno : fd;
	close(root);
	return fd;
}

static int check_same_file(int fd, const struct proc_map *m, const char **why)
{
	struct stat st;

	if (fstat(fd, &st))
		return -errno;
	if (!S_ISREG(st.st_mode)) {
		*why = "not a regular file";
		return -EINVAL;
	}
	if ((uint64_t)st.st_dev != m->dev || (uint64_t)st.st_ino != m->inode) {
		*why = "the file is not the one the mapping showed (replaced in between)";
		return -ESTALE;
	}
	return 0;
}

/* Checks fd against m: returns fd, or closes it and returns -errno with *why set. */
static int checked(int fd, const struct proc_map *m, const char **why)
{
	const char *reason = NULL;
	int err;

	if (fd < 0) {
		reason = fd == -ELOOP || fd == -EXDEV ? "a symlink on the path" : "cannot open";
		err = fd;
		goto out;
	}
	err = check_same_file(fd, m, &reason);
	if (!err)
		return fd;
	close(fd);
out:
	if (why)
		*why = reason;
	return err;
}

int hook_open_in_root(const char *proc_root, pid_t pid, const struct proc_map *m, const char **why)
{
	return checked(open_in_root(proc_root, pid, m), m, why);
}

int hook_open_mapping(const char *proc_root, pid_t pid, const struct proc_map *m, const char **why)
{
	int fd = open_map_files(proc_root, pid, m);

	if (fd == -EPERM || fd == -EACCES)
		return hook_open_in_root(proc_root, pid, m, why);
	return checked(fd, m, why);
}

const char *hook_open_fd_path(int fd, char *buf, size_t size)
{
	snprintf(buf, size, "/proc/self/fd/%d", fd);
	return buf;
}
