/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Opens the file behind one executable mapping of a process so that what is opened is the very
 * inode the mapping shows: the agent parses the hook from that descriptor and attaches its
 * uprobe through it, so no rename or symlink swap of the path can redirect the probe. */
#ifndef SPANPROF_HOOK_OPEN_H
#define SPANPROF_HOOK_OPEN_H

#include <sys/types.h>

#include "discover/proc_maps.h"

/* Opens the file mapped at m in pid, read-only, close-on-exec and non-blocking; it is located
 * with O_PATH and checked before it is opened for reading (so a FIFO or device is never opened):
 * 1. through <proc_root>/PID/map_files/<start>-<end>, a kernel link to the mapping's own file
 *    (its path text does not matter: a path with a newline or " (deleted)" opens too);
 * 2. when that is not allowed (no CAP_CHECKPOINT_RESTORE), through openat2() on the path
 *    below <proc_root>/PID/root with RESOLVE_IN_ROOT, RESOLVE_NO_SYMLINKS and
 *    RESOLVE_NO_MAGICLINKS (stronger than O_NOFOLLOW: no symlink anywhere on the path), so no
 *    symlink the process's owner planted is followed.
 * The opened file must then be a regular file whose device and inode are the ones maps named.
 * Returns the fd (owned by the caller), or -errno: -ENOENT/-ESRCH (mapping or process gone),
 * -ESTALE (a different file than maps named: replaced in between), -EINVAL (not a regular file),
 * or the open's error. *why (may be NULL) is set to a short reason for the log. */
int hook_open_mapping(const char *proc_root, pid_t pid, const struct proc_map *m, const char **why);

/* Step 2 alone (tests use it with a fake proc root). Same results. */
int hook_open_in_root(const char *proc_root, pid_t pid, const struct proc_map *m, const char **why);

/* "/proc/self/fd/N": the path through which the kernel resolves exactly the open file fd (for
 * APIs such as uprobes that take a path). buf needs 32 bytes. */
const char *hook_open_fd_path(int fd, char *buf, size_t size);

#endif /* SPANPROF_HOOK_OPEN_H */
