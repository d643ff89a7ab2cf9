/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Decoded profiles of one directory listing, loaded on first use and kept under a memory budget
 * (least recently used evicted first, counted). A file that fails to decode is reported once
 * and not read again. */
#ifndef SPANPROF_VIEW_PROFILE_CACHE_H
#define SPANPROF_VIEW_PROFILE_CACHE_H

#include <stddef.h>
#include <stdint.h>

#include "view/data_dir.h"
#include "view/problems.h"
#include "view/view_profile.h"

struct profile_cache_stats {
	uint64_t loads, hits, evictions, failed;
	size_t bytes, max_bytes; /* held now, and the budget */
};

struct profile_cache;

/* A cache for the n profiles of a listing; max_bytes: the budget for decoded profiles,
 * max_file_bytes: the largest file (and unpacked profile) read. NULL with errno = ENOMEM. */
struct profile_cache *profile_cache_new(size_t n, size_t max_bytes, size_t max_file_bytes);
void profile_cache_free(struct profile_cache *pc); /* NULL-safe */

/* The decoded profile dd->profiles[i] of dir, read now when it is not held. The pointer stays
 * valid until the next profile_cache_get() or profile_cache_free(). NULL when the file could not
 * be read or decoded (reported in pr). */
const struct view_profile *profile_cache_get(struct profile_cache *pc, const char *dir,
					     const struct data_dir *dd, size_t i,
					     struct problems *pr);

void profile_cache_get_stats(const struct profile_cache *pc, struct profile_cache_stats *out);

#endif /* SPANPROF_VIEW_PROFILE_CACHE_H */
