/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Test-only: another process's memory as the kernel reports it, read from outside: resident set
 * (/proc/PID/status) and the memlock of every BPF map fd it holds (/proc/PID/fdinfo). */
#ifndef SPANPROF_TEST_PROC_MEMORY_H
#define SPANPROF_TEST_PROC_MEMORY_H

#include <stdint.h>
#include <sys/types.h>

struct proc_memory {
	uint64_t rss; /* VmRSS, bytes */
	uint64_t peak_rss; /* VmHWM, bytes */
	uint64_t bpf_maps; /* sum of memlock over the BPF map fds */
	unsigned int nmaps; /* BPF map fds seen */
};

/* Returns 0, or -1 when pid's status or fd directory cannot be read. */
int proc_memory_read(pid_t pid, struct proc_memory *out);

/* One BPF map fd of a process: the kernel's name for the map (at most 15 characters: a longer
 * name in the BPF object is cut), its id, its size and its memlock. */
struct proc_bpf_map {
	char name[16];
	uint32_t id, max_entries;
	uint64_t memlock;
};

/* The BPF map fds pid holds, up to max of them into out; the name comes from the map's id in
 * fdinfo (BPF_MAP_GET_FD_BY_ID, then BPF_OBJ_GET_INFO_BY_FD: needs CAP_SYS_ADMIN). A map freed
 * between the two reads is left out. Returns how many were found (more than max when out was too
 * small: only max filled), or -1 when pid's fd directory cannot be read. */
int proc_memory_maps(pid_t pid, struct proc_bpf_map *out, int max);

/* The memlock of this process's fd (a BPF map: what its cgroup is charged), 0 when fdinfo has
 * none. */
uint64_t proc_memory_fd_memlock(int fd);

#endif /* SPANPROF_TEST_PROC_MEMORY_H */
