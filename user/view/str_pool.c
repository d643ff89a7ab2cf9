// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* String interning: an open-addressing hash (FNV-1a) over offsets into one growing blob. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "view/str_pool.h"

#define EMPTY UINT32_MAX

struct str_pool {
	char *blob;
	size_t len, cap;
	uint32_t *offs; /* id -> offset in blob */
	size_t n, offs_cap;
	uint32_t *slots; /* hash slot -> id, EMPTY when free */
	size_t nslots; /* a power of two, kept above twice n */
};

static uint64_t hash(const char *s, size_t len)
{
	uint64_t h = 14695981039346656037ull;
	size_t i;

	for (i = 0; i < len; i++)
		h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
	return h;
}

struct str_pool *str_pool_new(void)
{
	struct str_pool *sp = calloc(1, sizeof(*sp));

	if (!sp)
		goto out_nomem;
	sp->nslots = 64;
	sp->slots = malloc(sp->nslots * sizeof(*sp->slots));
	if (!sp->slots)
		goto out_free;
	memset(sp->slots, 0xff, sp->nslots * sizeof(*sp->slots));
	return sp;
out_free:
	free(sp);
out_nomem:
	errno = ENOMEM;
	return NULL;
}

void str_pool_free(struct str_pool *sp)
{
	if (!sp)
		return;
	free(sp->blob);
	free(sp->offs);
	free(sp->slots);
	free(sp);
}

static int grow_slots(struct str_pool *sp)
{
	size_t n = sp->nslots * 2, i, j;
	uint32_t *slots = malloc(n * sizeof(*slots));
	const char *s;

	if (!slots)
		return -ENOMEM;
	memset(slots, 0xff, n * sizeof(*slots));
	for (i = 0; i < sp->n; i++) {
		s = sp->blob + sp->offs[i];
		for (j = hash(s, strlen(s)) & (n - 1); slots[j] != EMPTY; j = (j + 1) & (n - 1))
			;
		slots[j] = (uint32_t)i;
	}
	free(sp->slots);
	sp->slots = slots;
	sp->nslots = n;
	return 0;
}

static int append(struct str_pool *sp, const char *s, size_t len)
{
	size_t cap;
	void *p;

	if (sp->n == sp->offs_cap) {
		cap = sp->offs_cap ? sp->offs_cap * 2 : 64;
		p = realloc(sp->offs, cap * sizeof(*sp->offs));
		if (!p)
			return -ENOMEM;
		sp->offs = p;
		sp->offs_cap = cap;
	}
	if (sp->len + len + 1 > sp->cap) {
		cap = sp->cap ? sp->cap : 1024;
		while (cap < sp->len + len + 1)
			cap *= 2;
		if (cap > UINT32_MAX)
			return -ENOMEM;
		p = realloc(sp->blob, cap);
		if (!p)
			return -ENOMEM;
		sp->blob = p;
		sp->cap = cap;
	}
	memcpy(sp->blob + sp->len, s, len);
	sp->blob[sp->len + len] = '\0';
	sp->offs[sp->n] = (uint32_t)sp->len;
	sp->len += len + 1;
	return 0;
}

int str_pool_intern(struct str_pool *sp, const char *s, size_t len, uint32_t *id)
{
	size_t j, mask;
	const char *t;
	int err;

	if (2 * (sp->n + 1) > sp->nslots && (err = grow_slots(sp)))
		return err;
	mask = sp->nslots - 1;
	for (j = hash(s, len) & mask; sp->slots[j] != EMPTY; j = (j + 1) & mask) {
		t = sp->blob + sp->offs[sp->slots[j]];
		if (!strncmp(t, s, len) && t[len] == '\0' && !memchr(s, '\0', len)) {
			*id = sp->slots[j];
			return 0;
		}
	}
	err = append(sp, s, len);
	if (err)
		return err;
	sp->slots[j] = (uint32_t)sp->n;
	*id = (uint32_t)sp->n++;
	return 0;
}

const char *str_pool_get(const struct str_pool *sp, uint32_t id)
{
	return id < sp->n ? sp->blob + sp->offs[id] : "";
}

size_t str_pool_count(const struct str_pool *sp)
{
	return sp->n;
}

size_t str_pool_bytes(const struct str_pool *sp)
{
	return sizeof(*sp) + sp->cap + sp->offs_cap * sizeof(*sp->offs) +
	       sp->nslots * sizeof(*sp->slots);
}
