/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Test-only: a local user's processes holding every slot of the agent's hook-file table: copies
 * of fair_workload and of the hook library (each its own inode) the user can read, and
 * HOOK_HOGS processes that dlopen HOOK_LIBS_PER_HOG of them each and sleep. */
#ifndef SPANPROF_TEST_HOOK_HOGS_H
#define SPANPROF_TEST_HOOK_HOGS_H

#include <stddef.h>
#include <sys/types.h>

#define HOOK_SLOTS 256 /* the agent's hook-file table */
#define HOOK_LIBS_PER_HOG 8 /* hook files a process is tracked with at most */
#define HOOK_HOGS (HOOK_SLOTS / HOOK_LIBS_PER_HOG)

/* Copies fair_workload to dir/fair_workload, HOOK_SLOTS hook libraries to
 * dir/libs/hog-<n>.so and one more to dir/root-hook.so (the root service's own). Returns 0 or
 * -1. */
int hook_hogs_stage(const char *dir);

/* Starts the HOOK_HOGS processes as uid (service it-fair-hog, stdout dir/hog<n>.out), each
 * waited for until it mapped its libraries (timeout_s). pids[] gets each pid as it starts and
 * *started how many did, so the caller can kill them whatever happened. Returns 0 or -1. */
int hook_hogs_start(const char *dir, int uid, double timeout_s, pid_t *pids, int *started);

#endif /* SPANPROF_TEST_HOOK_HOGS_H */
