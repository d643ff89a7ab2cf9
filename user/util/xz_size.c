// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Decompressed size of untrusted xz data, within a cap (see xz_size.h). */
#include <errno.h>
#include <lzma.h>

#include "util/xz_size.h"

#define DECODER_MEMLIMIT (64ull << 20)

int xz_size(const void *data, size_t len, uint64_t max, uint64_t *out)
{
	lzma_stream s = LZMA_STREAM_INIT;
	uint8_t scratch[65536];
	lzma_ret ret;
	int err = 0;

	*out = 0;
	if (lzma_stream_decoder(&s, DECODER_MEMLIMIT, LZMA_CONCATENATED) != LZMA_OK)
		return -ENOMEM;
	s.next_in = data;
	s.avail_in = len;
	do {
		s.next_out = scratch;
		s.avail_out = sizeof(scratch);
		ret = lzma_code(&s, LZMA_FINISH);
		if (s.total_out > max) {
			err = -EFBIG;
			break;
		}
	} while (ret == LZMA_OK);
	if (!err && ret == LZMA_MEMLIMIT_ERROR)
		err = -EFBIG;
	else if (!err && ret != LZMA_STREAM_END)
		err = -EINVAL;
	if (!err)
		*out = s.total_out;
	lzma_end(&s);
	return err;
}
