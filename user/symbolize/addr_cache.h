/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Bounded cache of symbolized addresses, keyed by file (device, inode) and file offset, so hot
 * frames are not looked up in DWARF again and idle ELF modules can be closed. */
#ifndef SPANPROF_ADDR_CACHE_H
#define SPANPROF_ADDR_CACHE_H

#include <stddef.h>
#include <stdint.h>

#include "util/frame.h"

struct addr_cache_key {
	uint64_t dev, inode, offset;
};

/* max_entries >= 1. When full, the cache is emptied (simple and bounded; hot entries come back
 * within one drain). NULL with errno on failure. */
struct addr_cache *addr_cache_new(size_t max_entries);
void addr_cache_free(struct addr_cache *c); /* NULL-safe */

/* Copies the cached lines of key into out->lines/out->nlines and its build id into *build_id
 * (valid until the next call that changes the cache). Returns 1 on a hit, 0 on a miss. */
int addr_cache_get(struct addr_cache *c, const struct addr_cache_key *key, struct sym_frame *out,
		   const char **build_id);

/* Remembers out's lines (and build_id, may be NULL) for key. Strings are copied. Failure to
 * allocate only means the entry is not cached. */
void addr_cache_put(struct addr_cache *c, const struct addr_cache_key *key,
		    const struct sym_frame *frame, const char *build_id);

size_t addr_cache_count(const struct addr_cache *c);

#endif /* SPANPROF_ADDR_CACHE_H */
