// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Free slot, or a slot taken back from the user holding the most. */
#include <errno.h>
#include <stdlib.h>

#include "discover/hook_slots.h"

struct holder {
	uid_t uid;
	size_t slots;
};

/* Slots per user into h (room for n); returns how many users hold slots. */
static size_t count_holders(const struct hook_slot *slots, size_t n, struct holder *h)
{
	size_t users = 0, i, j;

	for (i = 0; i < n; i++) {
		if (!slots[i].in_use)
			continue;
		for (j = 0; j < users && h[j].uid != slots[i].uid; j++)
			;
		if (j == users)
			h[users++] = (struct holder){ slots[i].uid, 0 };
		h[j].slots++;
	}
	return users;
}

int hook_slots_pick(const struct hook_slot *slots, size_t n, uid_t uid, struct hook_slot_pick *out)
{
	size_t users, i, mine = 0, most = 0;
	struct holder *h;
	long victim = -1;
	uid_t top = uid;

	*out = (struct hook_slot_pick){ .share = n };
	for (i = 0; i < n; i++)
		if (!slots[i].in_use) {
			out->slot = i;
			return 0;
		}
	h = calloc(n ? n : 1, sizeof(*h));
	if (!h)
		return -ENOMEM;
	users = count_holders(slots, n, h);
	for (i = 0; i < users; i++) {
		if (h[i].uid == uid)
			mine = h[i].slots;
		if (h[i].slots > most) {
			most = h[i].slots;
			top = h[i].uid;
		}
	}
	free(h);
	out->share = n / (users + !mine);
	if (mine >= out->share || top == uid)
		return -ENOSPC;
	for (i = 0; i < n; i++)
		if (slots[i].uid == top && (victim < 0 || slots[i].users < slots[victim].users))
			victim = i;
	out->slot = victim;
	out->reclaim = 1;
	out->from = top;
	return 0;
}
