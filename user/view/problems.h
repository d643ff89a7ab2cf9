/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The files the viewer skipped (or read in part), and why: shown on the page. A bounded list;
 * past it only a count. */
#ifndef SPANPROF_VIEW_PROBLEMS_H
#define SPANPROF_VIEW_PROBLEMS_H

#include <stddef.h>
#include <stdint.h>

#define PROBLEMS_MAX 256
#define PROBLEM_FILE_MAX 256
#define PROBLEM_WHY_MAX 160

struct problem {
	char file[PROBLEM_FILE_MAX]; /* the name inside the data directory */
	char why[PROBLEM_WHY_MAX];
};

struct problems {
	struct problem list[PROBLEMS_MAX];
	size_t n; /* entries in list */
	uint64_t total; /* every problem reported, listed or not */
};

/* Records that file had a problem (a file already listed is not listed again). */
void problems_add(struct problems *pr, const char *file, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* 1 when file is listed. */
int problems_has(const struct problems *pr, const char *file);

#endif /* SPANPROF_VIEW_PROBLEMS_H */
