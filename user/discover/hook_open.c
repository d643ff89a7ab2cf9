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

/* Files are first opened O_PATH (no open side effects: a FIFO or a device node is never opened
 * for reading), checked, then reopened for reading through /proc/self/fd/N, the same file. */
#define OPEN_FLAGS (O_RDONLY | O_NONBLOCK | O_CLOEXEC)
#define PATH_FLAGS (O_PATH | O_CLOEXEC)
#define DELETED_SUFFIX " (deleted)"

/* The mapping's own file. No O_NOFOLLOW: the entry is a kernel link to vma->vm_file, resolved
 * without looking the name up, and O_NOFOLLOW would refuse it. */
static int open_map_files(const char *proc_root, pid_t pid, const struct proc_map *m)
{
	char path[PATH_MAX];
	int fd;

	snprintf(path, sizeof(path), "%s/%d/map_files/%" PRIx64 "-%" PRIx64, proc_root, (int)pid,
		 m->start, m->end);
	fd = open(path, PATH_FLAGS);
	return fd < 0 ? -errno : fd;
}

/* The path inside the process's root, following no symlink at all (maps prints resolved paths,
 * so a symlink on the way means the tree changed since). */
static int open_in_root(const char *proc_root, pid_t pid, const struct proc_map *m)
{
	struct open_how how = {
		/* RESOLVE_NO_SYMLINKS refuses a symlink anywhere on the path, the last component
		 * included (ELOOP); O_NOFOLLOW with O_PATH would return the link itself. */
		.flags = PATH_FLAGS,
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

/* Checks the O_PATH descriptor against m, then opens the same file for reading. Returns that
 * fd, or -errno with *why set. Closes path_fd either way. */
static int checked(int path_fd, const struct proc_map *m, const char **why)
{
	const char *reason = NULL;
	char self[32];
	int err, fd;

	if (path_fd < 0) {
		reason = path_fd == -ELOOP || path_fd == -EXDEV ? "a symlink on the path" :
								  "cannot open";
		err = path_fd;
		goto out;
	}
	err = check_same_file(path_fd, m, &reason);
	fd = err ? -1 : open(hook_open_fd_path(path_fd, self, sizeof(self)), OPEN_FLAGS);
	if (!err && fd < 0) {
		err = -errno;
		reason = "cannot reopen it for reading";
	}
	close(path_fd);
	if (!err)
		return fd;
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
