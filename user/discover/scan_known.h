/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Which processes a periodic rescan can leave alone: those read since their last exec while the
 * kernel's process events (exec, code mapped, exit) all reached the agent. Such a process raises
 * an event for every change a scan would find, so re-reading its maps only costs CPU, and on a
 * node of a thousand idle processes that was most of the agent's work. A rescan reads every
 * process again when an event was lost and when the code-mapping events are not attached. As a
 * safety net for what events cannot tell, each rescan also reads a slice of the known processes:
 * those whose pid modulo the set's modulus is the rescan's slice. The modulus is
 * SCAN_KNOWN_FULL_EVERY, or more on a node of more than SCAN_KNOWN_FULL_EVERY *
 * SCAN_KNOWN_SLICE_MAX known processes, so that a slice holds about SCAN_KNOWN_SLICE_MAX of them
 * at most: every process is read again once every modulus rescans, and each rescan costs about
 * the same, bounded whatever the node runs (one rescan in ten used to read them all). */
#ifndef SPANPROF_SCAN_KNOWN_H
#define SPANPROF_SCAN_KNOWN_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Every known process is read again once in this many rescans at least, whatever the events
 * said, and the liveness of tracked processes is checked every this many rescans. */
#define SCAN_KNOWN_FULL_EVERY 10
/* About the most known processes a rescan reads again as the safety net (more rescans apart on a
 * node of more than SCAN_KNOWN_FULL_EVERY times this). */
#define SCAN_KNOWN_SLICE_MAX 64
/* The most processes an agent keeps in its set (4 bytes each, twice over); a node with more
 * reads the others on every rescan, counted as untracked. */
#define SCAN_KNOWN_MAX 16384

struct scan_known {
	pid_t *slots; /* open addressing, linear probing; 0: empty */
	size_t mask; /* capacity - 1 */
	size_t count, max; /* at most max pids are kept (half the capacity) */
	uint64_t events_lost; /* the kernel's lost-event count at the last rescan */
	unsigned int modulus, slice; /* known pids with pid % modulus == slice are read */
	int started; /* a rescan has begun before */
	int full; /* the rescan under way reads every process */
	uint64_t rescans, full_rescans; /* rescans begun; those that read every process */
	uint64_t read, skipped, untracked; /* processes: read by a rescan, left alone; untracked:
					      not kept, the set was full */
};

/* A set for at most max pids (>= 1). Returns 0 or -ENOMEM / -EINVAL. */
int scan_known_init(struct scan_known *k, size_t max);
void scan_known_release(struct scan_known *k);

/* Starts a rescan. events_lost: the kernel's count of process events lost so far; complete: the
 * code-mapping events are attached. Returns 1 when this rescan must read every process (the set
 * is emptied), 0 when it may skip the known ones outside its slice. */
int scan_known_begin(struct scan_known *k, uint64_t events_lost, int complete);

/* Whether the rescan under way may leave pid alone: it was read since its last exec and is not
 * in this rescan's slice. Counts the pid as skipped, or as read (the caller then reads it). */
int scan_known_skip(struct scan_known *k, pid_t pid);

/* Whether the rescan under way should check that tracked processes still live: it read every
 * process (an exit event may have been lost), or it is one of every SCAN_KNOWN_FULL_EVERY. */
int scan_known_liveness_due(const struct scan_known *k);

/* pid was read whole. Returns 0, or -ENOSPC (counted) when the set is full: it is then read by
 * every rescan, which costs time, not correctness. */
int scan_known_add(struct scan_known *k, pid_t pid);

/* A scan of pid ended. Only a scan that read pid whole (complete) lets rescans skip it: one
 * raised by an event may have run before the kernel made the mapping it announced, and one that
 * left work undone (a hook file still being parsed or not queued, a full table) relies on the
 * next rescan to finish it, so pid is forgotten. Returns scan_known_add()'s result, or 0. */
int scan_known_scanned(struct scan_known *k, pid_t pid, int complete);

/* pid exec'd, exited or is new (a fork; its pid may be a reused one): read it again. */
void scan_known_forget(struct scan_known *k, pid_t pid);

#endif /* SPANPROF_SCAN_KNOWN_H */
