/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The fair-share rule of the hook-file table: which slot a new hook file of a user gets, and
 * whose file leaves when the table is full. */
#ifndef SPANPROF_HOOK_SLOTS_H
#define SPANPROF_HOOK_SLOTS_H

#include <stddef.h>
#include <sys/types.h>

/* What the rule needs to know of one slot. */
struct hook_slot {
	int in_use;
	uid_t uid; /* whose share the file counts in */
	size_t users; /* processes mapping it */
};

struct hook_slot_pick {
	size_t slot;
	int reclaim; /* 1: the slot holds a file of user `from`, to be detached first */
	uid_t from;
	size_t share; /* the table divided among the users holding slots, uid included */
};

/* A slot for a new file of uid among slots[0..n): a free one, else, when uid holds fewer than
 * its share, the file with the fewest processes of the user holding the most (who holds more
 * than its share, the table being full). Returns 0 with *out, -ENOSPC when uid holds its share
 * already (out->share says it), -ENOMEM. */
int hook_slots_pick(const struct hook_slot *slots, size_t n, uid_t uid, struct hook_slot_pick *out);

#endif /* SPANPROF_HOOK_SLOTS_H */
