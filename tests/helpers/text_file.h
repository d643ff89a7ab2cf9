/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Test-only: what a workload or the agent wrote into a text file (span logs, workload output),
 * and small files a test writes for the code under test. */
#ifndef SPANPROF_TEST_TEXT_FILE_H
#define SPANPROF_TEST_TEXT_FILE_H

#include <stddef.h>
#include <stdint.h>

/* Creates or truncates path holding text; a failed cmocka assertion when it cannot. */
void text_file_write(const char *path, const char *text);

/* Writes len bytes of data (NULs included: environ) as <proc_root>/<pid>/<name>, a file of a
 * fake /proc, making the pid's directory when it is missing; a failed cmocka assertion when it
 * cannot. */
void proc_file_write(const char *proc_root, int pid, const char *name, const void *data,
		     size_t len);

/* Writes len bytes of data at offset at of <proc_root>/<pid>/<name> (made when missing, never
 * truncated: a fake process's memory file is written piece by piece); a failed cmocka
 * assertion when it cannot. */
void proc_file_write_at(const char *proc_root, int pid, const char *name, const void *data,
			size_t len, uint64_t at);

/* Lines of path containing text, or -1 when it cannot be read. */
long text_file_lines_with(const char *path, const char *text);

/* The number after key (e.g. "spans=") in the first 4 KB of path, or -1. */
long long text_file_number(const char *path, const char *key);

#endif /* SPANPROF_TEST_TEXT_FILE_H */
