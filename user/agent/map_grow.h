/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* A BPF map that starts small and grows with what it holds: the map the programs use is slot 0 of
 * an array of maps, and once it is three quarters full it is replaced by one twice as big (up to a
 * limit), its entries copied over. Meant for maps the kernel preallocates whole (LRU hashes),
 * whose size is their memory from the start. */
#ifndef SPANPROF_MAP_GROW_H
#define SPANPROF_MAP_GROW_H

#include <stdint.h>

#include <bpf/bpf.h>

#include "util/self_memory.h"

struct map_grow {
	int outer_fd; /* the array of maps; slot 0 holds fd */
	int fd; /* the current map (owned) */
	enum bpf_map_type type;
	const char *name;
	uint32_t key_size, value_size;
	uint32_t max_entries; /* of the current map */
	uint32_t limit; /* it never grows beyond this */
	uint32_t entries; /* at the last check */
	uint64_t grown; /* replacements so far */
	uint64_t full; /* checks that found it at its limit and three quarters full */
	int at_limit_logged;
	struct self_memory_file info; /* fdinfo of fd, for map_grow_memory */
};

/* Creates the first map (start entries, at most limit) and puts it in slot 0 of outer_fd.
 * Returns 0 or -errno (logged). */
int map_grow_open(struct map_grow *g, int outer_fd, const char *name, enum bpf_map_type type,
		  uint32_t key_size, uint32_t value_size, uint32_t start, uint32_t limit);

/* Counts the current map's entries and, when more than three quarters of it is used and it is
 * below its limit, replaces it with one twice as big (at most limit). A map at its limit and
 * three quarters full is counted (full) at each check and logged once (an LRU map then evicts
 * its least recent entries). Returns
 * 1 when it grew, 0 when not, -errno when a new map could not be made or put in place (the old
 * one stays; logged). */
int map_grow_check(struct map_grow *g);

/* Kernel memory of the current map (memlock), for the agent's memory figures. */
int map_grow_memory(struct map_grow *g, uint64_t *bytes);

void map_grow_close(struct map_grow *g);

#endif /* SPANPROF_MAP_GROW_H */
