/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Opening files that another process controls (its root directory, /tmp, mapped files): never
 * blocks (FIFOs), never follows a planted symlink out of the process's root, only regular files. */
#ifndef SPANPROF_PROC_FILE_H
#define SPANPROF_PROC_FILE_H

#include <sys/stat.h>
#include <sys/types.h>

/* Flags for proc_file_open(). */
#define PROC_FILE_NO_SYMLINKS 0x1 /* no symlink anywhere in the path (perf maps) */
#define PROC_FILE_MAGIC_LINK 0x2 /* path is a /proc magic link (map_files/...): follow it */

/* Opens path read-only with O_NONBLOCK|O_CLOEXEC, and O_NOFOLLOW unless PROC_FILE_MAGIC_LINK,
 * then requires a regular file. root (may be NULL or "") is a directory such as
 * "/proc/42/root": path is then resolved inside it (openat2 RESOLVE_IN_ROOT), so an absolute
 * symlink planted by the process cannot lead out of its own root. *st (may be NULL) gets the
 * file's fstat. Returns the fd, or -errno: -ELOOP for a symlink where none is allowed,
 * -EINVAL for anything but a regular file (FIFO, device, directory), else open()'s error. */
int proc_file_open(const char *root, const char *path, unsigned int flags, struct stat *st);

/* proc_file_open(root, path, PROC_FILE_NO_SYMLINKS, st) plus an owner check: the file must
 * belong to the real or effective uid of process pid as <proc_root>/PID/status gives them
 * (so root's files only when the process runs as root). Returns the fd or -errno; -EPERM when
 * the owner differs. */
int proc_file_open_owned(const char *proc_root, pid_t pid, const char *root, const char *path,
			 struct stat *st);

/* The real and effective uid of pid from <proc_root>/PID/status. Returns 0 or -errno. */
int proc_file_uids(const char *proc_root, pid_t pid, uid_t *ruid, uid_t *euid);

#endif /* SPANPROF_PROC_FILE_H */
