// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Loads /proc/kallsyms text symbols into a compact sorted table (see ksyms.h): per symbol, a
 * 32-bit offset from the start of its run and a 32-bit name offset into one string pool trimmed
 * to its length; a run is a stretch of symbols of one module within 4 GiB of its first. The
 * `__pfx_` symbols the kernel puts before each function (half of all) share their function's
 * name with a flag. A distribution kernel's 122,000 text symbols take 2.5 MB, where 16-byte
 * entries and every name spelt out took 5 MB. */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "symbolize/ksyms.h"
#include "util/sort_inplace.h"

#define PREFIX "__pfx_"
#define PREFIX_LEN (sizeof(PREFIX) - 1)
#define NAME_PREFIXED 0x80000000u /* in a name word: the name is PREFIX + the pooled one */
#define NO_MODULE UINT32_MAX

/* A stretch of the sorted symbols with one module, all within 4 GiB above base. */
struct ksym_run {
	uint64_t base; /* the address of its first symbol */
	uint32_t first; /* index of its first symbol */
	uint32_t module; /* pool offset of the module's name, NO_MODULE: the core kernel */
};

struct ksyms {
	uint32_t *delta; /* address - its run's base, sorted by address */
	uint32_t *name; /* pool offset, NAME_PREFIXED: with PREFIX before it */
	size_t count;
	struct ksym_run *runs;
	size_t nruns;
	char *pool;
	size_t pool_len;
};

/* A symbol as read: the table is built from these once they are sorted. */
struct ksym_entry {
	uint64_t addr;
	uint32_t name;
	uint32_t module;
};

struct ksyms_loader {
	struct ksym_entry *ents;
	size_t count, cap;
	char *pool;
	size_t pool_len, pool_cap;
	uint32_t last_mod; /* kallsyms lists a module's symbols together: share one string */
	uint32_t last_name; /* a function and its PREFIX symbol come together: share one string */
	size_t nonzero;
};

static int pool_add(struct ksyms_loader *ld, const char *s, uint32_t *off)
{
	size_t len = strlen(s) + 1;
	char *grown;

	if (ld->pool_len + len >= NAME_PREFIXED)
		return -E2BIG;
	if (ld->pool_len + len > ld->pool_cap) {
		size_t cap = ld->pool_cap ? ld->pool_cap + ld->pool_cap / 2 : 1 << 20;

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

/* The name word for name: the string of the symbol before it when they match (a function after
 * its PREFIX symbol, or the other way round), else a new one. */
static int name_add(struct ksyms_loader *ld, const char *name, uint32_t *word)
{
	uint32_t flag = 0;
	int err;

	if (!strncmp(name, PREFIX, PREFIX_LEN) && name[PREFIX_LEN]) {
		name += PREFIX_LEN;
		flag = NAME_PREFIXED;
	}
	if (ld->last_name != NO_MODULE && !strcmp(ld->pool + ld->last_name, name)) {
		*word = ld->last_name | flag;
		return 0;
	}
	err = pool_add(ld, name, &ld->last_name);
	*word = ld->last_name | flag;
	return err;
}

static int add_line(struct ksyms_loader *ld, const char *line)
{
	char name[KSYMS_NAME_MAX], mod[128] = "", type;
	struct ksym_entry *e;
	uint64_t addr;
	int err;

	if (sscanf(line, "%" SCNx64 " %c %511s [%127[^]]]", &addr, &type, name, mod) < 3)
		return 0; /* tolerate odd lines rather than losing all kernel symbols */
	if (type != 't' && type != 'T' && type != 'w' && type != 'W')
		return 0;
	if (ld->count == ld->cap) {
		size_t cap = ld->cap ? ld->cap + ld->cap / 2 : 4096;

		e = realloc(ld->ents, cap * sizeof(*e));
		if (!e)
			return -ENOMEM;
		ld->ents = e;
		ld->cap = cap;
	}
	e = &ld->ents[ld->count];
	e->addr = addr;
	e->module = NO_MODULE;
	err = name_add(ld, name, &e->name);
	if (err)
		return err;
	if (mod[0] && ld->last_mod != NO_MODULE && !strcmp(ld->pool + ld->last_mod, mod)) {
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

/* By address; aliases in file order (their names were pooled in that order). */
static int cmp_entry(const void *a, const void *b)
{
	const struct ksym_entry *x = a, *y = b;
	uint32_t xn = x->name & ~NAME_PREFIXED, yn = y->name & ~NAME_PREFIXED;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	if (xn != yn)
		return xn < yn ? -1 : 1;
	return (x->name & NAME_PREFIXED) ? -1 : (y->name & NAME_PREFIXED) ? 1 : 0;
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

static size_t count_runs(const struct ksym_entry *e, size_t n)
{
	size_t i, runs = n ? 1 : 0;
	uint64_t base = n ? e[0].addr : 0;

	for (i = 1; i < n; i++)
		if (e[i].module != e[i - 1].module || e[i].addr - base > UINT32_MAX) {
			runs++;
			base = e[i].addr;
		}
	return runs;
}

/* Sorts the entries in place and builds the table from them; the pool, trimmed to its length,
 * moves to the table. */
static struct ksyms *finish(struct ksyms_loader *ld)
{
	struct ksyms *ks = calloc(1, sizeof(*ks));
	struct ksym_run *run = NULL;
	size_t i;
	void *trimmed;

	if (!ks)
		return NULL;
	sort_inplace(ld->ents, ld->count, sizeof(*ld->ents), cmp_entry);
	ks->nruns = count_runs(ld->ents, ld->count);
	ks->runs = calloc(ks->nruns, sizeof(*ks->runs));
	ks->delta = malloc(ld->count * sizeof(*ks->delta));
	ks->name = malloc(ld->count * sizeof(*ks->name));
	if (!ks->runs || !ks->delta || !ks->name) {
		ksyms_free(ks);
		return NULL;
	}
	for (i = 0; i < ld->count; i++) {
		const struct ksym_entry *e = &ld->ents[i];

		if (!run || e->module != run->module || e->addr - run->base > UINT32_MAX) {
			run = run ? run + 1 : ks->runs;
			*run = (struct ksym_run){ e->addr, (uint32_t)i, e->module };
		}
		ks->delta[i] = (uint32_t)(e->addr - run->base);
		ks->name[i] = e->name;
	}
	ks->count = ld->count;
	trimmed = realloc(ld->pool, ld->pool_len);
	ks->pool = trimmed ?: ld->pool;
	ks->pool_len = ld->pool_len;
	ld->pool = NULL;
	return ks;
}

struct ksyms *ksyms_new(const char *path)
{
	struct ksyms_loader ld = { .last_mod = NO_MODULE, .last_name = NO_MODULE };
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
	if (ld.count > UINT32_MAX) {
		err = -E2BIG;
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
	free(ks->delta);
	free(ks->name);
	free(ks->runs);
	free(ks->pool);
	free(ks);
}

int ksyms_find(const struct ksyms *ks, uint64_t addr, struct ksym *out)
{
	const struct ksym_run *run;
	size_t lo = 0, hi = ks->nruns, end, i;
	uint32_t word;

	/* The last run that starts at or below addr... */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (ks->runs[mid].base <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return 0;
	run = &ks->runs[lo - 1];
	end = lo < ks->nruns ? ks->runs[lo].first : ks->count;
	/* ...and in it the last symbol at or below addr, which extends to the next one. */
	lo = run->first;
	hi = end;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (addr - run->base > UINT32_MAX || ks->delta[mid] <= addr - run->base)
			lo = mid + 1;
		else
			hi = mid;
	}
	i = lo - 1; /* lo > run->first: the run's first symbol is at its base <= addr */
	word = ks->name[i];
	out->addr = run->base + ks->delta[i];
	if (word & NAME_PREFIXED) {
		snprintf(out->buf, sizeof(out->buf), PREFIX "%s",
			 ks->pool + (word & ~NAME_PREFIXED));
		out->name = out->buf;
	} else {
		out->name = ks->pool + word;
	}
	out->module = run->module == NO_MODULE ? NULL : ks->pool + run->module;
	return 1;
}

size_t ksyms_count(const struct ksyms *ks)
{
	return ks->count;
}

size_t ksyms_bytes(const struct ksyms *ks)
{
	if (!ks)
		return 0;
	return ks->count * (sizeof(*ks->delta) + sizeof(*ks->name)) +
	       ks->nruns * sizeof(*ks->runs) + malloc_usable_size(ks->pool);
}
