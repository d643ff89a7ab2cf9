/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* What parsing each interpreter file gave, remembered per file (device, inode, size,
 * modification time and base name) in a bounded LRU, so a file is parsed once and not at every
 * scan of every process that maps it; and a thread that parses the files new to the agent, so
 * that their parse never runs on the run loop (files owned by root excepted: see
 * interp_verdicts_read()). */
#ifndef SPANPROF_INTERP_VERDICTS_H
#define SPANPROF_INTERP_VERDICTS_H

#include <stddef.h>
#include <stdint.h>

/* Parses queued at once for the thread; one file owner may hold half of them. */
#define INTERP_VERDICTS_JOBS 32

/* Parses fd (a regular file; name is its base name) into out (the verdicts' value_size bytes).
 * Returns 0 or -errno: both are remembered. Runs on the parsing thread: it must use no state
 * but its arguments. */
typedef int (*interp_parse_fn)(int fd, const char *name, void *out);

struct interp_verdicts;

struct interp_verdicts_stats {
	uint64_t parsed; /* files parsed */
	uint64_t hits; /* scans answered from a remembered verdict */
	uint64_t evicted; /* verdicts forgotten because max_files were remembered */
	uint64_t deferred; /* scans answered "not parsed yet" (-EBUSY) */
	uint64_t refused; /* ... of which the queue was full, or the owner held half of it */
	uint64_t parse_ns; /* time spent parsing, on the thread or the loop */
	uint64_t longest_ns; /* the longest single parse */
};

/* Remembers up to max_files verdicts of value_size bytes and starts the parsing thread. NULL
 * (errno set) on failure. */
struct interp_verdicts *interp_verdicts_new(size_t max_files, size_t value_size);
/* Stops the thread; waits up to 300 ms for a parse in progress, else leaves v to it (the agent
 * is exiting). NULL-safe. */
void interp_verdicts_free(struct interp_verdicts *v);

/* The verdict for fd: the remembered one when the file is unchanged. Fills out (value_size
 * bytes) and returns the verdict's 0 or -errno. A file not parsed yet is parsed here when root
 * owns it (only the administrator makes such files, and each is parsed once); any other is
 * queued for the thread (fd is duplicated) and -EBUSY returned: the caller asks again later.
 * Returns fstat's -errno when fd cannot be read. */
int interp_verdicts_read(struct interp_verdicts *v, int fd, const char *name, interp_parse_fn parse,
			 void *out);

void interp_verdicts_get_stats(const struct interp_verdicts *v, struct interp_verdicts_stats *out);

#endif /* SPANPROF_INTERP_VERDICTS_H */
