// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The name caches' byte budget and its fair share between users (interp_budget.h). */
#include <errno.h>
#include <stdlib.h>

#include "interp/interp_budget.h"
#include "util/log.h"
#include "util/lru.h"

/* Users told apart in the hash; more just make its chains longer. */
#define EXPECTED_USERS 64

struct holder {
	struct lru_node node; /* k1 = uid */
	uint64_t bytes[INTERP_CACHE__KINDS]; /* entries charged, by cache */
};

struct cache_ref {
	void *cache;
	interp_budget_evict_fn evict;
	size_t fixed;
};

struct interp_budget {
	struct lru holders; /* users holding entries; recency unused */
	struct cache_ref caches[INTERP_CACHE__KINDS];
	uint64_t fixed; /* the caches' fixed bytes and this structure with its hash */
	struct interp_budget_stats stats;
};

struct interp_budget *interp_budget_new(uint64_t max_bytes)
{
	struct interp_budget *b = calloc(1, sizeof(*b));

	if (!b || lru_init(&b->holders, EXPECTED_USERS)) {
		free(b);
		errno = ENOMEM;
		return NULL;
	}
	b->stats.max_bytes = max_bytes;
	b->stats.own_bytes = sizeof(*b) + b->holders.nbuckets * sizeof(*b->holders.buckets);
	b->fixed = b->stats.own_bytes;
	b->stats.held = b->stats.own_bytes;
	return b;
}

void interp_budget_free(struct interp_budget *b)
{
	struct lru_node *n;

	if (!b)
		return;
	while ((n = lru_oldest(&b->holders))) {
		lru_del(&b->holders, n);
		free(lru_entry(n, struct holder, node));
	}
	lru_release(&b->holders);
	free(b);
}

int interp_budget_attach(struct interp_budget *b, enum interp_cache_kind kind, void *cache,
			 interp_budget_evict_fn evict, size_t fixed_bytes)
{
	if (b->stats.held + fixed_bytes > b->stats.max_bytes)
		return -ENOSPC;
	b->caches[kind] = (struct cache_ref){ cache, evict, fixed_bytes };
	b->fixed += fixed_bytes;
	b->stats.held += fixed_bytes;
	return 0;
}

void interp_budget_detach(struct interp_budget *b, enum interp_cache_kind kind, size_t fixed_bytes)
{
	b->caches[kind] = (struct cache_ref){ 0 };
	b->fixed -= fixed_bytes;
	b->stats.held -= fixed_bytes;
}

static struct holder *holder_of(const struct interp_budget *b, uid_t uid)
{
	struct lru_node *n = lru_find(&b->holders, (uint64_t)uid, 0);

	return n ? lru_entry(n, struct holder, node) : NULL;
}

static uint64_t holder_total(const struct holder *h)
{
	uint64_t sum = 0;
	int k;

	for (k = 0; h && k < INTERP_CACHE__KINDS; k++)
		sum += h->bytes[k];
	return sum;
}

/* The user holding the most bytes (uid itself when nobody else holds more). */
static uid_t top_holder(const struct interp_budget *b, uid_t uid, uint64_t mine)
{
	uint64_t best = mine, sum;
	struct lru_node *n;
	uid_t top = uid;

	for (n = lru_oldest(&b->holders); n; n = lru_newer(&b->holders, n)) {
		sum = holder_total(lru_entry(n, struct holder, node));
		if (sum > best) {
			best = sum;
			top = (uid_t)n->k1;
		}
	}
	return top;
}

/* Evicts one entry of victim, from the cache where it holds the most. */
static int evict_one(struct interp_budget *b, uid_t victim)
{
	const struct holder *h = holder_of(b, victim);
	int k, best = -1;

	for (k = 0; h && k < INTERP_CACHE__KINDS; k++)
		if (b->caches[k].evict && h->bytes[k] && (best < 0 || h->bytes[k] > h->bytes[best]))
			best = k;
	if (best < 0 || b->caches[best].evict(b->caches[best].cache, victim))
		return -ENOSPC;
	b->stats.evictions++;
	log_warn_from((long)victim, -ENOSPC,
		      "interpreter name caches at their budget (%llu bytes): names of uid %u "
		      "evicted, least recently used first",
		      (unsigned long long)b->stats.max_bytes, (unsigned int)victim);
	return 0;
}

/* Makes room for need more bytes of uid: its own entries go while it would hold more than its
 * share, else the top holder's. Returns 0 when one entry went, -EDQUOT or -ENOSPC when the
 * entry cannot be cached. */
static int make_room(struct interp_budget *b, uid_t uid, uint64_t need)
{
	uint64_t mine = holder_total(holder_of(b, uid));
	uint64_t users = b->holders.count + !mine;
	uint64_t room = b->stats.max_bytes > b->fixed ? b->stats.max_bytes - b->fixed : 0;
	uint64_t share = room / users;

	if (need > share)
		return users > 1 ? -EDQUOT : -ENOSPC;
	return evict_one(b, mine + need > share ? uid : top_holder(b, uid, mine));
}

static void refuse(struct interp_budget *b, uid_t uid, size_t bytes, int err)
{
	b->stats.refused++;
	if (err == -EDQUOT)
		b->stats.fair_refused++;
	log_warn_from((long)uid, err,
		      "interpreter name of %zu bytes for uid %u not cached: %s (budget %llu bytes, "
		      "--interp-cache-budget); read again at each sample",
		      bytes, (unsigned int)uid,
		      err == -EDQUOT ? "over its user's share" :
		      err == -ENOSPC ? "larger than the budget" :
				       "out of memory",
		      (unsigned long long)b->stats.max_bytes);
}

int interp_budget_take(struct interp_budget *b, enum interp_cache_kind kind, uid_t uid,
		       size_t bytes)
{
	struct holder *h = holder_of(b, uid);
	uint64_t need = bytes + (h ? 0 : sizeof(*h));
	int err;

	while (b->stats.held + need > b->stats.max_bytes) {
		err = make_room(b, uid, need);
		if (err) {
			refuse(b, uid, bytes, err);
			return err;
		}
		h = holder_of(b, uid); /* the eviction may have dropped uid's record */
		need = bytes + (h ? 0 : sizeof(*h));
	}
	if (!h) {
		h = calloc(1, sizeof(*h));
		if (!h) {
			refuse(b, uid, bytes, -ENOMEM);
			return -ENOMEM;
		}
		h->node.k1 = (uint64_t)uid;
		lru_add(&b->holders, &h->node);
		b->stats.own_bytes += sizeof(*h);
	}
	h->bytes[kind] += bytes;
	b->stats.held += need;
	return 0;
}

void interp_budget_give(struct interp_budget *b, enum interp_cache_kind kind, uid_t uid,
			size_t bytes)
{
	struct holder *h = holder_of(b, uid);

	if (!h)
		return;
	h->bytes[kind] -= bytes;
	b->stats.held -= bytes;
	if (holder_total(h))
		return;
	lru_del(&b->holders, &h->node);
	free(h);
	b->stats.own_bytes -= sizeof(*h);
	b->stats.held -= sizeof(*h);
}

void interp_budget_get_stats(const struct interp_budget *b, struct interp_budget_stats *out)
{
	*out = b->stats;
	out->users = b->holders.count;
}
