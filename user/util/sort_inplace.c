// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* In-place heapsort over records of any size, for arrays too large to copy. */
#include <stdint.h>
#include <string.h>

#include "util/sort_inplace.h"

static void swap_bytes(unsigned char *a, unsigned char *b, size_t size)
{
	unsigned char tmp[64];
	size_t step;

	while (size) {
		step = size < sizeof(tmp) ? size : sizeof(tmp);
		memcpy(tmp, a, step);
		memcpy(a, b, step);
		memcpy(b, tmp, step);
		a += step;
		b += step;
		size -= step;
	}
}

/* Moves the record at root down the max-heap of the first n records until both its children are
 * not greater. */
static void sift_down(unsigned char *base, size_t root, size_t n, size_t size,
		      int (*cmp)(const void *, const void *))
{
	size_t child;

	while ((child = 2 * root + 1) < n) {
		if (child + 1 < n && cmp(base + child * size, base + (child + 1) * size) < 0)
			child++;
		if (cmp(base + root * size, base + child * size) >= 0)
			return;
		swap_bytes(base + root * size, base + child * size, size);
		root = child;
	}
}

static int in_order(const unsigned char *base, size_t n, size_t size,
		    int (*cmp)(const void *, const void *))
{
	size_t i;

	for (i = 1; i < n; i++)
		if (cmp(base + (i - 1) * size, base + i * size) > 0)
			return 0;
	return 1;
}

void sort_inplace(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *))
{
	unsigned char *b = base;
	size_t i;

	if (n < 2 || !size || in_order(b, n, size, cmp))
		return;
	for (i = n / 2; i-- > 0;)
		sift_down(b, i, n, size, cmp);
	for (i = n - 1; i > 0; i--) {
		swap_bytes(b, b + i * size, size);
		sift_down(b, 0, i, size, cmp);
	}
}
