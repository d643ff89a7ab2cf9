/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Uprobe links destroyed off the run loop: the kernel takes about 0.1 s to remove a uprobe, so
 * links are queued to threads that destroy them while the run loop goes on. */
#ifndef SPANPROF_LINK_REAPER_H
#define SPANPROF_LINK_REAPER_H

#include <stddef.h>
#include <stdint.h>

struct bpf_link;
struct link_reaper;

struct link_reaper_stats {
	uint64_t queued; /* links handed to the threads */
	uint64_t destroyed; /* links the threads destroyed */
	uint64_t inline_destroys; /* queue full: destroyed by the caller */
	uint64_t pending; /* queued, not destroyed yet (now) */
};

/* A reaper of `threads` threads and a queue of `capacity` links. NULL with errno. */
struct link_reaper *link_reaper_new(size_t threads, size_t capacity);

/* For a fast exit with many links: forks a holder process that keeps a reference to the n
 * descriptors fds[] (the attached links', from bpf_link__fd()) and to the queued links' until
 * link_reaper_free() is done, so the agent's own destroys are not the last references (cheap)
 * and the kernel's removals (about 0.1 s each, one at a time) run in the holder's exit instead.
 * Returns 0 or -errno (then link_reaper_free() removes them itself). */
int link_reaper_hand_off(struct link_reaper *r, const int *fds, size_t n);

/* Destroys every link still queued (the threads share them), joins the threads and frees.
 * NULL-safe. */
void link_reaper_free(struct link_reaper *r);

/* Takes ownership of link (NULL: nothing): destroyed by a thread soon. When the queue is full
 * the caller destroys it (counted), so the number of links alive stays bounded. */
void link_reaper_push(struct link_reaper *r, struct bpf_link *link);

void link_reaper_get_stats(struct link_reaper *r, struct link_reaper_stats *out);

#endif /* SPANPROF_LINK_REAPER_H */
