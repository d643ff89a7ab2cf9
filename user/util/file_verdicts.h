/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* What parsing each file of one kind gave (an interpreter's ELF file, a module that may publish
 * thread context), remembered per file (device, inode, size, modification time and base name)
 * in a bounded LRU, so a file is parsed once and not at every scan of every process that maps
 * it; and a thread that parses the files new to the agent, so that their parse never runs on
 * the run loop (files owned by root excepted: see file_verdicts_read()). */
#ifndef SPANPROF_FILE_VERDICTS_H
#define SPANPROF_FILE_VERDICTS_H

#include <stddef.h>
#include <stdint.h>

/* Parses queued at once for the thread; one file owner may hold half of them. */
#define FILE_VERDICTS_JOBS 32

/* Parses fd (a regular file; name is its base name) into out (the verdicts' value_size bytes).
 * Returns 0 or -errno: both are remembered. Runs on the parsing thread: it must use no state
 * but its arguments. */
typedef int (*file_parse_fn)(int fd, const char *name, void *out);

struct file_verdicts;

struct file_verdicts_stats {
	uint64_t parsed; /* files parsed */
	uint64_t hits; /* scans answered from a remembered verdict */
	uint64_t evicted; /* verdicts forgotten because max_files were remembered */
	uint64_t deferred; /* scans answered "not parsed yet" (-EBUSY) */
	uint64_t refused; /* ... of which the queue was full, or the owner held half of it */
	uint64_t parse_ns; /* time spent parsing, on the thread or the loop */
	uint64_t longest_ns; /* the longest single parse */
};

/* Remembers up to max_files verdicts of value_size bytes and starts the parsing thread; what
 * names the files in logs ("interpreter", ...; a static string). NULL (errno set) on failure. */
struct file_verdicts *file_verdicts_new(size_t max_files, size_t value_size, const char *what);
/* Stops the thread; waits for a parse in progress until 300 ms after the stop was first asked
 * for (here or by file_verdicts_stop()), else leaves v to it (the agent is exiting). NULL-safe. */
void file_verdicts_free(struct file_verdicts *v);
/* Tells the thread to stop after the parse in progress, without waiting: called early in the
 * agent's exit, so that this parse and other threads' end while the agent does other work, and
 * file_verdicts_free() rarely waits. No file is parsed after it. NULL-safe. */
void file_verdicts_stop(struct file_verdicts *v);

/* The verdict for fd: the remembered one when the file is unchanged. Fills out (value_size
 * bytes) and returns the verdict's 0 or -errno. A file not parsed yet is parsed here when root
 * owns it (only the administrator makes such files, and each is parsed once); any other is
 * queued for the thread (fd is duplicated) and -EBUSY returned: the caller asks again later.
 * Returns fstat's -errno when fd cannot be read. */
int file_verdicts_read(struct file_verdicts *v, int fd, const char *name, file_parse_fn parse,
		       void *out);

void file_verdicts_get_stats(const struct file_verdicts *v, struct file_verdicts_stats *out);

#endif /* SPANPROF_FILE_VERDICTS_H */
