/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Looks for a byte string in a range of a file through a small buffer, so a large section can be
 * ruled out before it is read into memory whole. */
#ifndef SPANPROF_FILE_FIND_H
#define SPANPROF_FILE_FIND_H

#include <stddef.h>
#include <stdint.h>

/* Bytes read at a time (the most this holds, with the needle's length). */
#define FILE_FIND_CHUNK (64u << 10)

/* Whether [off, off + len) of the file open at fd holds needle (n bytes, 1..FILE_FIND_CHUNK).
 * Reads with pread, so the file's offset is left alone; a range past the end of the file is
 * searched as far as the file goes. Returns 1 when found, 0 when not, -EINVAL for a bad needle,
 * -ENOMEM, or the -errno of a failed read. */
int file_find(int fd, uint64_t off, uint64_t len, const void *needle, size_t n);

#endif /* SPANPROF_FILE_FIND_H */
