/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* What parsing each interpreter file gave, remembered per file (device, inode, size,
 * modification time and base name) in a bounded LRU, so a file is parsed once and not at every
 * scan of every process that maps it; and a budget of parse time per second, so files new to the
 * agent cannot take the run loop's time faster than that. */
#ifndef SPANPROF_INTERP_VERDICTS_H
#define SPANPROF_INTERP_VERDICTS_H

#include <stddef.h>
#include <stdint.h>

/* Parses fd (a regular file; name is its base name) into out (the verdicts' value_size bytes).
 * Returns 0 or -errno: both are remembered. */
typedef int (*interp_parse_fn)(int fd, const char *name, void *out);

struct interp_verdicts;

struct interp_verdicts_stats {
	uint64_t parsed; /* files parsed */
	uint64_t hits; /* scans answered from a remembered verdict */
	uint64_t evicted; /* verdicts forgotten because max_files were remembered */
	uint64_t deferred; /* parses put off: the second's budget was spent */
	uint64_t parse_ns; /* time spent parsing */
	uint64_t longest_ns; /* the longest single parse */
};

/* Remembers up to max_files verdicts of value_size bytes; parses for at most budget_ns of each
 * second (a parse that starts within the budget runs to its end, under the parser's own caps).
 * NULL (errno ENOMEM) on failure. */
struct interp_verdicts *interp_verdicts_new(size_t max_files, size_t value_size,
					    uint64_t budget_ns);
void interp_verdicts_free(struct interp_verdicts *v); /* NULL-safe */

/* The verdict for fd: the remembered one when the file is unchanged, else parse()'s, which is
 * then remembered. Fills out (value_size bytes) and returns the verdict's 0 or -errno; returns
 * -EBUSY without parsing when this second's budget is spent and the file is not owned by root
 * (the caller retries in a second), or fstat's -errno. */
int interp_verdicts_read(struct interp_verdicts *v, int fd, const char *name, interp_parse_fn parse,
			 void *out);

void interp_verdicts_get_stats(const struct interp_verdicts *v, struct interp_verdicts_stats *out);

#endif /* SPANPROF_INTERP_VERDICTS_H */
