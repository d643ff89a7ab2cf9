/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Binary search over an array of records sorted by a uint64_t field (an address): how many
 * records have that field <= a value, i.e. one past the last such record. */
#ifndef SPANPROF_SORTED_U64_H
#define SPANPROF_SORTED_U64_H

#include <stddef.h>
#include <stdint.h>

/* base holds n records of size bytes, sorted by the uint64_t at key_offset in each. Returns the
 * number of records whose key is <= v (0: none; the last such record is at that index - 1). */
size_t sorted_u64_upper_bound(const void *base, size_t n, size_t size, size_t key_offset,
			      uint64_t v);

#endif /* SPANPROF_SORTED_U64_H */
