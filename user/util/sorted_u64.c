// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Upper-bound binary search over records sorted by a uint64_t field. */
#include <string.h>

#include "util/sorted_u64.h"

size_t sorted_u64_upper_bound(const void *base, size_t n, size_t size, size_t key_offset,
			      uint64_t v)
{
	const unsigned char *p = base;
	size_t lo = 0, hi = n, mid;
	uint64_t key;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		memcpy(&key, p + mid * size + key_offset, sizeof(key));
		if (key <= v)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}
