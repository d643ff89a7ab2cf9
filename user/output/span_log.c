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
#include "util/log.h"
#include "util/utf8.h"

#define SERVICE_FILE_MAX 128 /* bytes of the service kept in a file name */

struct service_buf {
	char file[SERVICE_FILE_MAX + 1]; /* sanitised service: the file's name stem */
	char *buf;
	size_t len, cap;
	uint64_t records; /* lines in buf */
};

struct span_log {
	const char *dir;
	struct span_log_limits limits;
	struct service_buf *svcs;
	size_t nsvcs, buffered;
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

/* s as a JSON string, quotes included. */
static void put_json_str(struct out *o, const char *s)
{
	const unsigned char *p = (const unsigned char *)(s ? s : "");
	char esc[8];
	size_t n;

	put(o, "\"", 1);
	while (*p) {
		n = utf8_seq_len(p);
		if (*p == '"' || *p == '\\') {
			esc[0] = '\\', esc[1] = *p;
			put(o, esc, 2);
		} else if (*p < 0x20) {
			snprintf(esc, sizeof(esc), "\\u%04x", *p);
			put(o, esc, 6);
		} else if (!n) {
			put_str(o, "\\ufffd");
			n = 1;
		} else {
			put(o, (const char *)p, n);
		}
		p += n ? n : 1;
	}
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
	put_json_str(&o, r->service && *r->service ? r->service : "unknown_service");
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
		service = "unknown_service";
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

/* Opens <dir>/<stem>.spans.jsonl to append len bytes, renaming it to .1 first when it would
 * grow past the limit. Returns the fd or -errno. */
static int open_for(struct span_log *sl, const char *stem, size_t len, char *path, size_t size)
{
	char old[PATH_MAX + 4];
	struct stat st;
	int fd;

	if (snprintf(path, size, "%s/%s.spans.jsonl", sl->dir, stem) >= (int)size)
		return -ENAMETOOLONG;
	fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) || !st.st_size ||
	    (uint64_t)st.st_size + len <= sl->limits.max_file_bytes)
		return fd;
	close(fd);
	snprintf(old, sizeof(old), "%s.1", path);
	if (rename(path, old))
		return -errno;
	sl->stats.rotations++;
	fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
	return fd < 0 ? -errno : fd;
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

int span_log_flush(struct span_log *sl)
{
	char path[PATH_MAX];
	struct service_buf *sb;
	int fd, err, first = 0;
	size_t i;

	for (i = 0; i < sl->nsvcs; i++) {
		sb = &sl->svcs[i];
		if (!sb->len)
			continue;
		fd = open_for(sl, sb->file, sb->len, path, sizeof(path));
		err = fd < 0 ? fd : write_all(fd, sb->buf, sb->len);
		if (fd >= 0)
			close(fd);
		if (err) {
			sl->stats.dropped += sb->records;
			if (!first)
				first = log_err(err, "append span records to %s", path);
		} else {
			sl->stats.records += sb->records;
		}
		sb->len = 0;
		sb->records = 0;
	}
	sl->buffered = 0;
	return first;
}

void span_log_get_stats(const struct span_log *sl, struct span_log_stats *out)
{
	*out = sl->stats;
}
