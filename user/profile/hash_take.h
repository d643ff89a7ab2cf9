/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* A window's stack hash map (u64 hash -> fixed-size value) taken whole: every entry read and
 * deleted in a few batch syscalls, then found by hash in user space. Replaces a lookup syscall
 * per sample key and the walk that cleared the map after. */
#ifndef SPANPROF_HASH_TAKE_H
#define SPANPROF_HASH_TAKE_H

#include <stddef.h>
#include <stdint.h>

struct hash_take_entry {
	uint64_t key;
	uint32_t slot; /* index of its value in values */
};

struct hash_take {
	size_t value_size;
	uint32_t max; /* entries held at most: the map's size */
	uint32_t n, cap; /* entries held, entries allocated (grown on demand up to max) */
	struct hash_take_entry *index; /* n entries sorted by key */
	uint64_t *keys; /* cap keys, as the kernel wrote them */
	unsigned char *values; /* cap values */
	int complete; /* the last take read the map to its end, leaving it empty */
	uint64_t truncated; /* takes that stopped at max with entries left in the map */
};

void hash_take_init(struct hash_take *t, size_t value_size, uint32_t max);
void hash_take_release(struct hash_take *t);

/* Reads and deletes every entry of the hash map fd (keys of 8 bytes, values of value_size),
 * up to max, replacing what t held; t->complete says whether the map is now empty. Memory
 * follows the need: at most max entries, and buffers four times bigger than the last take
 * needed are freed. Returns 0; -EOPNOTSUPP when the kernel has no batch operations on this map
 * (t is then empty and the map untouched: read it key by key); -ENOMEM, or the -errno of a
 * failed batch (t holds what was read before it). */
int hash_take_map(struct hash_take *t, int fd);

/* The value of key, or NULL when the map did not hold it. */
const void *hash_take_find(const struct hash_take *t, uint64_t key);

#endif /* SPANPROF_HASH_TAKE_H */
