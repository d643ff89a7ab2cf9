// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Open-addressing (linear probing) hash index from hashes to caller-owned array positions. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util/idxmap.h"

#define IDXMAP_MIN_CAP 64

void idxmap_init(struct idxmap *m)
{
	m->slots = NULL;
	m->mask = 0;
	m->count = 0;
}

void idxmap_release(struct idxmap *m)
{
	free(m->slots);
	idxmap_init(m);
}

int idxmap_find(const struct idxmap *m, uint64_t hash, idxmap_eq_fn eq, const void *ctx,
		uint32_t *pos)
{
	size_t i;

	if (!m->slots)
		return 0;
	for (i = hash & m->mask; m->slots[i].pos1; i = (i + 1) & m->mask) {
		if (m->slots[i].hash == hash && eq(ctx, m->slots[i].pos1 - 1)) {
			*pos = m->slots[i].pos1 - 1;
			return 1;
		}
	}
	return 0;
}

static void place(struct idxmap_slot *slots, size_t mask, uint64_t hash, uint32_t pos1)
{
	size_t i = hash & mask;

	while (slots[i].pos1)
		i = (i + 1) & mask;
	slots[i].hash = hash;
	slots[i].pos1 = pos1;
}

static int grow(struct idxmap *m)
{
	size_t cap = m->slots ? (m->mask + 1) * 2 : IDXMAP_MIN_CAP;
	struct idxmap_slot *slots;
	size_t i;

	if (cap > SIZE_MAX / sizeof(*slots))
		return -ENOMEM;
	slots = calloc(cap, sizeof(*slots));
	if (!slots)
		return -ENOMEM;
	for (i = 0; m->slots && i <= m->mask; i++) {
		if (m->slots[i].pos1)
			place(slots, cap - 1, m->slots[i].hash, m->slots[i].pos1);
	}
	free(m->slots);
	m->slots = slots;
	m->mask = cap - 1;
	return 0;
}

int idxmap_insert(struct idxmap *m, uint64_t hash, uint32_t pos)
{
	int err;

	if (pos == UINT32_MAX)
		return -E2BIG;
	/* Half full at most keeps linear probe runs short. */
	if (!m->slots || (m->count + 1) * 2 > m->mask + 1) {
		err = grow(m);
		if (err)
			return err;
	}
	place(m->slots, m->mask, hash, pos + 1);
	m->count++;
	return 0;
}

#define FNV_PRIME 0x100000001b3ULL
#define WORD_MULT 0x9e3779b97f4a7c15ULL /* 2^64 over the golden ratio: odd, dense */

/* Whole 8-byte words first, one multiply each (the profile builder hashes every frame of every
 * sample: a multiply per byte was a tenth of the agent's time per sample). Each word's full
 * 128-bit product has its high half, which every bit of the word reaches, folded into its low
 * half: the index takes its slot from the low bits. The bytes left over go in one at a time, as
 * in FNV-1a. */
uint64_t idxmap_hash(uint64_t h, const void *data, size_t len)
{
	const unsigned char *p = data;
	unsigned __int128 m;
	uint64_t w;
	size_t i;

	for (; len >= sizeof(w); len -= sizeof(w), p += sizeof(w)) {
		memcpy(&w, p, sizeof(w));
		m = (unsigned __int128)(h ^ w) * WORD_MULT;
		h = (uint64_t)m ^ (uint64_t)(m >> 64);
	}
	for (i = 0; i < len; i++) {
		h ^= p[i];
		h *= FNV_PRIME;
	}
	return h;
}
