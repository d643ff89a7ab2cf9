// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The set of processes a rescan may skip (see scan_known.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "discover/scan_known.h"

int scan_known_init(struct scan_known *k, size_t max)
{
	size_t cap = 16;

	memset(k, 0, sizeof(*k));
	if (!max)
		return -EINVAL;
	while (cap < 2 * max)
		cap *= 2;
	k->slots = calloc(cap, sizeof(*k->slots));
	if (!k->slots)
		return -ENOMEM;
	k->mask = cap - 1;
	k->max = max;
	return 0;
}

void scan_known_release(struct scan_known *k)
{
	free(k->slots);
	k->slots = NULL;
	k->count = 0;
}

static size_t home(const struct scan_known *k, pid_t pid)
{
	return ((uint32_t)pid * 2654435761u) & k->mask;
}

/* The slot holding pid, or the empty slot where it would go. */
static size_t find(const struct scan_known *k, pid_t pid)
{
	size_t i = home(k, pid);

	while (k->slots[i] && k->slots[i] != pid)
		i = (i + 1) & k->mask;
	return i;
}

int scan_known_begin(struct scan_known *k, uint64_t events_lost, int complete)
{
	int full = !k->started || !complete || events_lost != k->events_lost;

	/* Counted before this rescan's reads: about count / modulus known pids in a slice. */
	k->modulus = (unsigned int)((k->count + SCAN_KNOWN_SLICE_MAX - 1) / SCAN_KNOWN_SLICE_MAX);
	if (k->modulus < SCAN_KNOWN_FULL_EVERY)
		k->modulus = SCAN_KNOWN_FULL_EVERY;
	k->slice = (unsigned int)(k->rescans % k->modulus);
	k->rescans++;
	k->started = 1;
	k->events_lost = events_lost;
	k->full = full;
	if (!full)
		return 0;
	k->full_rescans++;
	memset(k->slots, 0, (k->mask + 1) * sizeof(*k->slots));
	k->count = 0;
	return 1;
}

int scan_known_skip(struct scan_known *k, pid_t pid)
{
	if (k->full || pid <= 0 || (unsigned int)pid % k->modulus == k->slice ||
	    !k->slots[find(k, pid)]) {
		k->read++;
		return 0;
	}
	k->skipped++;
	return 1;
}

int scan_known_liveness_due(const struct scan_known *k)
{
	return k->full || (k->rescans - 1) % SCAN_KNOWN_FULL_EVERY == 0;
}

int scan_known_add(struct scan_known *k, pid_t pid)
{
	size_t i;

	if (pid <= 0)
		return -EINVAL;
	i = find(k, pid);
	if (k->slots[i])
		return 0;
	if (k->count >= k->max) {
		k->untracked++;
		return -ENOSPC;
	}
	k->slots[i] = pid;
	k->count++;
	return 0;
}

void scan_known_forget(struct scan_known *k, pid_t pid)
{
	size_t i, j, h;

	if (pid <= 0 || !k->slots)
		return;
	i = find(k, pid);
	if (!k->slots[i])
		return;
	/* Backward shift: moves later entries of the probe run into the hole when their home
	 * slot does not lie strictly between the hole and them, so every lookup still finds
	 * them without tombstones. */
	k->slots[i] = 0;
	k->count--;
	for (j = (i + 1) & k->mask; k->slots[j]; j = (j + 1) & k->mask) {
		h = home(k, k->slots[j]);
		if (((j - h) & k->mask) >= ((j - i) & k->mask)) {
			k->slots[i] = k->slots[j];
			k->slots[j] = 0;
			i = j;
		}
	}
}

int scan_known_scanned(struct scan_known *k, pid_t pid, int complete)
{
	if (complete)
		return scan_known_add(k, pid);
	scan_known_forget(k, pid);
	return 0;
}
