// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* JSON lines of ended spans: formatting with escapes, per-service buffers, appending and
 * rotating the files. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "output/span_log.h"
#include "util/json_escape.h"
#include "util/log.h"
#include "util/series_labels.h"
#include "util/utf8.h"

#define SERVICE_FILE_MAX 128 /* bytes of the service kept in a file name */

/* A service's buffer larger than this is freed when flushed. */
#define SPAN_LOG_KEEP_BYTES (64u << 10)

struct service_buf {
	char file[SERVICE_FILE_MAX + 1]; /* sanitised service: the file's name stem */
	char *buf;
	size_t len, cap;
	uint64_t records; /* lines in buf */
	int sized; /* the sizes below were read from the files (after the first flush) */
	uint64_t cur_bytes, old_bytes; /* <stem>.spans.jsonl and its .1 on disk */
};

struct span_log {
	const char *dir;
	struct span_log_limits limits;
	struct service_buf *svcs;
	size_t nsvcs, buffered;
	uint64_t disk_bytes; /* every service's cur_bytes + old_bytes */
	struct span_log_stats stats;
};

/* A sink that counts what it could not hold, as snprintf does. */
struct out {
	char *p;
	size_t size, len;
};

static void put(struct out *o, const char *s, size_t n)
{
	if (o->len < o->size)
		memcpy(o->p + o->len, s, o->len + n <= o->size ? n : o->size - o->len);
	o->len += n;
}

static void put_str(struct out *o, const char *s)
{
	put(o, s, strlen(s));
}

static void put_piece(void *ctx, const char *s, size_t n)
{
	put(ctx, s, n);
}

/* s as a JSON string, quotes included. */
static void put_json_str(struct out *o, const char *s)
{
	put(o, "\"", 1);
	json_escape(s, put_piece, o);
	put(o, "\"", 1);
}

static void put_hex(struct out *o, const uint8_t *b, size_t n)
{
	static const char digits[] = "0123456789abcdef";
	char two[2];
	size_t i;

	put(o, "\"", 1);
	for (i = 0; i < n; i++) {
		two[0] = digits[b[i] >> 4];
		two[1] = digits[b[i] & 15];
		put(o, two, 2);
	}
	put(o, "\"", 1);
}

size_t span_log_format(const struct span_record *r, char *buf, size_t size)
{
	struct out o = { buf, size ? size - 1 : 0, 0 };
	char num[160];

	put_str(&o, "{\"service\":");
	put_json_str(&o, r->service && *r->service ? r->service : SERIES_LABEL_UNKNOWN_SERVICE);
	put_str(&o, ",\"name\":");
	put_json_str(&o, r->name);
	put_str(&o, ",\"trace_id\":");
	put_hex(&o, r->trace_id, sizeof(r->trace_id));
	put_str(&o, ",\"span_id\":");
	put_hex(&o, r->span_id, sizeof(r->span_id));
	snprintf(num, sizeof(num), ",\"cpu_ns\":%llu,\"off_cpu_ns\":%llu,\"wall_ns\":%llu",
		 (unsigned long long)r->cpu_ns, (unsigned long long)r->off_cpu_ns,
		 (unsigned long long)r->wall_ns);
	put_str(&o, num);
	if (r->start_ns) {
		snprintf(num, sizeof(num), ",\"start_ns\":%llu", (unsigned long long)r->start_ns);
		put_str(&o, num);
	}
	snprintf(num, sizeof(num), ",\"pid\":%u,\"tid\":%u}\n", r->pid, r->tid);
	put_str(&o, num);
	if (size)
		buf[o.len < o.size ? o.len : o.size] = '\0';
	return o.len;
}

struct span_log *span_log_new(const char *dir, const struct span_log_limits *limits)
{
	struct span_log *sl = calloc(1, sizeof(*sl));

	if (!sl)
		return NULL;
	sl->dir = dir;
	sl->limits = *limits;
	sl->svcs = calloc(limits->max_services ? limits->max_services : 1, sizeof(*sl->svcs));
	if (!sl->svcs) {
		free(sl);
		errno = ENOMEM;
		return NULL;
	}
	return sl;
}

void span_log_free(struct span_log *sl)
{
	size_t i;

	if (!sl)
		return;
	for (i = 0; i < sl->nsvcs; i++)
		free(sl->svcs[i].buf);
	free(sl->svcs);
	free(sl);
}

/* The file stem of service: [A-Za-z0-9._-] kept, other bytes '_', as profile file names. */
static void file_stem(const char *service, char *out)
{
	size_t i;
	char c;

	if (!service || !*service)
		service = SERIES_LABEL_UNKNOWN_SERVICE;
	for (i = 0; service[i] && i < SERVICE_FILE_MAX; i++) {
		c = service[i];
		out[i] = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
					 (c >= '0' && c <= '9') || c == '.' || c == '_' ||
					 c == '-' ?
				 c :
				 '_';
	}
	out[i] = '\0';
}

static struct service_buf *service_buf(struct span_log *sl, const char *service)
{
	char stem[SERVICE_FILE_MAX + 1];
	size_t i;

	file_stem(service, stem);
	for (i = 0; i < sl->nsvcs; i++)
		if (!strcmp(sl->svcs[i].file, stem))
			return &sl->svcs[i];
	if (sl->nsvcs == sl->limits.max_services)
		return NULL;
	memcpy(sl->svcs[sl->nsvcs].file, stem, sizeof(stem));
	return &sl->svcs[sl->nsvcs++];
}

int span_log_add(struct span_log *sl, const struct span_record *r)
{
	struct service_buf *sb = service_buf(sl, r->service);
	size_t need = span_log_format(r, NULL, 0) + 1, cap;
	char *p;

	if (!sb || sl->buffered + need - 1 > sl->limits.max_buffered)
		goto out_drop;
	/* Fairness: once half the buffer is taken, a service holding a quarter of it already
	 * (a flood) gets no more, so the other half stays for the other services. */
	if (sb->len + need - 1 > sl->limits.max_buffered / 4 &&
	    sl->buffered + need - 1 > sl->limits.max_buffered / 2) {
		sl->stats.fair_share_drops++;
		goto out_drop;
	}
	if (sb->len + need > sb->cap) {
		cap = sb->cap ? sb->cap : 4096;
		while (cap < sb->len + need)
			cap *= 2;
		p = realloc(sb->buf, cap);
		if (!p)
			goto out_drop;
		sb->buf = p;
		sb->cap = cap;
	}
	sb->len += span_log_format(r, sb->buf + sb->len, need);
	sb->records++;
	sl->buffered += need - 1;
	return 0;
out_drop:
	sl->stats.dropped++;
	return -ENOBUFS;
}

static int stem_path(const struct span_log *sl, const char *stem, const char *suffix, char *path,
		     size_t size)
{
	if (snprintf(path, size, "%s/%s.spans.jsonl%s", sl->dir, stem, suffix) >= (int)size)
		return -ENAMETOOLONG;
	return 0;
}

static uint64_t file_size(const char *path)
{
	struct stat st;

	return lstat(path, &st) || !S_ISREG(st.st_mode) ? 0 : (uint64_t)st.st_size;
}

/* Reads once what sb's files hold already (a restarted agent appends to the last run's files). */
static void size_service(struct span_log *sl, struct service_buf *sb)
{
	char path[PATH_MAX];

	if (sb->sized)
		return;
	sb->sized = 1;
	if (!stem_path(sl, sb->file, "", path, sizeof(path)))
		sb->cur_bytes = file_size(path);
	if (!stem_path(sl, sb->file, ".1", path, sizeof(path)))
		sb->old_bytes = file_size(path);
	sl->disk_bytes += sb->cur_bytes + sb->old_bytes;
}

/* Renames sb's file to .1, replacing the one before. */
static int rotate(struct span_log *sl, struct service_buf *sb)
{
	char path[PATH_MAX], old[PATH_MAX];
	int err = stem_path(sl, sb->file, "", path, sizeof(path));

	err = err ?: stem_path(sl, sb->file, ".1", old, sizeof(old));
	if (err)
		return err;
	/* Gone already (removed by hand): nothing to keep, the next write starts it again. */
	if (rename(path, old) && errno != ENOENT)
		return -errno;
	sl->disk_bytes -= sb->old_bytes;
	sb->old_bytes = sb->cur_bytes;
	sb->cur_bytes = 0;
	sl->stats.rotations++;
	return 0;
}

/* Removes the oldest file of the service that holds the most bytes on disk (its .1, else its
 * current file). Returns 0, or -ENOSPC when no service holds anything. */
static int remove_largest(struct span_log *sl)
{
	struct service_buf *big = NULL, *sb;
	char path[PATH_MAX];
	uint64_t *bytes;
	size_t i;

	for (i = 0; i < sl->nsvcs; i++) {
		sb = &sl->svcs[i];
		if (!big || sb->cur_bytes + sb->old_bytes > big->cur_bytes + big->old_bytes)
			big = sb;
	}
	if (!big || !(big->cur_bytes + big->old_bytes))
		return -ENOSPC;
	bytes = big->old_bytes ? &big->old_bytes : &big->cur_bytes;
	if (stem_path(sl, big->file, big->old_bytes ? ".1" : "", path, sizeof(path)))
		return -ENAMETOOLONG;
	if (unlink(path) && errno != ENOENT)
		return -errno;
	sl->disk_bytes -= *bytes;
	*bytes = 0;
	sl->stats.total_removals++;
	log_warn(0,
		 "span logs reached their total bound (%llu bytes): removed %s, of the service "
		 "holding the most",
		 (unsigned long long)sl->limits.max_total_bytes, path);
	return 0;
}

static int write_all(int fd, const char *p, size_t len)
{
	ssize_t n;

	while (len) {
		n = write(fd, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		p += n;
		len -= n;
	}
	return 0;
}

/* Appends p[0..len) to sb's file, under the total bound. Returns 0 or -errno. */
static int append(struct span_log *sl, struct service_buf *sb, const char *p, size_t len)
{
	char path[PATH_MAX];
	int fd, err = 0;

	while (!err && sl->limits.max_total_bytes &&
	       sl->disk_bytes + len > sl->limits.max_total_bytes)
		err = remove_largest(sl);
	err = err ?: stem_path(sl, sb->file, "", path, sizeof(path));
	if (err)
		return err;
	fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (fd < 0)
		return -errno;
	err = write_all(fd, p, len);
	close(fd);
	if (err)
		return err;
	sb->cur_bytes += len;
	sl->disk_bytes += len;
	return 0;
}

/* Bytes of the whole lines at the start of p[0..len) that fit in room; *lines gets their count. */
static size_t lines_fitting(const char *p, size_t len, uint64_t room, uint64_t *lines)
{
	size_t fit = 0, i;

	*lines = 0;
	for (i = 0; i < len && i < room; i++)
		if (p[i] == '\n') {
			fit = i + 1;
			(*lines)++;
		}
	return fit;
}

static uint64_t count_lines(const char *p, size_t len)
{
	uint64_t n = 0;
	size_t i;

	for (i = 0; i < len; i++)
		n += p[i] == '\n';
	return n;
}

/* Writes sb's buffer, rotating its file as often as needed: no file ever holds more than
 * max_file_bytes. Returns 0 or -errno (what was not written is counted as dropped). */
static int flush_service(struct span_log *sl, struct service_buf *sb)
{
	uint64_t max = sl->limits.max_file_bytes, lines;
	const char *p = sb->buf;
	size_t off = 0, n;
	int err = 0;

	size_service(sl, sb);
	while (!err && off < sb->len) {
		n = lines_fitting(p + off, sb->len - off,
				  max > sb->cur_bytes ? max - sb->cur_bytes : 0, &lines);
		if (!n && sb->cur_bytes) {
			err = rotate(sl, sb);
		} else if (!n) {
			/* One line longer than a whole file: it cannot be kept. */
			n = (const char *)memchr(p + off, '\n', sb->len - off) - (p + off) + 1;
			sl->stats.dropped++;
			off += n;
		} else if (!(err = append(sl, sb, p + off, n))) {
			sl->stats.records += lines;
			off += n;
		}
	}
	sl->stats.dropped += count_lines(p + off, sb->len - off);
	return err;
}

int span_log_flush(struct span_log *sl)
{
	char path[PATH_MAX];
	struct service_buf *sb;
	int err, first = 0;
	size_t i;

	for (i = 0; i < sl->nsvcs; i++) {
		sb = &sl->svcs[i];
		if (!sb->len)
			continue;
		err = flush_service(sl, sb);
		if (err == -ENOSPC)
			sl->stats.total_drops++;
		if (err && !first) {
			stem_path(sl, sb->file, "", path, sizeof(path));
			first = log_err(err, "append span records to %s", path);
		}
		sb->len = 0;
		sb->records = 0;
		/* A burst's buffer is not kept for the next: most drains need far less. */
		if (sb->cap > SPAN_LOG_KEEP_BYTES) {
			free(sb->buf);
			sb->buf = NULL;
			sb->cap = 0;
		}
	}
	sl->buffered = 0;
	return first;
}

size_t span_log_buffered(const struct span_log *sl)
{
	return sl->buffered;
}

void span_log_get_stats(const struct span_log *sl, struct span_log_stats *out)
{
	*out = sl->stats;
}
