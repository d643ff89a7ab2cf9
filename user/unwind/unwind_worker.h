/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The thread that builds unwind tables, so that reading a large file's CFI (tens of ms) never
 * delays the agent's drain: jobs go in, finished jobs come back out. */
#ifndef SPANPROF_UNWIND_WORKER_H
#define SPANPROF_UNWIND_WORKER_H

#include "unwind/cfi_table.h"

/* The vDSO has no file: fd UNWIND_JOB_VDSO builds the table of the agent's own vDSO image, the
 * one every process on the machine maps. */
#define UNWIND_JOB_VDSO (-2)

struct unwind_job {
	struct unwind_job *next;
	int fd; /* owned by the job: closed by the worker once read */
	void *owner; /* the submitter's, untouched */
	int err; /* result of cfi_table_build */
	struct cfi_table table; /* the result; the taker releases it */
};

/* Starts the thread. NULL with errno on failure. */
struct unwind_worker *unwind_worker_new(void);

/* Stops the thread (after the job in progress) and frees every job still held. NULL-safe. */
void unwind_worker_free(struct unwind_worker *w);

/* Queues a job (ownership passes to the worker until it comes back from take_done). */
void unwind_worker_submit(struct unwind_worker *w, struct unwind_job *job);

/* Finished jobs, oldest first (a list through ->next), or NULL. Never blocks on a build. The
 * worker holds at most one finished job: it starts the next build once this took the last. */
struct unwind_job *unwind_worker_take_done(struct unwind_worker *w);

/* A descriptor that polls readable (POLLIN) while finished jobs wait for take_done, so the
 * taker can sleep instead of looking again and again. Owned by the worker. */
int unwind_worker_done_fd(const struct unwind_worker *w);

#endif /* SPANPROF_UNWIND_WORKER_H */
