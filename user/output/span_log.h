/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The local record of ended spans: one JSON line per span in <dir>/<service>.spans.jsonl,
 * buffered between drains, appended at each flush, rotated to .1 at a hard size cap, all files
 * under one total bound. */
#ifndef SPANPROF_SPAN_LOG_H
#define SPANPROF_SPAN_LOG_H

#include <stddef.h>
#include <stdint.h>

/* One ended span (struct spanprof_span_end with its names resolved). */
struct span_record {
	const char *service; /* NULL or "": "unknown_service" */
	const char *name; /* NULL: "" */
	uint8_t trace_id[16], span_id[8];
	uint64_t cpu_ns, off_cpu_ns, wall_ns;
	uint64_t start_ns; /* when it began, ns since the Unix epoch; 0: not known */
	uint32_t pid, tid;
};

/* Writes r as one JSON object and a line feed into buf (NUL-terminated when size > 0):
 * {"service":..,"name":..,"trace_id":"<32 hex>","span_id":"<16 hex>","cpu_ns":N,
 * "off_cpu_ns":N,"wall_ns":N,"pid":N,"tid":N}, with "start_ns":N (ns since the Unix epoch)
 * after "wall_ns" when start_ns is not 0. Strings are escaped (quote, backslash, control
 * characters as \uXXXX) and bytes that are not UTF-8 become U+FFFD. Returns the length the line
 * needs (without the NUL), as snprintf does: larger than size - 1 means it was cut. */
size_t span_log_format(const struct span_record *r, char *buf, size_t size);

struct span_log_limits {
	/* No file grows past this: when the next line does not fit, the file is renamed to .1
	 * (replacing the one before), also in the middle of a flush. */
	uint64_t max_file_bytes;
	/* All services' files together (0: no bound): past it, the oldest file of the service
	 * holding the most bytes is removed first. At least 2 * max_file_bytes. */
	uint64_t max_total_bytes;
	/* Bytes held between flushes; records past it are dropped. Once half of it is taken, a
	 * service holding a quarter of it may add no more. */
	size_t max_buffered;
	size_t max_services; /* files written to; records of more services are dropped */
};

struct span_log_stats {
	uint64_t records; /* lines written */
	uint64_t dropped; /* records not kept: any bound below, or a write error */
	uint64_t rotations; /* files renamed to .1 */
	uint64_t fair_share_drops; /* records dropped: their service held its share of the buffer */
	uint64_t total_removals; /* files removed to keep the total bound */
	uint64_t total_drops; /* flushes cut short because nothing was left to remove */
};

/* A log into dir (not owned, must exist). NULL with errno = ENOMEM. */
struct span_log *span_log_new(const char *dir, const struct span_log_limits *limits);
void span_log_free(struct span_log *sl); /* NULL-safe; what is buffered is not written */

/* Buffers r's line. Returns 0, or -ENOBUFS when a limit dropped it (counted). */
int span_log_add(struct span_log *sl, const struct span_record *r);

/* Bytes buffered since the last flush, all services together. */
size_t span_log_buffered(const struct span_log *sl);

/* Appends every service's buffered lines to its file (O_APPEND; one write per service unless
 * the file rotates) and empties the buffers. Returns 0 or the first -errno (logged once per flush
 * with the path). */
int span_log_flush(struct span_log *sl);

void span_log_get_stats(const struct span_log *sl, struct span_log_stats *out);

#endif /* SPANPROF_SPAN_LOG_H */
