/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* One byte budget for the Python and Ruby name caches together, shared fairly between users
 * (the owner of /proc/PID/mem: the process's effective uid, root for a process that is not
 * dumpable). Everything the caches hold is charged to it: their structures and hashes at
 * attach, each entry as it comes and goes, and the budget's own per-user records, so the bytes
 * charged never exceed the budget. An entry that does not fit makes room by evicting the least
 * recently used entry of the user holding the most; a user at its share (the room divided among
 * the users holding entries, the newcomer counted) evicts only its own; an entry larger than
 * its user's share is refused, never cached. */
#ifndef SPANPROF_INTERP_BUDGET_H
#define SPANPROF_INTERP_BUDGET_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

enum interp_cache_kind {
	INTERP_CACHE_PYTHON = 0,
	INTERP_CACHE_RUBY,
	INTERP_CACHE__KINDS,
};

/* Drops the least recently used entry of uid from cache, giving its bytes back with
 * interp_budget_give(). Returns 0, or -ENOENT when cache holds none of uid's. */
typedef int (*interp_budget_evict_fn)(void *cache, uid_t uid);

struct interp_budget_stats {
	uint64_t max_bytes; /* the budget */
	uint64_t held; /* charged now: the caches' fixed bytes and entries, and own_bytes */
	uint64_t own_bytes; /* this budget's part of held: itself and its per-user records */
	uint64_t users; /* users holding entries now */
	uint64_t evictions; /* entries evicted for room, any cache */
	uint64_t refused; /* entries not cached: larger than their user's share, or no memory */
	uint64_t fair_refused; /* of those, refused while other users held the rest */
};

/* A budget of max_bytes. NULL (errno ENOMEM) on failure. */
struct interp_budget *interp_budget_new(uint64_t max_bytes);
/* NULL-safe; the caches attached must be freed first. */
void interp_budget_free(struct interp_budget *b);

/* Attaches the cache of kind, charging its fixed bytes (structure and hash). Returns 0, or
 * -ENOSPC when they do not fit in the budget. */
int interp_budget_attach(struct interp_budget *b, enum interp_cache_kind kind, void *cache,
			 interp_budget_evict_fn evict, size_t fixed_bytes);
/* Gives back the fixed bytes of a cache that is being freed (its entries given back first). */
void interp_budget_detach(struct interp_budget *b, enum interp_cache_kind kind, size_t fixed_bytes);

/* Charges an entry of bytes to uid in the cache of kind, evicting entries (of any attached
 * cache) for room. Returns 0, or -EDQUOT / -ENOSPC / -ENOMEM when it is refused (counted and
 * logged, rate-limited per uid): the caller must not cache it. */
int interp_budget_take(struct interp_budget *b, enum interp_cache_kind kind, uid_t uid,
		       size_t bytes);
/* Gives back an entry's bytes charged to uid in the cache of kind. */
void interp_budget_give(struct interp_budget *b, enum interp_cache_kind kind, uid_t uid,
			size_t bytes);

void interp_budget_get_stats(const struct interp_budget *b, struct interp_budget_stats *out);

#endif /* SPANPROF_INTERP_BUDGET_H */
