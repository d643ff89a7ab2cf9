/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The id of a span name: FNV-1a 64 of its bytes, computed the same way by the span hook (names the
 * hook passes) and by the sampler (Go span_name pprof labels), so a name has one id in span_names
 * whichever way it came. */
#ifndef SPANPROF_SPAN_NAMES_BPF_H
#define SPANPROF_SPAN_NAMES_BPF_H

#include "spanprof_abi.h"

#define FNV64_OFFSET 0xcbf29ce484222325ULL
#define FNV64_PRIME 0x100000001b3ULL

/* FNV-1a 64 of the NUL-terminated name in buf (at most SPANPROF_ABI_SPAN_NAME_MAX - 1 bytes are
 * hashed); 0 for an empty name, never 0 otherwise. */
static __always_inline __u64 name_hash(const char *buf)
{
	__u64 h = FNV64_OFFSET;
	int i;

	if (!buf[0])
		return 0;
	/* A constant bound the verifier can see; the loop stops at the NUL, so a typical
	 * 20-byte name costs 20 rounds. */
	for (i = 0; i < SPANPROF_ABI_SPAN_NAME_MAX - 1; i++) {
		if (!buf[i])
			break;
		h ^= (__u8)buf[i];
		h *= FNV64_PRIME;
	}
	return h ? h : 1;
}

#endif /* SPANPROF_SPAN_NAMES_BPF_H */
