// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* One BPF_MAP_LOOKUP_BATCH over a per-CPU array instead of a lookup per counter: the agent
 * reads its drop and event counters at every drain. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/types.h>

#include "util/percpu_sum.h"

/* Fills rows [0, n) key by key; a key that cannot be read stays zero. Returns n. */
static __u32 lookup_each(int fd, __u32 *keys, __u64 *values, size_t n, int ncpus)
{
	__u32 i;

	for (i = 0; i < n; i++) {
		keys[i] = i;
		if (bpf_map_lookup_elem(fd, &keys[i], values + (size_t)i * ncpus))
			memset(values + (size_t)i * ncpus, 0, ncpus * sizeof(*values));
	}
	return n;
}

int percpu_sum(int fd, uint64_t *out, size_t n)
{
	int ncpus = libbpf_num_possible_cpus(), cpu, err;
	__u32 i, got = n, next, *keys;
	__u64 *values;

	if (ncpus <= 0 || ncpus > PERCPU_SUM_MAX_CPUS)
		return -EINVAL;
	memset(out, 0, n * sizeof(*out));
	if (!n)
		return 0;
	values = calloc(n * ncpus, sizeof(*values));
	keys = calloc(n, sizeof(*keys));
	if (!values || !keys) {
		free(values);
		free(keys);
		return -ENOMEM;
	}
	/* -ENOENT: the batch reached the map's end, rows [0, got) are filled. */
	err = bpf_map_lookup_batch(fd, NULL, &next, keys, values, &got, NULL);
	if (err && err != -ENOENT)
		got = lookup_each(fd, keys, values, n, ncpus);
	for (i = 0; i < got; i++)
		if (keys[i] < n)
			for (cpu = 0; cpu < ncpus; cpu++)
				out[keys[i]] += values[(size_t)i * ncpus + cpu];
	free(values);
	free(keys);
	return 0;
}
