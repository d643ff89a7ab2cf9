/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Crash-safe file writes: a temporary file, written and fsynced, renamed over the final name,
 * then the directory fsynced so the rename itself survives a crash. */
#ifndef SPANPROF_ATOMIC_FILE_H
#define SPANPROF_ATOMIC_FILE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Writes all of buf to fd, retrying short writes and EINTR. Returns 0 or -errno. */
int atomic_file_write_all(int fd, const uint8_t *buf, size_t len);

/* Writes buf as dirfd/name through dirfd/tmp_name (created with mode, never following a
 * symlink). On failure the temporary file is removed and nothing named `name` is created.
 * Returns 0 or -errno; the caller reports the error with its own context. A failed fsync of the
 * directory after the rename is not an error (the data is safe; only the rename may be lost). */
int atomic_file_write_at(int dirfd, const char *tmp_name, const char *name, const uint8_t *buf,
			 size_t len, mode_t mode);

#endif /* SPANPROF_ATOMIC_FILE_H */
