/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The agent's own memory as the kernel and the allocator count it: resident set, heap in use,
 * and the kernel memory a BPF map is charged (memlock in /proc/self/fdinfo). */
#ifndef SPANPROF_SELF_MEMORY_H
#define SPANPROF_SELF_MEMORY_H

#include <stdint.h>

/* Resident memory of this process (VmRSS of /proc/self/status), in bytes.
 * Returns 0 or -errno (-ENOENT: no VmRSS line). */
int self_memory_rss(uint64_t *bytes);

/* Bytes malloc has handed out and not had back (all arenas, mmapped blocks included). */
uint64_t self_memory_heap(void);

/* The memlock line of /proc/self/fdinfo/<fd> for a BPF map fd: the kernel memory the map holds
 * (for maps without preallocation, what their elements take now). Returns 0 or -errno
 * (-ENOENT: no memlock line, fd is not a BPF map). */
int self_memory_bpf_map(int fd, uint64_t *bytes);

#endif /* SPANPROF_SELF_MEMORY_H */
