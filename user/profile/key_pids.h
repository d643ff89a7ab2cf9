/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The distinct processes a drain's sample keys name, so that what is read of each from /proc
 * before the sample loop is read once per process per drain, not once per key. BPF hash maps
 * are iterated in no useful order, so keys of one process are rarely next to each other. */
#ifndef SPANPROF_KEY_PIDS_H
#define SPANPROF_KEY_PIDS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "util/spanprof_types.h"

struct key_pid {
	pid_t pid;
	uint32_t keys; /* how many of the drain's keys name it */
	int user; /* one of those keys has user frames: its symbols are needed */
};

/* Writes to out (room for n) the distinct pids (> 0) of keys[0..n), those named by the most keys
 * first (then by pid), so a caller that can afford only the first few keeps the busiest.
 * Returns how many were written. */
size_t key_pids_distinct(const struct sample_key *keys, uint32_t n, struct key_pid *out);

#endif /* SPANPROF_KEY_PIDS_H */
