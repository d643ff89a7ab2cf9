// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* One slot per listed profile; eviction by the oldest use under a byte budget. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "view/file_read.h"
#include "view/profile_cache.h"

struct slot {
	struct view_profile *p;
	uint64_t used; /* tick of the last use */
	int failed;
};

struct profile_cache {
	struct slot *slots;
	size_t n, max_file_bytes;
	uint64_t tick;
	struct profile_cache_stats stats;
};

struct profile_cache *profile_cache_new(size_t n, size_t max_bytes, size_t max_file_bytes)
{
	struct profile_cache *pc = calloc(1, sizeof(*pc));

	if (!pc || !(pc->slots = calloc(n + 1, sizeof(*pc->slots)))) {
		free(pc);
		errno = ENOMEM;
		return NULL;
	}
	pc->n = n;
	pc->max_file_bytes = max_file_bytes;
	pc->stats.max_bytes = max_bytes;
	return pc;
}

void profile_cache_free(struct profile_cache *pc)
{
	size_t i;

	if (!pc)
		return;
	for (i = 0; i < pc->n; i++)
		view_profile_free(pc->slots[i].p);
	free(pc->slots);
	free(pc);
}

/* Frees the least recently used profiles until need more bytes fit the budget. */
static void make_room(struct profile_cache *pc, size_t need)
{
	size_t i, oldest;

	while (pc->stats.bytes && pc->stats.bytes + need > pc->stats.max_bytes) {
		oldest = pc->n;
		for (i = 0; i < pc->n; i++)
			if (pc->slots[i].p &&
			    (oldest == pc->n || pc->slots[i].used < pc->slots[oldest].used))
				oldest = i;
		if (oldest == pc->n)
			return;
		pc->stats.bytes -= pc->slots[oldest].p->bytes;
		view_profile_free(pc->slots[oldest].p);
		pc->slots[oldest].p = NULL;
		pc->stats.evictions++;
	}
}

static struct view_profile *load(struct profile_cache *pc, const char *dir,
				 const struct profile_file *pf, struct problems *pr)
{
	char path[4096 + DATA_NAME_MAX], why[PROBLEM_WHY_MAX];
	struct view_profile *p;
	uint8_t *buf;
	size_t len;
	int err;

	snprintf(path, sizeof(path), "%s/%s", dir, pf->name);
	err = file_read_all(path, pc->max_file_bytes, &buf, &len);
	if (err) {
		problems_add(pr, pf->name, "cannot read: %s",
			     err == -EFBIG ? "larger than the file size limit" : strerror(-err));
		return NULL;
	}
	p = view_profile_decode(buf, len, pc->max_file_bytes, why, sizeof(why));
	free(buf);
	if (!p)
		problems_add(pr, pf->name, "%s", why);
	else if (p->kind != pf->kind)
		problems_add(pr, pf->name, "its sample type does not match its name");
	return p;
}

const struct view_profile *profile_cache_get(struct profile_cache *pc, const char *dir,
					     const struct data_dir *dd, size_t i,
					     struct problems *pr)
{
	struct slot *s;
	struct view_profile *p;

	if (i >= pc->n || i >= dd->nprofiles)
		return NULL;
	s = &pc->slots[i];
	s->used = ++pc->tick;
	if (s->p) {
		pc->stats.hits++;
		return s->p;
	}
	if (s->failed)
		return NULL;
	p = load(pc, dir, &dd->profiles[i], pr);
	if (!p) {
		s->failed = 1;
		pc->stats.failed++;
		return NULL;
	}
	pc->stats.loads++;
	make_room(pc, p->bytes);
	s->p = p;
	pc->stats.bytes += p->bytes;
	return p;
}

void profile_cache_get_stats(const struct profile_cache *pc, struct profile_cache_stats *out)
{
	*out = pc->stats;
}
