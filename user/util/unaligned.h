/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Integers read from byte buffers at any alignment, in the host's byte order (what a file made
 * for this machine, or another process's memory, holds). */
#ifndef SPANPROF_UNALIGNED_H
#define SPANPROF_UNALIGNED_H

#include <stdint.h>
#include <string.h>

static inline uint32_t load_u32(const void *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static inline uint64_t load_u64(const void *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

#endif /* SPANPROF_UNALIGNED_H */
