/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Open-addressing hash index from a 64-bit hash to positions in an array the caller owns;
 * equality is decided by a caller callback, so keys can live anywhere. */
#ifndef SPANPROF_IDXMAP_H
#define SPANPROF_IDXMAP_H

#include <stddef.h>
#include <stdint.h>

#define IDXMAP_HASH_INIT 0xcbf29ce484222325ULL

struct idxmap_slot {
	uint64_t hash;
	uint32_t pos1; /* position + 1; 0 marks an empty slot */
};

struct idxmap {
	struct idxmap_slot *slots;
	size_t mask; /* capacity - 1 (capacity is a power of two), 0 before the first insert */
	size_t count;
};

/* Returns 1 when the key the caller has in mind equals the key stored at position pos. */
typedef int (*idxmap_eq_fn)(const void *ctx, uint32_t pos);

void idxmap_init(struct idxmap *m);
void idxmap_release(struct idxmap *m); /* frees the slots; m can be re-initialised */

/* Looks up a key by hash and eq. Returns 1 and sets *pos when found, else 0. */
int idxmap_find(const struct idxmap *m, uint64_t hash, idxmap_eq_fn eq, const void *ctx,
		uint32_t *pos);

/* Records that the key with this hash lives at pos (the caller checked it is absent first).
 * Grows the table to keep it at most half full. Returns 0, -ENOMEM, or -E2BIG when pos cannot
 * be represented. */
int idxmap_insert(struct idxmap *m, uint64_t hash, uint32_t pos);

/* Folds len bytes into a running hash (FNV-1a's multiply, by whole words while 8 bytes are
 * left); start from IDXMAP_HASH_INIT. */
uint64_t idxmap_hash(uint64_t h, const void *data, size_t len);

/* Folds one 64-bit value into a running hash. */
static inline uint64_t idxmap_hash_u64(uint64_t h, uint64_t v)
{
	return idxmap_hash(h, &v, sizeof(v));
}

#endif /* SPANPROF_IDXMAP_H */
