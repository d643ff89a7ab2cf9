// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Loads JIT perf maps into a sorted array and finds the entry containing an address. */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "symbolize/perf_map.h"

struct perf_map_entry {
	uint64_t start, size;
	char *name;
	size_t seq; /* line order, so the later of two entries at one address wins */
};

struct perf_map {
	struct perf_map_entry *ents;
	size_t count;
};

static int parse_line(char *line, size_t seq, struct perf_map_entry *e)
{
	int name_at = -1;
	size_t len;

	if (sscanf(line, "%" SCNx64 " %" SCNx64 " %n", &e->start, &e->size, &name_at) < 2 ||
	    name_at < 0 || !line[name_at] || !e->size)
		return 0;
	len = strcspn(line + name_at, "\r\n");
	e->name = strndup(line + name_at, len);
	e->seq = seq;
	return e->name ? 1 : -ENOMEM;
}

static int cmp_entry(const void *a, const void *b)
{
	const struct perf_map_entry *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Sorts and keeps only the last entry of each start address. */
static void sort_dedup(struct perf_map *pm)
{
	size_t i, out = 0;

	qsort(pm->ents, pm->count, sizeof(*pm->ents), cmp_entry);
	for (i = 0; i < pm->count; i++) {
		if (i + 1 < pm->count && pm->ents[i + 1].start == pm->ents[i].start) {
			free(pm->ents[i].name);
			continue;
		}
		pm->ents[out++] = pm->ents[i];
	}
	pm->count = out;
}

static int read_entries(struct perf_map *pm, FILE *f)
{
	struct perf_map_entry e, *grown;
	size_t cap = 0, seq = 0;
	char *line = NULL;
	size_t line_cap = 0;
	int err = 0, n;

	while (pm->count < PERF_MAP_MAX_ENTRIES && getline(&line, &line_cap, f) > 0) {
		n = parse_line(line, seq++, &e);
		if (n <= 0) {
			err = n;
			if (err)
				break;
			continue;
		}
		if (pm->count == cap) {
			cap = cap ? cap * 2 : 256;
			grown = realloc(pm->ents, cap * sizeof(*grown));
			if (!grown) {
				free(e.name);
				err = -ENOMEM;
				break;
			}
			pm->ents = grown;
		}
		pm->ents[pm->count++] = e;
	}
	free(line);
	return err;
}

struct perf_map *perf_map_new(const char *path)
{
	struct perf_map *pm;
	FILE *f;
	int err;

	f = fopen(path, "re");
	if (!f)
		return NULL;
	pm = calloc(1, sizeof(*pm));
	if (!pm) {
		fclose(f);
		errno = ENOMEM;
		return NULL;
	}
	err = read_entries(pm, f);
	fclose(f);
	if (err) {
		perf_map_free(pm);
		errno = -err;
		return NULL;
	}
	sort_dedup(pm);
	return pm;
}

void perf_map_free(struct perf_map *pm)
{
	size_t i;

	if (!pm)
		return;
	for (i = 0; i < pm->count; i++)
		free(pm->ents[i].name);
	free(pm->ents);
	free(pm);
}

const char *perf_map_find(const struct perf_map *pm, uint64_t addr, uint64_t *start,
			  uint64_t *size)
{
	size_t lo = 0, hi = pm->count;
	const struct perf_map_entry *e;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (pm->ents[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	e = &pm->ents[lo - 1];
	if (addr - e->start >= e->size)
		return NULL;
	if (start)
		*start = e->start;
	if (size)
		*size = e->size;
	return e->name;
}

size_t perf_map_count(const struct perf_map *pm)
{
	return pm->count;
}

int perf_map_nspid(const char *proc_root, pid_t pid)
{
	char path[512], *line = NULL;
	size_t cap = 0;
	int nspid = pid;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%d/status", proc_root, (int)pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (getline(&line, &cap, f) > 0) {
		char *p, *tok, *save = NULL;

		if (strncmp(line, "NSpid:", 6))
			continue;
		/* "NSpid:\t4242\t17\t1": the last number is the innermost namespace */
		for (p = line + 6; (tok = strtok_r(p, " \t\n", &save)); p = NULL)
			nspid = atoi(tok);
		break;
	}
	free(line);
	fclose(f);
	return nspid > 0 ? nspid : pid;
}

int perf_map_path(const char *proc_root, const char *dir, pid_t pid, char *buf, size_t len)
{
	int nspid = perf_map_nspid(proc_root, pid);
	int n;

	if (nspid < 0)
		return nspid;
	n = snprintf(buf, len, "%s/%d/root%s/perf-%d.map", proc_root, (int)pid, dir, nspid);
	if (n < 0 || (size_t)n >= len)
		return -ENAMETOOLONG;
	return 0;
}
