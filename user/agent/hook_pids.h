/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The hook registry's processes: which hook files each process maps. The table starts small and
 * doubles as processes are tracked, up to its limit; it does not shrink. Lookups scan only the
 * slots in use so far (a node's exit and exec events, thousands a second on a build machine,
 * must not pay for the whole table). */
#ifndef SPANPROF_HOOK_PIDS_H
#define SPANPROF_HOOK_PIDS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <linux/types.h>

#include "spanprof_abi.h"

#define HOOK_PID_FILES 8 /* hook files tracked per process */
#define HOOK_PIDS_START 64 /* slots allocated at first */

struct hook_pid {
	pid_t pid; /* 0: free slot */
	unsigned int nfiles;
	unsigned int files[HOOK_PID_FILES]; /* indexes into the registry's files */
	int is_go; /* what the sampler was told (go_pids), so it is told only of changes */
	struct go_proc go;
};

struct hook_pids {
	struct hook_pid *slots; /* cap slots; those at and past end are free */
	size_t end, cap, max;
	size_t count; /* processes tracked now */
	uint64_t full; /* processes not tracked: max were tracked already */
	uint64_t grown; /* times the table doubled */
};

/* An empty table of up to max processes. 0 or -ENOMEM. */
int hook_pids_init(struct hook_pids *t, size_t max);
void hook_pids_release(struct hook_pids *t); /* frees the slots; t can be re-initialised */

/* pid's slot, or NULL when it is not tracked. */
struct hook_pid *hook_pids_find(const struct hook_pids *t, pid_t pid);

/* Tracks pid (not tracked yet) with no files: *out is its slot, valid until the next add.
 * 0, -ENOSPC (max processes tracked already: counted in full) or -ENOMEM (the table could not
 * grow). */
int hook_pids_add(struct hook_pids *t, pid_t pid, struct hook_pid **out);

/* Frees p's slot (from hook_pids_find or hook_pids_add). */
void hook_pids_remove(struct hook_pids *t, struct hook_pid *p);

#endif /* SPANPROF_HOOK_PIDS_H */
