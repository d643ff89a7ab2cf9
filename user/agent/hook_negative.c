// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* An open-addressing set of (device, inode) pairs that grows by doubling, up to a bound. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "agent/hook_negative.h"

struct hook_file_id {
	uint64_t dev, inode; /* inode 0: empty slot */
};

int hook_negative_init(struct hook_negative *s, size_t max)
{
	memset(s, 0, sizeof(*s));
	s->max = max;
	s->max_cap = HOOK_NEGATIVE_START;
	while (s->max_cap < 2 * max)
		s->max_cap *= 2;
	s->cap = HOOK_NEGATIVE_START;
	s->slots = calloc(s->cap, sizeof(*s->slots));
	return s->slots ? 0 : -ENOMEM;
}

void hook_negative_release(struct hook_negative *s)
{
	free(s->slots);
	s->slots = NULL;
	s->cap = s->count = 0;
}

static size_t slot_of(const struct hook_file_id *slots, size_t cap, uint64_t dev, uint64_t inode)
{
	uint64_t h = (inode * 0x9e3779b97f4a7c15ull) ^ (dev * 0xbf58476d1ce4e5b9ull);
	size_t i = h & (cap - 1);

	while (slots[i].inode && (slots[i].inode != inode || slots[i].dev != dev))
		i = (i + 1) & (cap - 1);
	return i;
}

int hook_negative_has(const struct hook_negative *s, uint64_t dev, uint64_t inode)
{
	return s->slots[slot_of(s->slots, s->cap, dev, inode)].inode != 0;
}

/* Doubles the table, placing every file again. 0 or -ENOMEM. */
static int grow(struct hook_negative *s)
{
	size_t cap = s->cap * 2, i;
	struct hook_file_id *slots = calloc(cap, sizeof(*slots));

	if (!slots)
		return -ENOMEM;
	for (i = 0; i < s->cap; i++)
		if (s->slots[i].inode)
			slots[slot_of(slots, cap, s->slots[i].dev, s->slots[i].inode)] =
				s->slots[i];
	free(s->slots);
	s->slots = slots;
	s->cap = cap;
	s->grown++;
	return 0;
}

static void forget_all(struct hook_negative *s)
{
	memset(s->slots, 0, s->cap * sizeof(*s->slots));
	s->count = 0;
	s->resets++;
}

void hook_negative_add(struct hook_negative *s, uint64_t dev, uint64_t inode)
{
	size_t i;

	if (s->count >= s->max)
		forget_all(s);
	/* A quarter full at most while it can grow: probes stay as short as in a table sized
	 * for max from the start. */
	if (4 * (s->count + 1) > s->cap && s->cap < s->max_cap && grow(s))
		forget_all(s);
	i = slot_of(s->slots, s->cap, dev, inode);
	if (s->slots[i].inode)
		return;
	s->slots[i] = (struct hook_file_id){ dev, inode };
	s->count++;
}
