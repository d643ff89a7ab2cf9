/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The agent's own memory as the kernel and the allocator count it: resident set, heap in use,
 * and the kernel memory a BPF map is charged (memlock in /proc/self/fdinfo). */
#ifndef SPANPROF_SELF_MEMORY_H
#define SPANPROF_SELF_MEMORY_H

#include <stdint.h>

/* A /proc/self file kept open between reads: read again from its start, it shows the figures
 * of that moment, without the path lookup, open and close that cost more than the read itself
 * (the agent reads its status and every map's fdinfo once a drain). */
struct self_memory_file {
	int fd; /* -1: not open yet */
	int of_fd; /* the map fd whose fdinfo fd shows; -1 for the status file */
	/* A map whose memory cannot change (see self_memory_bpf_map_in): its kernel id, 0 when
	 * none, and its memlock as read once. */
	uint32_t fixed_id;
	uint64_t fixed_bytes;
};

#define SELF_MEMORY_FILE_INIT \
	{                     \
		-1, -1, 0, 0  \
	}

void self_memory_file_close(struct self_memory_file *f); /* back to SELF_MEMORY_FILE_INIT */

/* Resident memory of this process (VmRSS of /proc/self/status), in bytes, read through f
 * (opened at the first call). Returns 0 or -errno (-ENOENT: no VmRSS line). */
int self_memory_rss_in(struct self_memory_file *f, uint64_t *bytes);

/* The memlock line of /proc/self/fdinfo/<fd> for a BPF map fd, read through f (opened at the
 * first call, and again when fd is another than f's): the kernel memory the map holds (for
 * maps without preallocation, what their elements take now). A map the kernel allocates whole
 * at creation (arrays, stack trace maps, rings, LRU hashes, hashes without BPF_F_NO_PREALLOC)
 * holds the same memory for its life: its figure is read once and given again while fd names
 * the same map (its kernel id, one bpf() call). Returns 0 or -errno (-ENOENT: no memlock line,
 * fd is not a BPF map). */
int self_memory_bpf_map_in(struct self_memory_file *f, int fd, uint64_t *bytes);

/* The same, for one read: the file is opened and closed again. */
int self_memory_rss(uint64_t *bytes);
int self_memory_bpf_map(int fd, uint64_t *bytes);

/* Bytes malloc has handed out and not had back (all arenas, mmapped blocks included). */
uint64_t self_memory_heap(void);

#endif /* SPANPROF_SELF_MEMORY_H */
