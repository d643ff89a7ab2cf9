// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Crash-safe file writes (temporary file, fsync, rename, directory fsync). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

#include "util/atomic_file.h"

int atomic_file_write_all(int fd, const uint8_t *buf, size_t len)
{
	ssize_t n;

	while (len) {
		n = write(fd, buf, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		buf += n;
		len -= n;
	}
	return 0;
}

int atomic_file_write_at(int dirfd, const char *tmp_name, const char *name, const uint8_t *buf,
			 size_t len, mode_t mode)
{
	int fd, err;

	fd = openat(dirfd, tmp_name, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, mode);
	if (fd < 0)
		return -errno;
	err = atomic_file_write_all(fd, buf, len);
	if (!err && fsync(fd))
		err = -errno;
	if (close(fd) && !err)
		err = -errno;
	if (!err && renameat(dirfd, tmp_name, dirfd, name))
		err = -errno;
	if (err) {
		unlinkat(dirfd, tmp_name, 0);
		return err;
	}
	fsync(dirfd); /* best effort, see the header */
	return 0;
}
