// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Loads /proc/kallsyms text symbols into one sorted array of 16-byte entries plus a string pool
 * trimmed to its length (see ksyms.h): about 4.5 MB for a distribution kernel's 120,000 text
 * symbols, where pointers per entry and a pool left at its doubling size took 7 MB. */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "symbolize/ksyms.h"

/* Names are offsets into the pool (which may move while it grows): half a pointer each. */
struct ksym_entry {
	uint64_t addr;
	uint32_t name;
	uint32_t module; /* UINT32_MAX: core kernel */
};

struct ksyms {
	struct ksym_entry *ents; /* sorted by address */
	size_t count;
	char *pool;
};

struct ksyms_loader {
	struct ksym_entry *ents;
	size_t count, cap;
	char *pool;
	size_t pool_len, pool_cap;
	uint32_t last_mod; /* kallsyms lists a module's symbols together: share one string */
	size_t nonzero;
};

static int pool_add(struct ksyms_loader *ld, const char *s, uint32_t *off)
{
	size_t len = strlen(s) + 1;
	char *grown;

	if (ld->pool_len + len > UINT32_MAX)
		return -E2BIG;
	if (ld->pool_len + len > ld->pool_cap) {
		size_t cap = ld->pool_cap ? ld->pool_cap * 2 : 1 << 20;

		while (cap < ld->pool_len + len)
			cap *= 2;
		grown = realloc(ld->pool, cap);
		if (!grown)
			return -ENOMEM;
		ld->pool = grown;
		ld->pool_cap = cap;
	}
	memcpy(ld->pool + ld->pool_len, s, len);
	*off = (uint32_t)ld->pool_len;
	ld->pool_len += len;
	return 0;
}

static int add_line(struct ksyms_loader *ld, const char *line)
{
	char name[512], mod[128] = "", type;
	struct ksym_entry *e;
	uint64_t addr;
	int err;

	if (sscanf(line, "%" SCNx64 " %c %511s [%127[^]]]", &addr, &type, name, mod) < 3)
		return 0; /* tolerate odd lines rather than losing all kernel symbols */
	if (type != 't' && type != 'T' && type != 'w' && type != 'W')
		return 0;
	if (ld->count == ld->cap) {
		size_t cap = ld->cap ? ld->cap * 2 : 4096;

		e = realloc(ld->ents, cap * sizeof(*e));
		if (!e)
			return -ENOMEM;
		ld->ents = e;
		ld->cap = cap;
	}
	e = &ld->ents[ld->count];
	e->addr = addr;
	e->module = UINT32_MAX;
	err = pool_add(ld, name, &e->name);
	if (err)
		return err;
	if (mod[0] && ld->last_mod != UINT32_MAX && !strcmp(ld->pool + ld->last_mod, mod)) {
		e->module = ld->last_mod;
	} else if (mod[0]) {
		err = pool_add(ld, mod, &e->module);
		if (err)
			return err;
		ld->last_mod = e->module;
	}
	ld->nonzero += addr != 0;
	ld->count++;
	return 0;
}

static int cmp_entry(const void *a, const void *b)
{
	const struct ksym_entry *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return x->name < y->name ? -1 : x->name > y->name; /* keep file order among aliases */
}

static int read_file(struct ksyms_loader *ld, const char *path)
{
	char *line = NULL;
	size_t cap = 0;
	int err = 0;
	FILE *f;

	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (!err && getline(&line, &cap, f) > 0)
		err = add_line(ld, line);
	free(line);
	fclose(f);
	return err;
}

/* Sorts the entries and hands them and the pool, both trimmed to their length, to a struct
 * ksyms. */
static struct ksyms *finish(struct ksyms_loader *ld)
{
	struct ksyms *ks = calloc(1, sizeof(*ks));
	void *trimmed;

	if (!ks)
		return NULL;
	qsort(ld->ents, ld->count, sizeof(*ld->ents), cmp_entry);
	trimmed = realloc(ld->ents, ld->count * sizeof(*ld->ents));
	ks->ents = trimmed ?: ld->ents;
	trimmed = realloc(ld->pool, ld->pool_len);
	ks->pool = trimmed ?: ld->pool;
	ks->count = ld->count;
	ld->ents = NULL;
	ld->pool = NULL;
	return ks;
}

struct ksyms *ksyms_new(const char *path)
{
	struct ksyms_loader ld = { .last_mod = UINT32_MAX };
	struct ksyms *ks = NULL;
	int err;

	err = read_file(&ld, path);
	if (err)
		goto out_free;
	if (!ld.count) {
		err = -ENODATA;
		goto out_free;
	}
	if (!ld.nonzero) {
		err = -EACCES; /* kptr_restrict hides the addresses */
		goto out_free;
	}
	ks = finish(&ld);
	if (!ks)
		err = -ENOMEM;
out_free:
	free(ld.ents);
	free(ld.pool);
	if (err)
		errno = -err;
	return ks;
}

void ksyms_free(struct ksyms *ks)
{
	if (!ks)
		return;
	free(ks->ents);
	free(ks->pool);
	free(ks);
}

int ksyms_find(const struct ksyms *ks, uint64_t addr, struct ksym *out)
{
	const struct ksym_entry *e;
	size_t lo = 0, hi = ks->count;

	/* find the first symbol above addr; the one before it contains addr */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (ks->ents[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return 0;
	e = &ks->ents[lo - 1];
	out->addr = e->addr;
	out->name = ks->pool + e->name;
	out->module = e->module == UINT32_MAX ? NULL : ks->pool + e->module;
	return 1;
}

size_t ksyms_count(const struct ksyms *ks)
{
	return ks->count;
}

size_t ksyms_bytes(const struct ksyms *ks)
{
	return ks ? ks->count * sizeof(*ks->ents) + malloc_usable_size(ks->pool) : 0;
}
