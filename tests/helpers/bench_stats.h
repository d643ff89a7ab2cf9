/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Test-only: what the benchmarks measure of a live process: its CPU time from /proc and the
 * kernel's run-time statistics of the perf_event BPF programs it holds. */
#ifndef SPANPROF_TEST_BENCH_STATS_H
#define SPANPROF_TEST_BENCH_STATS_H

#include <sys/types.h>

/* utime + stime of a live process (all its threads), in seconds; -1 when it cannot be read. */
double bench_stats_cpu_s(pid_t pid);

/* Sums run_time_ns and run_cnt over the perf_event programs (the sampler) whose fds pid holds;
 * both stay 0 unless kernel.bpf_stats_enabled is 1. */
void bench_stats_bpf_progs(pid_t pid, unsigned long long *ns, unsigned long long *cnt);

/* The same for the one program called name (as the BPF object names it, cut at 15 characters)
 * among those pid holds. */
void bench_stats_bpf_prog(pid_t pid, const char *name, unsigned long long *ns,
			  unsigned long long *cnt);

/* The same for the program behind fd (both 0 when fd is not one). */
void bench_stats_bpf_prog_fd(int fd, unsigned long long *ns, unsigned long long *cnt);

/* Sets kernel.bpf_stats_enabled to 1. Returns its previous value for bench_stats_restore(). */
int bench_stats_enable(void);

/* Puts back the value bench_stats_enable() returned. */
void bench_stats_restore(int was);

/* Writes text to path (creating it). Returns 0 or -1. */
int bench_stats_write_file(const char *path, const char *text);

#endif /* SPANPROF_TEST_BENCH_STATS_H */
