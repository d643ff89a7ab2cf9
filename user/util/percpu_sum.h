/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Reading a BPF per-CPU array of counters: each entry summed over the CPUs. */
#ifndef SPANPROF_PERCPU_SUM_H
#define SPANPROF_PERCPU_SUM_H

#include <stddef.h>
#include <stdint.h>

/* libbpf_num_possible_cpus() is trusted up to this many (the buffers are sized by it). */
#define PERCPU_SUM_MAX_CPUS 4096

/* out[i] = entry i of the BPF_MAP_TYPE_PERCPU_ARRAY fd (__u64 values) summed over the CPUs,
 * for i < n (n at most the map's size; entries that cannot be read count 0). One batch read,
 * so one syscall per map; one lookup per entry on kernels without batch operations on arrays.
 * Returns 0, -EINVAL (CPU count not believable) or -ENOMEM. */
int percpu_sum(int fd, uint64_t *out, size_t n);

#endif /* SPANPROF_PERCPU_SUM_H */
