// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Parses /proc/PID/maps text into a sorted array of executable mappings (see proc_maps.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "discover/proc_maps.h"

/* A maps file larger than this is treated as malformed: it keeps memory bounded for processes
 * with millions of mappings, which we could not symbolize cheaply anyway. */
#define PROC_MAPS_MAX_BYTES (64u << 20)

/* The kernel prints a newline in a path as "\012" (and escapes nothing else, so a path holding
 * those four characters reads the same: files are opened through map_files, where the path text
 * does not matter, and the decoded path is only shown and used for symbol file names). */
static char *decode_path(const char *text)
{
	char *out = strdup(text), *o = out;

	if (!out)
		return NULL;
	for (; *text; text++) {
		if (!strncmp(text, "\\012", 4)) {
			*o++ = '\n';
			text += 3;
		} else {
			*o++ = *text;
		}
	}
	*o = '\0';
	return out;
}

enum line_kind { LINE_SKIPPED = 0, LINE_FILE, LINE_ANON };

/* Parses one line "start-end perms offset major:minor inode [path]". Returns LINE_FILE for an
 * executable mapping with a path (stored in *m, path allocated), LINE_ANON for anonymous
 * executable memory (m->start and m->end set), LINE_SKIPPED, or -errno. */
static int parse_line(const char *line, size_t len, struct proc_map *m)
{
	unsigned int major, minor;
	char perms[8];
	int path_at = -1;
	char *buf;
	int n;

	buf = strndup(line, len);
	if (!buf)
		return -ENOMEM;
	n = sscanf(buf, "%" SCNx64 "-%" SCNx64 " %7s %" SCNx64 " %x:%x %" SCNu64 " %n", &m->start,
		   &m->end, perms, &m->offset, &major, &minor, &m->inode, &path_at);
	if (n < 7 || strlen(perms) < 4 || m->end <= m->start) {
		free(buf);
		return -EINVAL;
	}
	if (perms[2] != 'x') {
		free(buf);
		return LINE_SKIPPED;
	}
	if (path_at < 0 || buf[path_at] == '\0') {
		free(buf);
		return LINE_ANON; /* JIT code: named by perf maps, unwound by frame pointer */
	}
	m->dev = makedev(major, minor);
	m->path = decode_path(buf + path_at);
	free(buf);
	return m->path ? LINE_FILE : -ENOMEM;
}

/* Adds [start, end) to anon, merged with the previous range when they touch (a JIT's code space
 * mprotect()ed piece by piece shows as many adjacent lines). Lines come in address order. */
static int append_anon(struct proc_maps *out, size_t *cap, uint64_t start, uint64_t end)
{
	struct proc_range *grown, *last = out->anon_count ? &out->anon[out->anon_count - 1] : NULL;

	if (last && last->end == start) {
		last->end = end;
		return 0;
	}
	if (out->anon_count == *cap) {
		*cap = *cap ? *cap * 2 : 4;
		grown = realloc(out->anon, *cap * sizeof(*grown));
		if (!grown)
			return -ENOMEM;
		out->anon = grown;
	}
	out->anon[out->anon_count++] = (struct proc_range){ start, end };
	return 0;
}

static int cmp_start(const void *a, const void *b)
{
	const struct proc_map *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

static int append(struct proc_maps *out, size_t *cap, const struct proc_map *m)
{
	struct proc_map *grown;

	if (out->count == *cap) {
		*cap = *cap ? *cap * 2 : 16;
		grown = realloc(out->maps, *cap * sizeof(*grown));
		if (!grown)
			return -ENOMEM;
		out->maps = grown;
	}
	out->maps[out->count++] = *m;
	return 0;
}

int proc_maps_parse(const char *text, struct proc_maps *out)
{
	const char *line = text, *eol;
	size_t cap = 0, anon_cap = 0;
	struct proc_map m;
	int err = 0;

	memset(out, 0, sizeof(*out));
	for (; *line; line = *eol ? eol + 1 : eol) {
		eol = strchrnul(line, '\n');
		if (eol == line)
			continue;
		memset(&m, 0, sizeof(m));
		err = parse_line(line, eol - line, &m);
		if (err < 0)
			goto out_release;
		if (err == LINE_SKIPPED)
			continue;
		if (err == LINE_ANON) {
			err = append_anon(out, &anon_cap, m.start, m.end);
			if (err)
				goto out_release;
			continue;
		}
		err = append(out, &cap, &m);
		if (err) {
			free(m.path);
			goto out_release;
		}
	}
	if (out->count > 1)
		qsort(out->maps, out->count, sizeof(*out->maps), cmp_start);
	return 0;

out_release:
	proc_maps_release(out);
	return err;
}

/* Reads a whole (procfs) file into a NUL-terminated buffer; procfs sizes are unknown upfront. */
static int read_text(int fd, char **text)
{
	size_t len = 0, cap = 64 << 10;
	char *buf = malloc(cap), *grown;
	ssize_t n;

	if (!buf)
		return -ENOMEM;
	for (;;) {
		if (cap - len < 4096) {
			if (cap >= PROC_MAPS_MAX_BYTES)
				goto err_free;
			grown = realloc(buf, cap * 2);
			if (!grown) {
				free(buf);
				return -ENOMEM;
			}
			buf = grown;
			cap *= 2;
		}
		n = read(fd, buf + len, cap - len - 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			n = -errno;
			free(buf);
			return (int)n;
		}
		if (n == 0)
			break;
		len += n;
	}
	buf[len] = '\0';
	*text = buf;
	return 0;

err_free:
	free(buf);
	return -EFBIG;
}

int proc_maps_read_at(const char *proc_root, pid_t pid, struct proc_maps *out)
{
	char path[PATH_MAX];
	char *text = NULL;
	int fd, err;

	memset(out, 0, sizeof(*out));
	snprintf(path, sizeof(path), "%s/%d/maps", proc_root ? proc_root : "/proc", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	err = read_text(fd, &text);
	close(fd);
	if (err)
		return err;
	err = proc_maps_parse(text, out);
	free(text);
	return err;
}

int proc_maps_read(pid_t pid, struct proc_maps *out)
{
	return proc_maps_read_at("/proc", pid, out);
}

const struct proc_map *proc_maps_find(const struct proc_maps *maps, uint64_t addr)
{
	size_t lo = 0, hi = maps->count;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct proc_map *m = &maps->maps[mid];

		if (addr < m->start)
			hi = mid;
		else if (addr >= m->end)
			lo = mid + 1;
		else
			return m;
	}
	return NULL;
}

void proc_maps_release(struct proc_maps *maps)
{
	size_t i;

	if (!maps)
		return;
	for (i = 0; i < maps->count; i++)
		free(maps->maps[i].path);
	free(maps->maps);
	free(maps->anon);
	memset(maps, 0, sizeof(*maps));
}
