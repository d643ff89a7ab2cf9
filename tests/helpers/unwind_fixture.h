/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Test-only: builds the unwinding fixtures (tests/fixtures/unwfix_*.c) at run time with
 * -O2 -fomit-frame-pointer -fno-optimize-sibling-calls into a temp dir. */
#ifndef SPANPROF_TEST_UNWIND_FIXTURE_H
#define SPANPROF_TEST_UNWIND_FIXTURE_H

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

#endif /* SPANPROF_TEST_UNWIND_FIXTURE_H */
