/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* A directory of encoded push requests that outlives the agent: one file per request, written
 * atomically, named by profile time so the oldest is sent first, bounded in bytes, and expired
 * by age. One agent at a time (flock on DIR/.lock). Not thread-safe: the caller locks. */
#ifndef SPANPROF_SPOOL_H
#define SPANPROF_SPOOL_H

#include <stddef.h>
#include <stdint.h>

struct spool;

/* Identifies one spooled request: its profile time and a sequence number breaking ties. */
struct spool_entry {
	int64_t ts_ns;
	uint64_t seq;
	size_t size; /* bytes of the file */
};

/* Opens the spool in dir (created with its parents if missing; files are mode 0600), removes
 * temporary files left by a crash, and indexes the requests found
 * (DIR/<ts 20 digits>-<seq 16 hex>.push; other files are left alone). If they take more than
 * max_bytes, the oldest are deleted and counted in *evicted. Returns 0, -EBUSY when another
 * process holds the spool, or -errno; all logged with the path. */
int spool_open(const char *dir, size_t max_bytes, struct spool **out, size_t *evicted);
void spool_close(struct spool *s); /* NULL-safe; keeps the files */

/* Writes one request (temp file, fsync, rename, directory fsync). When it does not fit, the
 * oldest requests that are older than it are deleted to make room and counted in *evicted.
 * Returns 0; -EFBIG when len alone exceeds the bound; -ENOSPC when the request is older than
 * everything it would have to evict (nothing is deleted then); or -errno from the file system
 * (logged). */
int spool_put(struct spool *s, int64_t ts_ns, const uint8_t *body, size_t len, size_t *evicted);

/* The oldest request not taken, without taking it. Returns 0 or -ENOENT when there is none. */
int spool_peek(const struct spool *s, struct spool_entry *out);

/* Takes the oldest request out for sending and reads it into *body (malloc'ed). It stays on disk
 * and counted until spool_done(), or is given back with spool_untake(). One at a time. Returns 0,
 * -ENOENT (none left, or one is taken already), or -errno when the file cannot be read: the
 * request is then deleted and forgotten (logged) and *gone is set to 1. */
int spool_take(struct spool *s, struct spool_entry *e, uint8_t **body, size_t *len, int *gone);
void spool_untake(struct spool *s);
/* Deletes the taken request (delivered or dropped). */
void spool_done(struct spool *s);

/* Deletes requests (not the taken one) whose profile time is before min_ts_ns; returns how
 * many. */
size_t spool_expire(struct spool *s, int64_t min_ts_ns);

size_t spool_bytes(const struct spool *s); /* file bytes, the taken request included */
size_t spool_count(const struct spool *s); /* requests, the taken one included */

#endif /* SPANPROF_SPOOL_H */
