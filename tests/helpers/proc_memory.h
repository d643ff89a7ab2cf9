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

#endif /* SPANPROF_TEST_PROC_MEMORY_H */
