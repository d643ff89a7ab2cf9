/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Reads a whole file with a size cap, and gunzips a buffer with a size cap: the viewer's only
 * file input, so a huge, truncated or half-written file costs a bounded read and an error. */
#ifndef SPANPROF_VIEW_FILE_READ_H
#define SPANPROF_VIEW_FILE_READ_H

#include <stddef.h>
#include <stdint.h>

/* Reads the regular file at path (no symlink followed past the directory's own) into a
 * malloc'ed buffer (*out, *len; *out is NUL-terminated one byte past len). Returns 0, -EFBIG
 * when it holds more than max bytes, -EINVAL when it is not a regular file, or the -errno of
 * open/read. */
int file_read_all(const char *path, size_t max, uint8_t **out, size_t *len);

/* 1 when buf starts with the gzip magic. */
int file_is_gzip(const uint8_t *buf, size_t len);

/* Gunzips buf into a malloc'ed buffer (*out, *out_len). Returns 0, -EFBIG past max bytes out,
 * -ENODATA when the stream ends early (a truncated or half-written file), -EBADMSG when it is
 * not gzip or is corrupt, -ENOMEM. */
int file_gunzip(const uint8_t *buf, size_t len, size_t max, uint8_t **out, size_t *out_len);

#endif /* SPANPROF_VIEW_FILE_READ_H */
