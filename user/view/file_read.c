// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Capped whole-file reads and capped gunzip for the viewer. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "view/file_read.h"

int file_read_all(const char *path, size_t max, uint8_t **out, size_t *len)
{
	struct stat st;
	uint8_t *buf;
	size_t got = 0, cap;
	ssize_t n;
	int fd, err;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st)) {
		err = -errno;
		goto out_close;
	}
	err = -EINVAL;
	if (!S_ISREG(st.st_mode))
		goto out_close;
	err = -EFBIG;
	if ((uint64_t)st.st_size > max)
		goto out_close;
	/* The file may grow while it is read (a log being appended): read what fits the cap. */
	cap = (size_t)st.st_size + 1;
	err = -ENOMEM;
	buf = malloc(cap);
	if (!buf)
		goto out_close;
	while (got + 1 < cap && (n = read(fd, buf + got, cap - 1 - got)) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			err = -errno;
			free(buf);
			goto out_close;
		}
		got += (size_t)n;
	}
	buf[got] = '\0';
	*out = buf;
	*len = got;
	err = 0;
out_close:
	close(fd);
	return err;
}

int file_is_gzip(const uint8_t *buf, size_t len)
{
	return len >= 2 && buf[0] == 0x1f && buf[1] == 0x8b;
}

int file_gunzip(const uint8_t *buf, size_t len, size_t max, uint8_t **out, size_t *out_len)
{
	z_stream zs = { 0 };
	size_t cap = len * 4 + 4096;
	uint8_t *dst = NULL, *p;
	int zerr, err;

	if (!file_is_gzip(buf, len))
		return -EBADMSG;
	if (inflateInit2(&zs, 15 + 16) != Z_OK)
		return -ENOMEM;
	zs.next_in = (Bytef *)buf;
	zs.avail_in = (uInt)len;
	do {
		if (cap > max + 1)
			cap = max + 1;
		p = realloc(dst, cap);
		if (!p) {
			err = -ENOMEM;
			goto out_fail;
		}
		dst = p;
		zs.next_out = dst + zs.total_out;
		zs.avail_out = (uInt)(cap - zs.total_out);
		zerr = inflate(&zs, Z_NO_FLUSH);
		if (zs.total_out > max) {
			err = -EFBIG;
			goto out_fail;
		}
		cap *= 2;
	} while (zerr == Z_OK && (zs.avail_in > 0 || zs.avail_out == 0));
	if (zerr == Z_OK || zerr == Z_BUF_ERROR) {
		err = -ENODATA; /* input ended before the stream did */
		goto out_fail;
	}
	if (zerr != Z_STREAM_END) {
		err = zerr == Z_MEM_ERROR ? -ENOMEM : -EBADMSG;
		goto out_fail;
	}
	*out = dst;
	*out_len = zs.total_out;
	inflateEnd(&zs);
	return 0;
out_fail:
	inflateEnd(&zs);
	free(dst);
	return err;
}
