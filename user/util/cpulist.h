/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Parses kernel CPU lists ("0-3,5,7-8"), as in /sys/devices/system/cpu/online. */
#ifndef SPANPROF_CPULIST_H
#define SPANPROF_CPULIST_H

#include <stdbool.h>

#define CPULIST_MAX_CPUS 8192

/* Parses text into a malloc'ed mask of *n entries (n = highest CPU + 1). Returns 0, -EINVAL
 * for malformed text or a CPU above CPULIST_MAX_CPUS, or -ENOMEM. */
int cpulist_parse(const char *text, bool **mask, int *n);

/* Reads and parses a file such as /sys/devices/system/cpu/online. Returns 0 or -errno. */
int cpulist_read(const char *path, bool **mask, int *n);

#endif /* SPANPROF_CPULIST_H */
