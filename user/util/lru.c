// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Intrusive hashed LRU list (see lru.h): a sentinel-headed ring plus chained hash buckets. */
#include <errno.h>
#include <stdlib.h>

#include "util/lru.h"

/* Beyond this many buckets chains just grow longer; it bounds the table for huge limits. */
#define LRU_MAX_BUCKETS (1u << 16)

static size_t bucket_of(const struct lru *l, uint64_t k1, uint64_t k2)
{
	uint64_t h = (k1 ^ (k2 * 0x9e3779b97f4a7c15ull)) * 0xff51afd7ed558ccdull;

	return (size_t)(h >> 32) & (l->nbuckets - 1);
}

int lru_init(struct lru *l, size_t expected)
{
	size_t n = 16;

	while (n < expected && n < LRU_MAX_BUCKETS)
		n *= 2;
	l->buckets = calloc(n, sizeof(*l->buckets));
	if (!l->buckets)
		return -ENOMEM;
	l->nbuckets = n;
	l->count = 0;
	l->head.prev = l->head.next = &l->head;
	return 0;
}

void lru_release(struct lru *l)
{
	if (!l)
		return;
	free(l->buckets);
	l->buckets = NULL;
	l->nbuckets = 0;
	l->count = 0;
}

struct lru_node *lru_find(const struct lru *l, uint64_t k1, uint64_t k2)
{
	struct lru_node *n = l->buckets[bucket_of(l, k1, k2)];

	while (n && (n->k1 != k1 || n->k2 != k2))
		n = n->hnext;
	return n;
}

static void ring_unlink(struct lru_node *n)
{
	n->prev->next = n->next;
	n->next->prev = n->prev;
}

static void ring_push_front(struct lru *l, struct lru_node *n)
{
	n->next = l->head.next;
	n->prev = &l->head;
	l->head.next->prev = n;
	l->head.next = n;
}

void lru_touch(struct lru *l, struct lru_node *n)
{
	ring_unlink(n);
	ring_push_front(l, n);
}

void lru_add(struct lru *l, struct lru_node *n)
{
	size_t b = bucket_of(l, n->k1, n->k2);

	n->hnext = l->buckets[b];
	l->buckets[b] = n;
	ring_push_front(l, n);
	l->count++;
}

void lru_del(struct lru *l, struct lru_node *n)
{
	struct lru_node **pp = &l->buckets[bucket_of(l, n->k1, n->k2)];

	while (*pp && *pp != n)
		pp = &(*pp)->hnext;
	if (*pp)
		*pp = n->hnext;
	ring_unlink(n);
	n->prev = n->next = n->hnext = NULL;
	l->count--;
}

struct lru_node *lru_oldest(const struct lru *l)
{
	return l->head.prev == &l->head ? NULL : l->head.prev;
}

struct lru_node *lru_newer(const struct lru *l, const struct lru_node *n)
{
	return n->prev == &l->head ? NULL : n->prev;
}
