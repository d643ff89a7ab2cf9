/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Drains a sampling window's BPF maps: each counted key becomes a plain sample record with its
 * stacks read, handed to a callback; then both maps are emptied for the window's next turn. */
#ifndef SPANPROF_DRAIN_H
#define SPANPROF_DRAIN_H

#include <stdint.h>

#include "util/spanprof_types.h"

/* One drained sample: valid only during the callback. */
struct sample {
	const struct sample_key *key; /* pid, span and stack hashes as the kernel recorded them */
	uint64_t count; /* samples with this key in the window */
	/* The stacks, leaf first, ending at the first zero or after SPANPROF_MAX_STACK_DEPTH
	 * entries; NULL when there is none. */
	const uint64_t *kern_ips, *user_ips;
	int lost_kern, lost_user; /* the BPF side could not record that stack */
	/* The thread's interpreter frames (CPython or CRuby: interp->interp says which), or NULL
	 * (none, or not read). */
	const struct interp_stack *interp;
	/* The span's name (key->span.name_id resolved through the kernel's span_names map); ""
	 * for none, NULL when the map no longer held it (counted in span_names_lost). */
	const char *span_name;
};

struct drain_stats {
	uint64_t keys; /* distinct keys drained */
	uint64_t map_errors; /* failed BPF map reads (count reads are also logged) */
	uint64_t span_names_lost; /* samples whose span name was evicted before the drain */
	uint64_t stacks_lost; /* stacks keys named that their map did not hold */
	/* The last window: keys of its count map, entries of its stack and interpreter stack maps
	 * (as far as the take read them). */
	uint32_t last_keys, last_stacks, last_interp_stacks;
};

typedef void (*drain_sample_fn)(void *ctx, const struct sample *s);
/* Called once per drain with the window's n keys, after they are read and before the first
 * sample is handed on: where the processes they name are resolved (their /proc files read),
 * so that no stage reads a file while it holds a sample. */
typedef void (*drain_keys_fn)(void *ctx, const struct sample_key *keys, uint32_t n);

/* max_keys: the count map's size (keys drained per window at most); max_stacks: the stack map's.
 * NULL with errno. */
struct drain *drain_new(uint32_t max_keys, uint32_t max_stacks);
void drain_free(struct drain *d); /* NULL-safe */

/* Reads every key of the window's count map (counts_fd: struct sample_key -> __u64) with its
 * kernel and user stacks from stacks_fd (__u64 hash -> struct spanprof_user_stack; -1: none)
 * and its span name from names_fd (u64 name id -> struct span_name; -1: none), calls fn once
 * per key, then empties the count and stack maps. Returns 0 or -errno (a count read failed; the
 * other keys are kept). */
int drain_window(struct drain *d, int counts_fd, int stacks_fd, int names_fd, drain_sample_fn fn,
		 void *ctx);

/* The window's interp_stacks map (hash -> struct interp_stack) for the next drain_window(),
 * which reads each sample's Python or Ruby frames from it and empties it; -1 (the default):
 * none. */
void drain_set_interp_stacks(struct drain *d, int interp_stacks_fd);

/* The function the next drains call with each window's keys before its samples (NULL: none). */
void drain_set_keys_fn(struct drain *d, drain_keys_fn fn, void *ctx);

/* drain_window(), but the stack map (stacks_fd) is read by lookup and left as it is: it is shared
 * by both windows and outlives them (the off-CPU frame-pointer mode's stacks, taken when a
 * thread blocks and counted when it runs). The interpreter stacks are read and emptied as
 * drain_window() does. */
int drain_window_shared_stacks(struct drain *d, int counts_fd, int stacks_fd, int names_fd,
			       drain_sample_fn fn, void *ctx);

void drain_get_stats(const struct drain *d, struct drain_stats *out);

#endif /* SPANPROF_DRAIN_H */
