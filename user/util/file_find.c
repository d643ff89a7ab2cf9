// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Byte string search in a file range, one chunk at a time (see file_find.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/file_find.h"

int file_find(int fd, uint64_t off, uint64_t len, const void *needle, size_t n)
{
	size_t keep = 0, want, total;
	char *buf;
	ssize_t got;
	int found = 0;

	if (!n || n > FILE_FIND_CHUNK)
		return -EINVAL;
	buf = malloc(FILE_FIND_CHUNK + n);
	if (!buf)
		return -ENOMEM;
	/* Each read lands after the last n - 1 bytes of the one before, so a needle split
	 * between two reads is still seen whole. */
	while (len && !found) {
		want = len < FILE_FIND_CHUNK ? (size_t)len : FILE_FIND_CHUNK;
		got = pread(fd, buf + keep, want, (off_t)off);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0) {
			found = -errno;
			break;
		}
		if (!got)
			break;
		total = keep + (size_t)got;
		found = memmem(buf, total, needle, n) != NULL;
		off += (uint64_t)got;
		len -= (uint64_t)got;
		keep = total < n - 1 ? total : n - 1;
		memmove(buf, buf + total - keep, keep);
	}
	free(buf);
	return found;
}
