// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Ring-buffer FIFO of pending process rescans (entries are pushed in due order). */
#include <errno.h>

#include "discover/scan_queue.h"

void scan_queue_init(struct scan_queue *q)
{
	q->head = 0;
	q->count = 0;
	q->overflows = 0;
}

int scan_queue_push(struct scan_queue *q, pid_t pid, uint64_t due_ns)
{
	size_t tail;

	if (q->count == SCAN_QUEUE_CAP) {
		q->overflows++;
		return -ENOSPC;
	}
	tail = (q->head + q->count) % SCAN_QUEUE_CAP;
	q->pids[tail] = pid;
	q->due_ns[tail] = due_ns;
	q->count++;
	return 0;
}

int scan_queue_pop_due(struct scan_queue *q, uint64_t now_ns, pid_t *pid)
{
	if (!q->count || q->due_ns[q->head] > now_ns)
		return 0;
	*pid = q->pids[q->head];
	q->head = (q->head + 1) % SCAN_QUEUE_CAP;
	q->count--;
	return 1;
}

uint64_t scan_queue_next_due(const struct scan_queue *q)
{
	return q->count ? q->due_ns[q->head] : UINT64_MAX;
}
