/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* How many bytes untrusted xz data decompresses to, found by decompressing it into a small
 * scratch buffer and stopping at a cap: an xz header's claims are not checked by the decoder
 * until the end, so only decoding tells. */
#ifndef SPANPROF_XZ_SIZE_H
#define SPANPROF_XZ_SIZE_H

#include <stddef.h>
#include <stdint.h>

/* Decompresses the xz data (len bytes; concatenated streams allowed) and discards the output.
 * Returns 0 and sets *out to its size when it is at most max, -EFBIG as soon as it exceeds max
 * (decoding stops there: the cost is bounded by max), or -EINVAL when the data is not valid xz.
 * Decoder memory is capped at 64 MiB (-EFBIG beyond). */
int xz_size(const void *data, size_t len, uint64_t max, uint64_t *out);

#endif /* SPANPROF_XZ_SIZE_H */
