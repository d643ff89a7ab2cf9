/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The life of a parse thread beside the run loop: started with its loop, woken when work is
 * queued, asked to stop once, and at exit waited for only until a deadline counted from that
 * first request, so that several threads asked together stop within one deadline, not the sum
 * of theirs. The owner's queue is guarded by the same lock. */
#ifndef SPANPROF_UTIL_WORKER_THREAD_H
#define SPANPROF_UTIL_WORKER_THREAD_H

#include <pthread.h>
#include <stdatomic.h>
#include <time.h>

struct worker_thread {
	pthread_t thread;
	pthread_mutex_t lock; /* guards the owner's queue and the fields below */
	pthread_cond_t wake; /* signalled when work is queued or a stop is asked */
	pthread_cond_t exited;
	/* A stop was asked: the loop returns at its next check. Set under the lock; a job may
	 * also read it without the lock to give up midway (a cancel flag). */
	atomic_int stop;
	int running; /* the thread has not returned yet */
	unsigned int stop_wait_ms;
	struct timespec
		stop_deadline; /* CLOCK_REALTIME: the exit waits for the thread until then */
};

/* Sets up w and runs fn(arg) on a new thread; on failure nothing is left set up. fn holds
 * w->lock while it reads its queue and w->stop, and ends with worker_thread_returned().
 * Returns 0 or -errno. */
int worker_thread_start(struct worker_thread *w, unsigned int stop_wait_ms, void *(*fn)(void *),
			void *arg);

/* The thread's last step, called locked (it unlocks): tells a waiting exit it has returned. */
void worker_thread_returned(struct worker_thread *w);

/* Asks the thread to stop; the first request starts the exit's deadline. */
void worker_thread_stop(struct worker_thread *w);

/* Asks the thread to stop and waits for it until the deadline. 0: it returned, and w is torn
 * down; -ETIMEDOUT: it is still inside a job and is detached, so the owner must leave it the
 * memory it uses (the process is exiting): that is logged once as "<what> still running at
 * exit", and owner (the heap object holding w and what the job reads, or NULL) is marked as
 * left on purpose for the leak checker. */
int worker_thread_end(struct worker_thread *w, const void *owner, const char *what);

#endif
