/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Test-only: copies of hook builds without their probe notes (.note.stapsdt). Another spanprof
 * agent on the machine that profiles every process finds a hook by its probe note: it would
 * attach to a benchmark's hook, its uprobe entries would land in the benchmark's rows, and its
 * count would be in the hook's semaphore, which a benchmark that raises the semaphore by hand
 * could push below zero. A benchmark runs its hooks from such copies and attaches its own agent
 * at the sites read from the originals (the copies hold the same bytes at the same offsets).
 * Apart from hook_libs, which links the hook, so that a benchmark that must not link it can use
 * these. */
#ifndef SPANPROF_TEST_HOOK_COPIES_H
#define SPANPROF_TEST_HOOK_COPIES_H

/* Copies src to dst without its probe notes, with objcopy. Returns 0, or -1 (no objcopy, or it
 * failed: what it printed is on stderr). */
int hook_copy_without_notes(const char *src, const char *dst);

/* For a benchmark that links the hook: runs this executable again from a copy of it and of the
 * version 2 library beside it (../workloads/libspanprof_v2.so), both without their probe notes,
 * in a new directory under /tmp laid out as bench/ and workloads/, with HOOK_LIBS_ORIGIN_ENV set
 * to the original executable (hook_libs reads the sites there); argv is passed on. In the copy,
 * it arranges for that directory's removal at exit and returns. Returns too when the benchmark
 * has to run in place (no objcopy), after saying so on stderr under name. */
void hook_copies_reexec(const char *name, char **argv);

#endif /* SPANPROF_TEST_HOOK_COPIES_H */
