/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Sorting without a second copy of the array: glibc's qsort() merge-sorts through a buffer as
 * large as the array, which for the agent's largest arrays (a file's CFI rows, the kernel's
 * symbols) doubled their memory for a moment. */
#ifndef SPANPROF_SORT_INPLACE_H
#define SPANPROF_SORT_INPLACE_H

#include <stddef.h>

/* Sorts n records of size bytes at base by cmp (qsort's contract), in place: a heapsort,
 * O(n log n) whatever the input, after one pass that returns at once when the records are
 * already in order. Not stable: records cmp finds equal may come out in any order. */
void sort_inplace(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *));

#endif /* SPANPROF_SORT_INPLACE_H */
