/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The most kernel memory a BPF map can hold: every entry of its bound in use. What a container
 * limit has to leave room for, as the kernel charges map memory to the agent's cgroup. */
#ifndef SPANPROF_MAP_BUDGET_H
#define SPANPROF_MAP_BUDGET_H

#include <stdint.h>

#include "agent/loader.h"
#include "config/config.h"

/* Bytes map m holds with max_entries in use, on a node of ncpus CPUs (per-CPU maps hold a value
 * per CPU); a task storage map holds an entry for each of nthreads threads. The figures follow
 * the kernel's own accounting (memlock in /proc/PID/fdinfo: element and bucket sizes), rounded
 * up where the kernel's headers are not known exactly. */
uint64_t map_budget_bytes(const struct loader_map_bound *m, unsigned int ncpus,
			  unsigned int nthreads);

/* The node docs/memory.md states the worst case for (and the Helm chart's limit covers): the
 * window maps reach their largest automatic size from 21 CPUs on; threads that set spans each
 * hold task storage. */
#define MAP_BUDGET_NODE_CPUS 64u
#define MAP_BUDGET_NODE_SPAN_THREADS 10000u

/* Every BPF map of the agent at its bound with cfg's options, summed: the window maps as sized on
 * a node of ncpus CPUs, task storage for nthreads threads. Returns 0 and sets *bytes, or -errno
 * (the BPF object could not be opened). When each is not NULL, it is called for every map with
 * its figure. */
int map_budget_worst(const struct spanprof_config *cfg, unsigned int ncpus, unsigned int nthreads,
		     uint64_t *bytes,
		     void (*each)(const struct loader_map_bound *m, uint64_t bytes, void *ctx),
		     void *ctx);

#endif /* SPANPROF_MAP_BUDGET_H */
