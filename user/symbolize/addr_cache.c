// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Symbolized-address cache: open addressing over (device, inode, offset); each entry owns one
 * allocation holding its strings. The table starts small and doubles as it fills, up to twice the
 * bound; emptied whole, and back to its first size, when full. Inserts land on random slots, so
 * a table allocated at its largest (2.4 MB at the default bound) was soon resident whole however
 * few addresses the node's profiles held. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "symbolize/addr_cache.h"

/* Slots of a new or emptied table (the load factor stays at most 1/2 at every size). */
#define FIRST_CAP 1024

struct addr_entry {
	struct addr_cache_key key;
	int used;
	int nlines;
	int lineno[SYM_MAX_INLINE];
	/* function and file of each line, then the build id, as NUL-terminated strings ("" for
	 * NULL), in one allocation. */
	char *strings;
};

struct addr_cache {
	struct addr_entry *slots;
	size_t cap, count, max, max_cap;
};

static size_t first_cap(const struct addr_cache *c)
{
	return c->max_cap < FIRST_CAP ? c->max_cap : FIRST_CAP;
}

struct addr_cache *addr_cache_new(size_t max_entries)
{
	struct addr_cache *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->max = max_entries ? max_entries : 1;
	c->max_cap = 16;
	while (c->max_cap < 2 * c->max)
		c->max_cap *= 2;
	c->cap = first_cap(c);
	c->slots = calloc(c->cap, sizeof(*c->slots));
	if (!c->slots) {
		free(c);
		errno = ENOMEM;
		return NULL;
	}
	return c;
}

/* Frees every entry's strings and goes back to a table of the first size (when that cannot be
 * allocated, the old one stays, emptied). */
static void clear(struct addr_cache *c)
{
	struct addr_entry *small = NULL;
	size_t i;

	for (i = 0; i < c->cap; i++)
		free(c->slots[i].strings);
	if (c->cap > first_cap(c))
		small = calloc(first_cap(c), sizeof(*small));
	if (small) {
		free(c->slots);
		c->slots = small;
		c->cap = first_cap(c);
	} else {
		memset(c->slots, 0, c->cap * sizeof(*c->slots));
	}
	c->count = 0;
}

void addr_cache_free(struct addr_cache *c)
{
	size_t i;

	if (!c)
		return;
	for (i = 0; i < c->cap; i++)
		free(c->slots[i].strings);
	free(c->slots);
	free(c);
}

static size_t slot_of(const struct addr_cache *c, const struct addr_cache_key *k)
{
	uint64_t h = k->offset * 0x9e3779b97f4a7c15ull ^ k->inode * 0xbf58476d1ce4e5b9ull ^
		     k->dev * 0x94d049bb133111ebull;
	size_t i = (h ^ (h >> 29)) & (c->cap - 1);

	while (c->slots[i].used && memcmp(&c->slots[i].key, k, sizeof(*k)))
		i = (i + 1) & (c->cap - 1);
	return i;
}

/* Doubles the table, entries rehashed. Failing to allocate leaves it as it is (still at most
 * half full: it is emptied when it holds max). */
static void grow(struct addr_cache *c)
{
	struct addr_entry *old = c->slots, *bigger = calloc(2 * c->cap, sizeof(*bigger));
	size_t old_cap = c->cap, i;

	if (!bigger)
		return;
	c->slots = bigger;
	c->cap = 2 * old_cap;
	for (i = 0; i < old_cap; i++)
		if (old[i].used)
			c->slots[slot_of(c, &old[i].key)] = old[i];
	free(old);
}

/* Next string in an entry's blob. */
static const char *next_string(const char **p)
{
	const char *s = *p;

	*p += strlen(s) + 1;
	return s;
}

int addr_cache_get(struct addr_cache *c, const struct addr_cache_key *key, struct sym_frame *out,
		   const char **build_id)
{
	const struct addr_entry *e = &c->slots[slot_of(c, key)];
	const char *p, *s;
	int i;

	if (!e->used)
		return 0;
	p = e->strings;
	for (i = 0; i < e->nlines; i++) {
		s = next_string(&p);
		out->lines[i].function = *s ? s : NULL;
		s = next_string(&p);
		out->lines[i].file = *s ? s : NULL;
		out->lines[i].line = e->lineno[i];
	}
	out->nlines = e->nlines;
	s = next_string(&p);
	*build_id = *s ? s : NULL;
	return 1;
}

static size_t len0(const char *s)
{
	return (s ? strlen(s) : 0) + 1;
}

static char *append(char *dst, const char *s)
{
	size_t n = len0(s);

	memcpy(dst, s ? s : "", n);
	return dst + n;
}

void addr_cache_put(struct addr_cache *c, const struct addr_cache_key *key,
		    const struct sym_frame *frame, const char *build_id)
{
	struct addr_entry *e;
	size_t size = len0(build_id), i;
	char *p;

	for (i = 0; i < (size_t)frame->nlines; i++)
		size += len0(frame->lines[i].function) + len0(frame->lines[i].file);
	if (c->count >= c->max)
		clear(c);
	else if (2 * (c->count + 1) > c->cap && c->cap < c->max_cap)
		grow(c);
	e = &c->slots[slot_of(c, key)];
	if (e->used)
		return; /* already there */
	e->strings = malloc(size);
	if (!e->strings)
		return;
	p = e->strings;
	for (i = 0; i < (size_t)frame->nlines; i++) {
		p = append(p, frame->lines[i].function);
		p = append(p, frame->lines[i].file);
		e->lineno[i] = frame->lines[i].line;
	}
	append(p, build_id);
	e->key = *key;
	e->nlines = frame->nlines;
	e->used = 1;
	c->count++;
}

size_t addr_cache_count(const struct addr_cache *c)
{
	return c->count;
}
