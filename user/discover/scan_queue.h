/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Bounded FIFO of processes to rescan, each due a short delay after its event so that a burst of
 * mmaps (a process starting, a dlopen) is covered by one scan. */
#ifndef SPANPROF_SCAN_QUEUE_H
#define SPANPROF_SCAN_QUEUE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define SCAN_QUEUE_CAP 4096

struct scan_queue {
	pid_t pids[SCAN_QUEUE_CAP];
	uint64_t due_ns[SCAN_QUEUE_CAP];
	size_t head, count;
	uint64_t overflows; /* requests dropped because the queue was full */
};

void scan_queue_init(struct scan_queue *q);
/* Returns 0, or -ENOSPC (counted) when full. */
int scan_queue_push(struct scan_queue *q, pid_t pid, uint64_t due_ns);
/* Pops the oldest entry if it is due at now_ns. Returns 1 and sets *pid, else 0. */
int scan_queue_pop_due(struct scan_queue *q, uint64_t now_ns, pid_t *pid);
/* Due time of the oldest entry, or UINT64_MAX when empty. */
uint64_t scan_queue_next_due(const struct scan_queue *q);

#endif /* SPANPROF_SCAN_QUEUE_H */
