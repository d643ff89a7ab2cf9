// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The on-disk spool of push requests: an index of the directory's request files sorted by
 * (profile time, sequence), kept within a byte bound, written atomically, read oldest first. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "output/local_out.h"
#include "output/spool.h"
#include "util/atomic_file.h"
#include "util/log.h"

#define SPOOL_SUFFIX ".push"
#define SPOOL_TMP_PREFIX ".tmp-"
#define SPOOL_NAME_SIZE 48 /* 20 + 1 + 16 + 5 + NUL, with room for the temp prefix */

struct spool {
	char *dir;
	int dirfd, lockfd;
	size_t max_bytes, bytes;
	struct spool_entry *e; /* sorted oldest first */
	size_t n, cap;
	uint64_t next_seq;
	int taken; /* 1: taken_key names the request being sent */
	struct spool_entry taken_key;
};

static void entry_name(const struct spool_entry *e, char *buf, size_t size)
{
	snprintf(buf, size, "%020" PRId64 "-%016" PRIx64 SPOOL_SUFFIX, e->ts_ns, e->seq);
}

/* Parses a request file name; 0 when name is not one. */
static int parse_name(const char *name, struct spool_entry *e)
{
	int64_t ts;
	uint64_t seq;
	int end = 0;

	if (strlen(name) != 20 + 1 + 16 + strlen(SPOOL_SUFFIX))
		return 0;
	if (sscanf(name, "%20" SCNd64 "-%16" SCNx64 SPOOL_SUFFIX "%n", &ts, &seq, &end) != 2 ||
	    name[end] || ts < 0)
		return 0;
	e->ts_ns = ts;
	e->seq = seq;
	return 1;
}

static int entry_before(const struct spool_entry *a, const struct spool_entry *b)
{
	return a->ts_ns < b->ts_ns || (a->ts_ns == b->ts_ns && a->seq < b->seq);
}

static int entry_cmp(const void *a, const void *b)
{
	return entry_before(a, b) ? -1 : entry_before(b, a) ? 1 : 0;
}

/* Index of the first entry not before key. */
static size_t lower_bound(const struct spool *s, const struct spool_entry *key)
{
	size_t lo = 0, hi = s->n, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (entry_before(&s->e[mid], key))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static int is_taken(const struct spool *s, size_t i)
{
	return s->taken && !entry_cmp(&s->e[i], &s->taken_key);
}

static int index_insert(struct spool *s, const struct spool_entry *e)
{
	size_t pos, ncap;
	void *p;

	if (s->n == s->cap) {
		ncap = s->cap ? s->cap * 2 : 64;
		p = realloc(s->e, ncap * sizeof(*s->e));
		if (!p)
			return -ENOMEM;
		s->e = p;
		s->cap = ncap;
	}
	pos = lower_bound(s, e);
	memmove(&s->e[pos + 1], &s->e[pos], (s->n - pos) * sizeof(*s->e));
	s->e[pos] = *e;
	s->n++;
	s->bytes += e->size;
	return 0;
}

/* Deletes entry i's file and forgets it. */
static void remove_at(struct spool *s, size_t i)
{
	char name[SPOOL_NAME_SIZE];

	entry_name(&s->e[i], name, sizeof(name));
	if (unlinkat(s->dirfd, name, 0) && errno != ENOENT)
		log_warn(-errno, "delete spooled request %s/%s", s->dir, name);
	s->bytes -= s->e[i].size;
	memmove(&s->e[i], &s->e[i + 1], (s->n - i - 1) * sizeof(*s->e));
	s->n--;
}

/* Index of the oldest entry not taken, or s->n. */
static size_t oldest_free(const struct spool *s)
{
	size_t i;

	for (i = 0; i < s->n && is_taken(s, i); i++)
		;
	return i;
}

/* Deletes the oldest requests (not the taken one, nor any not older than `newer`, when given)
 * until `need` more bytes fit. Returns 0 or -ENOSPC. */
static int make_room(struct spool *s, size_t need, const struct spool_entry *newer, size_t *evicted)
{
	size_t i;

	while (s->bytes > s->max_bytes || s->max_bytes - s->bytes < need) {
		i = oldest_free(s);
		if (i == s->n || (newer && !entry_before(&s->e[i], newer)))
			return -ENOSPC;
		remove_at(s, i);
		(*evicted)++;
	}
	return 0;
}

/* DIR/.tmp-NAME, written and fsynced, renamed to DIR/NAME, then the directory fsynced so the
 * rename survives a crash. */
static int write_atomic(struct spool *s, const char *name, const uint8_t *body, size_t len)
{
	char tmp[SPOOL_NAME_SIZE + sizeof(SPOOL_TMP_PREFIX)];
	int err;

	snprintf(tmp, sizeof(tmp), SPOOL_TMP_PREFIX "%s", name);
	err = atomic_file_write_at(s->dirfd, tmp, name, body, len, 0600);
	if (err)
		return log_err(err, "write spooled request %s/%s", s->dir, name);
	return 0;
}

static int read_file(struct spool *s, const struct spool_entry *e, uint8_t **body, size_t *len)
{
	char name[SPOOL_NAME_SIZE];
	uint8_t *buf;
	ssize_t n;
	size_t got = 0;
	int fd, err = 0;

	entry_name(e, name, sizeof(name));
	fd = openat(s->dirfd, name, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return log_err(-errno, "open spooled request %s/%s", s->dir, name);
	buf = malloc(e->size ? e->size : 1);
	if (!buf) {
		close(fd);
		return log_err(-ENOMEM, "read spooled request %s/%s", s->dir, name);
	}
	while (got < e->size) {
		n = read(fd, buf + got, e->size - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			err = n < 0 ? -errno : -EIO; /* shorter than indexed: changed under us */
			break;
		}
		got += n;
	}
	close(fd);
	if (err) {
		free(buf);
		return log_err(err, "read spooled request %s/%s", s->dir, name);
	}
	*body = buf;
	*len = got;
	return 0;
}

/* Indexes the request files, deletes leftovers of interrupted writes. */
static int scan(struct spool *s)
{
	struct spool_entry e;
	struct dirent *de;
	struct stat st;
	int fd, err = 0;
	DIR *d;

	fd = openat(s->dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	d = fd < 0 ? NULL : fdopendir(fd);
	if (!d) {
		err = -errno;
		if (fd >= 0)
			close(fd);
		return log_err(err, "read spool directory %s", s->dir);
	}
	while (!err && (de = readdir(d))) {
		/* Only our own leftovers: a regular file named .tmp-<request name>. */
		if (!strncmp(de->d_name, SPOOL_TMP_PREFIX, strlen(SPOOL_TMP_PREFIX))) {
			if (parse_name(de->d_name + strlen(SPOOL_TMP_PREFIX), &e) &&
			    !fstatat(s->dirfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) &&
			    S_ISREG(st.st_mode))
				unlinkat(s->dirfd, de->d_name, 0);
			continue;
		}
		if (!parse_name(de->d_name, &e) || fstatat(s->dirfd, de->d_name, &st, 0) ||
		    !S_ISREG(st.st_mode))
			continue;
		e.size = st.st_size;
		if (e.seq >= s->next_seq)
			s->next_seq = e.seq + 1;
		err = index_insert(s, &e);
	}
	closedir(d);
	if (err)
		return log_err(err, "index spool directory %s", s->dir);
	return 0;
}

/* One agent per spool: two would send, and delete, each other's requests. */
static int lock_dir(struct spool *s)
{
	s->lockfd = openat(s->dirfd, ".lock", O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (s->lockfd < 0)
		return log_err(-errno, "create %s/.lock", s->dir);
	if (flock(s->lockfd, LOCK_EX | LOCK_NB)) {
		if (errno == EWOULDBLOCK)
			return log_err(-EBUSY, "spool directory %s is in use by another process",
				       s->dir);
		return log_err(-errno, "lock %s/.lock", s->dir);
	}
	return 0;
}

int spool_open(const char *dir, size_t max_bytes, struct spool **out, size_t *evicted)
{
	struct spool *s;
	int err;

	*evicted = 0;
	err = local_out_prepare(dir);
	if (err)
		return err;
	s = calloc(1, sizeof(*s));
	if (!s)
		return log_err(-ENOMEM, "open spool %s", dir);
	s->lockfd = -1;
	s->dirfd = -1;
	s->max_bytes = max_bytes;
	s->dir = strdup(dir);
	if (!s->dir) {
		err = log_err(-ENOMEM, "open spool %s", dir);
		goto out_close;
	}
	s->dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (s->dirfd < 0) {
		err = log_err(-errno, "open spool directory %s", dir);
		goto out_close;
	}
	err = lock_dir(s);
	err = err ?: scan(s);
	err = err ?: make_room(s, 0, NULL, evicted);
	if (err)
		goto out_close;
	*out = s;
	return 0;
out_close:
	spool_close(s);
	return err;
}

void spool_close(struct spool *s)
{
	if (!s)
		return;
	if (s->lockfd >= 0)
		close(s->lockfd); /* releases the flock */
	if (s->dirfd >= 0)
		close(s->dirfd);
	free(s->e);
	free(s->dir);
	free(s);
}

int spool_put(struct spool *s, int64_t ts_ns, const uint8_t *body, size_t len, size_t *evicted)
{
	struct spool_entry e = { .ts_ns = ts_ns < 0 ? 0 : ts_ns, .seq = s->next_seq, .size = len };
	char name[SPOOL_NAME_SIZE];
	int err;

	*evicted = 0;
	if (len > s->max_bytes)
		return -EFBIG;
	err = make_room(s, len, &e, evicted);
	if (err)
		return err;
	entry_name(&e, name, sizeof(name));
	err = write_atomic(s, name, body, len);
	if (err)
		return err;
	s->next_seq++;
	err = index_insert(s, &e);
	if (err) {
		unlinkat(s->dirfd, name, 0);
		return log_err(err, "index spooled request %s/%s", s->dir, name);
	}
	return 0;
}

int spool_peek(const struct spool *s, struct spool_entry *out)
{
	size_t i = oldest_free(s);

	if (i == s->n)
		return -ENOENT;
	*out = s->e[i];
	return 0;
}

int spool_take(struct spool *s, struct spool_entry *e, uint8_t **body, size_t *len, int *gone)
{
	size_t i = oldest_free(s);
	int err;

	*gone = 0;
	if (s->taken || i == s->n)
		return -ENOENT;
	err = read_file(s, &s->e[i], body, len);
	if (err) {
		remove_at(s, i);
		*gone = 1;
		return err;
	}
	*e = s->e[i];
	s->taken = 1;
	s->taken_key = s->e[i];
	return 0;
}

void spool_untake(struct spool *s)
{
	s->taken = 0;
}

void spool_done(struct spool *s)
{
	size_t i;

	if (!s->taken)
		return;
	i = lower_bound(s, &s->taken_key);
	s->taken = 0;
	if (i < s->n && !entry_cmp(&s->e[i], &s->taken_key))
		remove_at(s, i);
}

size_t spool_expire(struct spool *s, int64_t min_ts_ns)
{
	size_t i = 0, n = 0;

	while (i < s->n && s->e[i].ts_ns < min_ts_ns) {
		if (is_taken(s, i)) {
			i++;
			continue;
		}
		remove_at(s, i);
		n++;
	}
	return n;
}

size_t spool_bytes(const struct spool *s)
{
	return s ? s->bytes : 0;
}

size_t spool_count(const struct spool *s)
{
	return s ? s->n : 0;
}
