/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Intrusive hashed LRU list keyed by two 64-bit words: callers embed struct lru_node and own
 * (allocate, free) the entries; the list only links them. */
#ifndef SPANPROF_LRU_H
#define SPANPROF_LRU_H

#include <stddef.h>
#include <stdint.h>

#define lru_entry(ptr, type, member) ((type *)((char *)(ptr)-offsetof(type, member)))

struct lru_node {
	struct lru_node *prev, *next; /* recency ring: head.next newest, head.prev oldest */
	struct lru_node *hnext; /* hash chain */
	uint64_t k1, k2;
};

struct lru {
	struct lru_node head;
	struct lru_node **buckets;
	size_t nbuckets; /* a power of two */
	size_t count;
};

/* Sizes the hash for about `expected` entries. Returns 0 or -ENOMEM. */
int lru_init(struct lru *l, size_t expected);

/* Frees the hash; the entries still linked are the caller's to free first. NULL-safe. */
void lru_release(struct lru *l);

/* The entry with key (k1, k2), or NULL. Does not change its recency. */
struct lru_node *lru_find(const struct lru *l, uint64_t k1, uint64_t k2);

/* Marks n most recently used. */
void lru_touch(struct lru *l, struct lru_node *n);

/* Links n (with n->k1, n->k2 set, not already linked) as most recently used. */
void lru_add(struct lru *l, struct lru_node *n);

/* Unlinks n. */
void lru_del(struct lru *l, struct lru_node *n);

/* The least recently used entry, or NULL when empty. */
struct lru_node *lru_oldest(const struct lru *l);

/* The entry used next after n (towards the most recent), or NULL after the most recent. Walking
 * from lru_oldest() with this visits entries in eviction order. */
struct lru_node *lru_newer(const struct lru *l, const struct lru_node *n);

#endif /* SPANPROF_LRU_H */
