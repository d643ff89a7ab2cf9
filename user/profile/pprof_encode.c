// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Encodes a whole profile (as the single chunk of an unlimited pprof_chunk.c encoding) and gzips
 * profiles the way pprof files are stored. */
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "profile/pprof.h"

/* Collects the single chunk an unlimited pprof_builder_encode_chunks() call produces. */
struct whole_profile {
	uint8_t *buf;
	size_t len;
};

static int keep_whole(void *ctx, const uint8_t *buf, size_t len, size_t nsamples)
{
	struct whole_profile *w = ctx;

	(void)nsamples;
	if (w->buf)
		return -EOVERFLOW; /* cannot happen without limits; never lose a chunk silently */
	w->buf = malloc(len ? len : 1);
	if (!w->buf)
		return -ENOMEM;
	memcpy(w->buf, buf, len);
	w->len = len;
	return 0;
}

/* The whole profile is the one chunk an encoding without limits produces: one encoder serves
 * both the local files and the uploads. */
int pprof_builder_encode(struct pprof_builder *b, uint8_t **out, size_t *len)
{
	struct whole_profile w = { 0 };
	int err;

	if (!b || !out || !len)
		return -EINVAL;
	err = pprof_builder_encode_chunks(b, SIZE_MAX, SIZE_MAX, keep_whole, &w);
	if (err) {
		free(w.buf);
		return err;
	}
	*out = w.buf;
	*len = w.len;
	return 0;
}

int pprof_gzip(const uint8_t *buf, size_t len, uint8_t **out, size_t *out_len)
{
	z_stream zs = { 0 };
	uint8_t *dst;
	uLong cap;
	int zerr, err = 0;

	if ((!buf && len) || !out || !out_len)
		return -EINVAL;
	/* zlib counts input in 32 bits; profiles are limited to a few MiB anyway. */
	if (len > UINT_MAX / 2)
		return -E2BIG;
	/* windowBits 15 + 16: a gzip header and trailer instead of zlib's. */
	zerr = deflateInit2(&zs, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY);
	if (zerr != Z_OK)
		return zerr == Z_MEM_ERROR ? -ENOMEM : -EINVAL;
	cap = deflateBound(&zs, len);
	dst = malloc(cap);
	if (!dst) {
		err = -ENOMEM;
		goto out_end;
	}
	zs.next_in = (Bytef *)buf;
	zs.avail_in = len;
	zs.next_out = dst;
	zs.avail_out = cap;
	/* deflateBound() leaves room for everything, so one Z_FINISH call completes the stream. */
	zerr = deflate(&zs, Z_FINISH);
	if (zerr != Z_STREAM_END) {
		free(dst);
		err = zerr == Z_MEM_ERROR ? -ENOMEM : -EIO;
		goto out_end;
	}
	*out = dst;
	*out_len = zs.total_out;
out_end:
	deflateEnd(&zs);
	return err;
}
