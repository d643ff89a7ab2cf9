// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Loads JIT perf maps into a sorted array and finds the entry containing an address. */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "symbolize/perf_map.h"
#include "util/proc_file.h"

struct perf_map_entry {
	uint64_t start, size;
	char *name;
	size_t seq; /* line order, so the later of two entries at one address wins */
};

struct perf_map {
	struct perf_map_entry *ents;
	size_t count;
	size_t bytes; /* heap held: the entry array and the names */
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

static int add_entry(struct perf_map *pm, struct perf_map_entry *e, size_t *cap)
{
	struct perf_map_entry *grown;

	if (pm->count == *cap) {
		*cap = *cap ? *cap * 2 : 256;
		grown = realloc(pm->ents, *cap * sizeof(*grown));
		if (!grown) {
			free(e->name);
			return -ENOMEM;
		}
		pm->ents = grown;
	}
	pm->ents[pm->count++] = *e;
	return 0;
}

/* Line-by-line reader over read(2) with a fixed buffer, so neither a huge file nor one endless
 * line can make it allocate more than the caps allow. */
struct reader {
	int fd;
	char buf[PERF_MAP_MAX_LINE + 1];
	size_t len; /* bytes in buf */
	size_t left; /* bytes still allowed to be read */
	int skipping; /* inside an over-long line: drop up to its newline */
	int eof, capped;
};

/* Next complete line (NUL-terminated, newline stripped) into r->buf; its length + 1 is
 * returned as *used. Returns 1, 0 at the end, or -errno. */
static int next_line(struct reader *r, size_t *used)
{
	char *nl;
	ssize_t n;

	for (;;) {
		nl = memchr(r->buf, '\n', r->len);
		if (nl && r->skipping) {
			r->len -= nl + 1 - r->buf;
			memmove(r->buf, nl + 1, r->len);
			r->skipping = 0;
			continue;
		}
		if (nl) {
			*nl = '\0';
			*used = nl + 1 - r->buf;
			return 1;
		}
		if (r->len == PERF_MAP_MAX_LINE) { /* an over-long line: skip it */
			r->skipping = 1;
			r->len = 0;
		}
		if (r->eof || !r->left) {
			r->capped |= !r->left && !r->eof;
			if (!r->len || r->skipping)
				return 0;
			r->buf[r->len] = '\0'; /* a last line without newline */
			*used = r->len;
			return 1;
		}
		n = read(r->fd, r->buf + r->len,
			 PERF_MAP_MAX_LINE - r->len < r->left ? PERF_MAP_MAX_LINE - r->len :
								r->left);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		r->eof = !n;
		r->len += n;
		r->left -= n;
	}
}

static int read_entries(struct perf_map *pm, struct reader *r, size_t max_lines)
{
	struct perf_map_entry e;
	size_t cap = 0, seq = 0, used = 0;
	int err = 0, n;

	while ((n = next_line(r, &used)) > 0) {
		if (seq == max_lines) {
			r->capped = 1;
			break;
		}
		n = parse_line(r->buf, seq++, &e);
		r->len -= used;
		memmove(r->buf, r->buf + used, r->len);
		if (n > 0)
			err = add_entry(pm, &e, &cap);
		else
			err = n;
		if (err)
			return err;
	}
	return n < 0 ? n : 0;
}

static void count_bytes(struct perf_map *pm)
{
	size_t i;

	pm->bytes = sizeof(*pm) + malloc_usable_size(pm->ents);
	for (i = 0; i < pm->count; i++)
		pm->bytes += malloc_usable_size(pm->ents[i].name);
}

size_t perf_map_bytes(const struct perf_map *pm)
{
	return pm ? pm->bytes : 0;
}

struct perf_map *perf_map_read_fd(int fd, const struct perf_map_limits *lim, int *capped)
{
	struct reader *r;
	struct perf_map *pm;
	int err = -ENOMEM;

	pm = calloc(1, sizeof(*pm));
	r = calloc(1, sizeof(*r));
	if (!pm || !r)
		goto out_free;
	r->fd = fd;
	r->left = lim && lim->max_bytes ? lim->max_bytes : PERF_MAP_DEFAULT_MAX_BYTES;
	err = read_entries(pm, r,
			   lim && lim->max_lines ? lim->max_lines : PERF_MAP_DEFAULT_MAX_LINES);
	if (capped)
		*capped = r->capped;
	if (err)
		goto out_free;
	free(r);
	sort_dedup(pm);
	count_bytes(pm);
	return pm;
out_free:
	free(r);
	perf_map_free(pm);
	errno = -err;
	return NULL;
}

struct perf_map *perf_map_new(const char *path)
{
	struct perf_map *pm;
	int fd;

	fd = proc_file_open(NULL, path, PROC_FILE_NO_SYMLINKS, NULL);
	if (fd < 0) {
		errno = -fd;
		return NULL;
	}
	pm = perf_map_read_fd(fd, NULL, NULL);
	close(fd);
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

const char *perf_map_find(const struct perf_map *pm, uint64_t addr, uint64_t *start, uint64_t *size)
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

int perf_map_open(const char *proc_root, const char *dir, pid_t pid)
{
	char root[512], path[512];
	int nspid = perf_map_nspid(proc_root, pid), n;

	if (nspid < 0)
		return nspid;
	n = snprintf(root, sizeof(root), "%s/%d/root", proc_root, (int)pid);
	if (n < 0 || (size_t)n >= sizeof(root))
		return -ENAMETOOLONG;
	n = snprintf(path, sizeof(path), "%s/perf-%d.map", dir, nspid);
	if (n < 0 || (size_t)n >= sizeof(path))
		return -ENAMETOOLONG;
	return proc_file_open_owned(proc_root, pid, root, path, NULL);
}
