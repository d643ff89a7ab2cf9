/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Checks, before loading anything, that this kernel and this process can run the agent, so the
 * user gets one clear line instead of a verifier dump. */
#ifndef SPANPROF_PREFLIGHT_H
#define SPANPROF_PREFLIGHT_H

/* Oldest kernel spanprof supports: task storage for tracing programs and BPF ring buffers. */
#define PREFLIGHT_MIN_KERNEL_MAJOR 5
#define PREFLIGHT_MIN_KERNEL_MINOR 11

/* Returns 0, or logs the problem and returns -EPERM (a missing capability, named), -ENOENT (no
 * kernel BTF) or -ENOSYS (kernel too old). */
int preflight_check(void);

/* Mounts tracefs at /sys/kernel/tracing when it is not there (the mmap tracepoint needs it).
 * Failure is only logged: the agent works without it, finding dlopen'ed hooks more slowly. */
void preflight_mount_tracefs(void);

/* 1 when the kernel optimizes uprobes on a 5-byte nop (x86-64, 6.18 and later). */
int preflight_uprobe_nop5_optimized(void);

/* Parses "6.18.4-foo" into major/minor. Returns 0 or -EINVAL. */
int preflight_parse_release(const char *release, int *major, int *minor);

#endif /* SPANPROF_PREFLIGHT_H */
