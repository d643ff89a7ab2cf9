/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Interned strings: each distinct string stored once and named by a small id, so a million span
 * records share a few hundred service and span names. */
#ifndef SPANPROF_VIEW_STR_POOL_H
#define SPANPROF_VIEW_STR_POOL_H

#include <stddef.h>
#include <stdint.h>

struct str_pool;

/* An empty pool; NULL with errno = ENOMEM. */
struct str_pool *str_pool_new(void);
void str_pool_free(struct str_pool *sp); /* NULL-safe */

/* The id of s (len bytes, need not be NUL-terminated), added when new. Ids count from 0 in the
 * order strings were added. Returns 0 or -ENOMEM. */
int str_pool_intern(struct str_pool *sp, const char *s, size_t len, uint32_t *id);

/* The string with this id (NUL-terminated), or "" for an unknown id. */
const char *str_pool_get(const struct str_pool *sp, uint32_t id);

size_t str_pool_count(const struct str_pool *sp);
size_t str_pool_bytes(const struct str_pool *sp); /* memory held */

#endif /* SPANPROF_VIEW_STR_POOL_H */
