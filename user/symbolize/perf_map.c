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
	struct perf_map_entry *ents; /* sorted by start, one per start */
	size_t count, cap;
	size_t lines; /* newline-terminated lines read so far (what the line cap counts) */
	size_t seq; /* lines parsed so far, an unfinished last one too: the next line's order */
	uint64_t offset; /* end of the last newline-terminated line read: appends start here */
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

/* Keeps only the last entry of each start address of sorted entries. */
static void sort_dedup_sorted(struct perf_map *pm)
{
	size_t i, out = 0;

	for (i = 0; i < pm->count; i++) {
		if (i + 1 < pm->count && pm->ents[i + 1].start == pm->ents[i].start) {
			free(pm->ents[i].name);
			continue;
		}
		pm->ents[out++] = pm->ents[i];
	}
	pm->count = out;
}

static void sort_dedup(struct perf_map *pm)
{
	qsort(pm->ents, pm->count, sizeof(*pm->ents), cmp_entry);
	sort_dedup_sorted(pm);
}

static int add_entry(struct perf_map *pm, struct perf_map_entry *e)
{
	struct perf_map_entry *grown;
	size_t cap = pm->cap ? pm->cap * 2 : 256;

	if (pm->count == pm->cap) {
		grown = realloc(pm->ents, cap * sizeof(*grown));
		if (!grown) {
			free(e->name);
			return -ENOMEM;
		}
		pm->ents = grown;
		pm->cap = cap;
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
	uint64_t base; /* file offset of buf[0] */
	uint64_t committed; /* file offset just past the last newline consumed */
	int skipping; /* inside an over-long line: drop up to its newline */
	int eof, capped;
};

/* Drops the first n bytes of the buffer. */
static void consume(struct reader *r, size_t n)
{
	r->base += n;
	r->len -= n;
	memmove(r->buf, r->buf + n, r->len);
}

/* Next complete line (NUL-terminated, newline stripped) into r->buf; its length + 1 is
 * returned as *used. Returns 1, 2 for a last line without newline, 0 at the end, or -errno. */
static int next_line(struct reader *r, size_t *used)
{
	char *nl;
	ssize_t n;

	for (;;) {
		nl = memchr(r->buf, '\n', r->len);
		if (nl && r->skipping) {
			r->committed = r->base + (nl + 1 - r->buf);
			consume(r, nl + 1 - r->buf);
			r->skipping = 0;
			continue;
		}
		if (nl) {
			*nl = '\0';
			*used = nl + 1 - r->buf;
			r->committed = r->base + *used;
			return 1;
		}
		if (r->len == PERF_MAP_MAX_LINE) { /* an over-long line: skip it */
			r->skipping = 1;
			consume(r, r->len);
		}
		if (r->eof || !r->left) {
			r->capped |= !r->left && !r->eof;
			if (!r->len || r->skipping)
				return 0;
			r->buf[r->len] = '\0'; /* a last line without newline */
			*used = r->len;
			return 2;
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

/* Appends the entries of the lines r reads (numbered from pm->lines) to pm->ents, unsorted. */
static int read_entries(struct perf_map *pm, struct reader *r, size_t max_lines)
{
	struct perf_map_entry e;
	size_t used = 0;
	int err = 0, n;

	while ((n = next_line(r, &used)) > 0) {
		if (pm->lines >= max_lines) {
			r->capped = 1;
			break;
		}
		pm->lines += n == 1; /* an unfinished line is read again once complete */
		n = parse_line(r->buf, pm->seq++, &e);
		consume(r, used);
		if (n > 0)
			err = add_entry(pm, &e);
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

static size_t max_bytes(const struct perf_map_limits *lim)
{
	return lim && lim->max_bytes ? lim->max_bytes : PERF_MAP_DEFAULT_MAX_BYTES;
}

static size_t max_lines(const struct perf_map_limits *lim)
{
	return lim && lim->max_lines ? lim->max_lines : PERF_MAP_DEFAULT_MAX_LINES;
}

/* Reads fd from pm->offset into pm's unsorted tail (entries from `from` on). */
static int read_from(struct perf_map *pm, int fd, const struct perf_map_limits *lim, int *capped)
{
	struct reader *r = calloc(1, sizeof(*r));
	int err;

	if (!r)
		return -ENOMEM;
	r->fd = fd;
	r->base = r->committed = pm->offset;
	r->left = pm->offset < max_bytes(lim) ? max_bytes(lim) - pm->offset : 0;
	if (lseek(fd, (off_t)pm->offset, SEEK_SET) < 0)
		err = -errno;
	else
		err = read_entries(pm, r, max_lines(lim));
	if (capped)
		*capped = r->capped;
	pm->offset = r->committed;
	free(r);
	return err;
}

struct perf_map *perf_map_read_fd(int fd, const struct perf_map_limits *lim, int *capped)
{
	struct perf_map *pm = calloc(1, sizeof(*pm));
	int err;

	if (!pm) {
		errno = ENOMEM;
		return NULL;
	}
	err = read_from(pm, fd, lim, capped);
	if (err) {
		perf_map_free(pm);
		errno = -err;
		return NULL;
	}
	sort_dedup(pm);
	count_bytes(pm);
	return pm;
}

/* Merges the sorted entries [0, old) with the sorted tail [old, count): by start, then line
 * order, so sort_dedup's rule (the later line wins) holds for the whole map. */
static int merge_tail(struct perf_map *pm, size_t old)
{
	struct perf_map_entry *out, *a = pm->ents, *b = pm->ents + old;
	size_t na = old, nb = pm->count - old, i = 0, j = 0, k = 0;

	out = malloc((pm->count ? pm->count : 1) * sizeof(*out));
	if (!out)
		return -ENOMEM;
	while (i < na || j < nb)
		out[k++] = j == nb || (i < na && cmp_entry(&a[i], &b[j]) <= 0) ? a[i++] : b[j++];
	memcpy(pm->ents, out, pm->count * sizeof(*out));
	free(out);
	return 0;
}

int perf_map_append_fd(struct perf_map *pm, int fd, const struct perf_map_limits *lim, int *capped)
{
	size_t old = pm->count, old_lines = pm->lines, old_seq = pm->seq, i;
	uint64_t old_offset = pm->offset;
	struct perf_map tail;
	int err;

	if (pm->offset >= max_bytes(lim) || pm->lines >= max_lines(lim))
		return -ENOSPC; /* full already: what was appended past the cap is not read */
	err = read_from(pm, fd, lim, capped);

	if (pm->count == old)
		return err;
	/* Sort the new lines alone, then merge: linear in the map, not n log n per append. */
	tail = (struct perf_map){ .ents = pm->ents + old, .count = pm->count - old };
	qsort(tail.ents, tail.count, sizeof(*tail.ents), cmp_entry);
	if (merge_tail(pm, old)) {
		/* The map stays as it was before the append (sorted), to be appended to again. */
		for (i = old; i < pm->count; i++)
			free(pm->ents[i].name);
		pm->count = old;
		pm->lines = old_lines;
		pm->seq = old_seq;
		pm->offset = old_offset;
		return -ENOMEM;
	}
	sort_dedup_sorted(pm);
	count_bytes(pm);
	return err;
}

uint64_t perf_map_offset(const struct perf_map *pm)
{
	return pm->offset;
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
