// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* A table of processes that grows by doubling, scanned up to its last slot in use. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "agent/hook_pids.h"

int hook_pids_init(struct hook_pids *t, size_t max)
{
	memset(t, 0, sizeof(*t));
	t->max = max;
	t->cap = max < HOOK_PIDS_START ? max : HOOK_PIDS_START;
	if (!t->cap)
		return 0;
	t->slots = calloc(t->cap, sizeof(*t->slots));
	return t->slots ? 0 : -ENOMEM;
}

void hook_pids_release(struct hook_pids *t)
{
	free(t->slots);
	t->slots = NULL;
	t->end = t->cap = t->count = 0;
}

struct hook_pid *hook_pids_find(const struct hook_pids *t, pid_t pid)
{
	size_t i;

	for (i = 0; i < t->end; i++)
		if (t->slots[i].pid == pid)
			return &t->slots[i];
	return NULL;
}

/* Doubles the table (up to max). 0 or -ENOMEM. */
static int grow(struct hook_pids *t)
{
	size_t cap = t->cap * 2 < t->max ? t->cap * 2 : t->max;
	struct hook_pid *slots = realloc(t->slots, cap * sizeof(*slots));

	if (!slots)
		return -ENOMEM;
	memset(&slots[t->cap], 0, (cap - t->cap) * sizeof(*slots));
	t->slots = slots;
	t->cap = cap;
	t->grown++;
	return 0;
}

int hook_pids_add(struct hook_pids *t, pid_t pid, struct hook_pid **out)
{
	struct hook_pid *p = NULL;
	size_t i;
	int err;

	for (i = 0; i < t->end && !p; i++)
		if (!t->slots[i].pid)
			p = &t->slots[i];
	if (!p && t->end >= t->max) {
		t->full++;
		return -ENOSPC;
	}
	if (!p && t->end == t->cap) {
		err = grow(t);
		if (err)
			return err;
	}
	if (!p)
		p = &t->slots[t->end++];
	*p = (struct hook_pid){ .pid = pid };
	t->count++;
	*out = p;
	return 0;
}

void hook_pids_remove(struct hook_pids *t, struct hook_pid *p)
{
	p->pid = 0;
	p->nfiles = 0;
	t->count--;
	/* The free slots at the end of the used range leave it. */
	while (t->end && !t->slots[t->end - 1].pid)
		t->end--;
}
