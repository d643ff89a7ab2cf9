/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Files known to hold no usable span hook, by (device, inode), so that each file's ELF is read
 * once. Bounded: once max files are remembered, the set forgets them all (they are then read
 * once more). Its hash table starts small and doubles with the files remembered, keeping at
 * most a quarter of its slots in use until it reaches its largest size (a power of two of at
 * least twice max slots). */
#ifndef SPANPROF_HOOK_NEGATIVE_H
#define SPANPROF_HOOK_NEGATIVE_H

#include <stddef.h>
#include <stdint.h>

#define HOOK_NEGATIVE_START 64 /* slots allocated at first */

struct hook_negative {
	struct hook_file_id *slots; /* open addressing, cap slots (a power of two) */
	size_t cap, max_cap, count, max;
	uint64_t resets; /* times the set was full and forgot everything */
	uint64_t grown; /* times the table doubled */
};

/* An empty set of up to max files (max >= 1). 0 or -ENOMEM. */
int hook_negative_init(struct hook_negative *s, size_t max);
void hook_negative_release(struct hook_negative *s);

int hook_negative_has(const struct hook_negative *s, uint64_t dev, uint64_t inode);
/* Remembers (dev, inode), inode != 0; when the set is full (or cannot grow) it first forgets
 * everything. */
void hook_negative_add(struct hook_negative *s, uint64_t dev, uint64_t inode);

#endif /* SPANPROF_HOOK_NEGATIVE_H */
