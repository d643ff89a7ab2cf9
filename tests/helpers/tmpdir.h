/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Test-only temporary directories: created fresh per test, removed recursively afterwards. */
#ifndef SPANPROF_TEST_TMPDIR_H
#define SPANPROF_TEST_TMPDIR_H

/* Creates a new empty directory under $TMPDIR (or /tmp) named spanprof-<tag>-XXXXXX.
 * Returns a malloc'ed path, or NULL with errno set. */
char *tmpdir_new(const char *tag);

/* Removes path and everything below it, then frees path. NULL-safe. */
void tmpdir_remove(char *path);

/* A cmocka teardown for tests whose *state is a tmpdir_new() path (or NULL): removes it. */
int tmpdir_teardown(void **state);

#endif /* SPANPROF_TEST_TMPDIR_H */
