/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Test-only: builds the unwinding fixtures (tests/fixtures/unwfix_*.c) at run time with
 * -O2 -fomit-frame-pointer -fno-optimize-sibling-calls into a temp dir. */
#ifndef SPANPROF_TEST_UNWIND_FIXTURE_H
#define SPANPROF_TEST_UNWIND_FIXTURE_H

#include <stdint.h>

#include "discover/proc_maps.h"

struct unwind_fixture {
	char *dir; /* temp dir holding everything below */
	char *exe; /* unwfix: the executable (PIE) */
	char *lib; /* libunwfix.so, linked by exe */
	char *dl; /* libunwfix_dl.so, for dlopen */
	char *nocfi; /* libunwfix_nocfi.so, frame pointers and no .eh_frame */
};

/* Returns 0 or -EIO (the failing command is printed). */
int unwind_fixture_build(struct unwind_fixture *f);

/* Removes the temp dir and frees the paths. NULL-safe. */
void unwind_fixture_release(struct unwind_fixture *f);

/* The mapping of path's (first) executable PT_LOAD at load bias base, as the kernel places it
 * and /proc/PID/maps shows it, with the file's device and inode; its path points at path. The
 * segment's page-aligned vaddr goes into *vaddr unless vaddr is NULL. A failed cmocka assertion
 * when path has no such segment. */
struct proc_map unwind_fixture_map(const char *path, uint64_t base, uint64_t *vaddr);

#endif /* SPANPROF_TEST_UNWIND_FIXTURE_H */
