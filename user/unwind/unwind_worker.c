// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* One table-building thread (util/worker_thread) with an in-queue and a done-queue under its
 * lock. */
#include <errno.h>
#include <gelf.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "unwind/unwind_worker.h"
#include "util/log.h"
#include "util/worker_thread.h"

#define WORKER_NICE 10

struct job_list {
	struct unwind_job *head, *tail;
};

/* How long stopping waits for the build in progress to see the stop flag and return (a
 * crafted file can keep libdw busy inside one FDE). */
#define STOP_WAIT_MS 300

struct unwind_worker {
	/* Its lock guards the queues; its stop flag also cancels the build in progress, which
	 * reads it without the lock at each FDE. */
	struct worker_thread worker;
	struct job_list todo, done;
	int done_fd; /* eventfd, readable while done holds jobs the taker has not seen */
};

static void list_push(struct job_list *l, struct unwind_job *j)
{
	j->next = NULL;
	if (l->tail)
		l->tail->next = j;
	else
		l->head = j;
	l->tail = j;
}

static struct unwind_job *list_pop(struct job_list *l)
{
	struct unwind_job *j = l->head;

	if (j) {
		l->head = j->next;
		if (!l->head)
			l->tail = NULL;
	}
	return j;
}

/* The vDSO image of this process: its size is where its section headers end. */
static int build_vdso(struct cfi_table *t, const atomic_int *cancel)
{
	const char *image = (const char *)getauxval(AT_SYSINFO_EHDR);
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)image;
	size_t size;
	Elf *elf;
	int err;

	if (!image)
		return -ENOENT;
	size = eh->e_shoff + (size_t)eh->e_shnum * eh->e_shentsize;
	elf = elf_memory((char *)image, size);
	if (!elf)
		return -EINVAL;
	err = cfi_table_build(elf, t, cancel);
	elf_end(elf);
	return err;
}

static void run_job(struct unwind_job *j, const atomic_int *cancel)
{
	if (j->fd == UNWIND_JOB_VDSO) {
		j->err = build_vdso(&j->table, cancel);
		return;
	}
	j->err = cfi_table_build_fd(j->fd, &j->table, cancel);
	close(j->fd);
	j->fd = -1;
}

/* Makes done_fd readable. The counter cannot overflow (one per job, reset by every take), so a
 * failed write can only mean a broken fd: the taker still finds the job on its next look. */
static void signal_done(struct unwind_worker *w)
{
	uint64_t one = 1;

	if (write(w->done_fd, &one, sizeof(one)) != sizeof(one))
		log_debug("unwind worker: cannot signal a finished job: %s", strerror(errno));
}

static void *worker_main(void *arg)
{
	struct unwind_worker *w = arg;
	struct unwind_job *j;

	/* Building is background work: on a busy node it yields to the profiled applications
	 * (a start-up on a node with 100 MB of text means seconds of CPU). */
	setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), WORKER_NICE);

	pthread_mutex_lock(&w->worker.lock);
	while (!atomic_load(&w->worker.stop)) {
		/* One finished table at a time: the next build starts once the taker has the last
		 * one, so a large table waiting for the run loop is never held beside another's
		 * transient rows (tens of MB each for a large binary). */
		j = w->done.head ? NULL : list_pop(&w->todo);
		if (!j) {
			pthread_cond_wait(&w->worker.wake, &w->worker.lock);
			continue;
		}
		pthread_mutex_unlock(&w->worker.lock);
		run_job(j, &w->worker.stop);
		pthread_mutex_lock(&w->worker.lock);
		list_push(&w->done, j);
		signal_done(w);
	}
	worker_thread_returned(&w->worker);
	return NULL;
}

struct unwind_worker *unwind_worker_new(void)
{
	struct unwind_worker *w = calloc(1, sizeof(*w));
	int err;

	if (!w)
		return NULL;
	elf_version(EV_CURRENT);
	w->done_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (w->done_fd < 0) {
		free(w);
		return NULL;
	}
	err = worker_thread_start(&w->worker, STOP_WAIT_MS, worker_main, w);
	if (err) {
		close(w->done_fd);
		free(w);
		errno = -err;
		return NULL;
	}
	return w;
}

static void free_list(struct job_list *l)
{
	struct unwind_job *j;

	while ((j = list_pop(l))) {
		if (j->fd >= 0)
			close(j->fd);
		cfi_table_release(&j->table);
		free(j);
	}
}

void unwind_worker_free(struct unwind_worker *w)
{
	if (!w)
		return;
	/* Still inside one build: let it finish on its own and keep w alive for it (the agent is
	 * exiting; the job and w are reclaimed with the process). */
	if (worker_thread_end(&w->worker, w, "unwind table build"))
		return;
	free_list(&w->todo);
	free_list(&w->done);
	close(w->done_fd);
	free(w);
}

void unwind_worker_submit(struct unwind_worker *w, struct unwind_job *job)
{
	pthread_mutex_lock(&w->worker.lock);
	list_push(&w->todo, job);
	pthread_cond_signal(&w->worker.wake);
	pthread_mutex_unlock(&w->worker.lock);
}

struct unwind_job *unwind_worker_take_done(struct unwind_worker *w)
{
	struct unwind_job *head;
	uint64_t count;

	pthread_mutex_lock(&w->worker.lock);
	head = w->done.head;
	w->done.head = w->done.tail = NULL;
	if (head)
		pthread_cond_signal(
			&w->worker.wake); /* the worker waits for this before its next build */
	/* Under the lock: a job pushed after this read signals anew. EAGAIN when nothing was. */
	if (read(w->done_fd, &count, sizeof(count)) < 0 && errno != EAGAIN)
		log_debug("unwind worker: cannot reset the finished-job signal: %s",
			  strerror(errno));
	pthread_mutex_unlock(&w->worker.lock);
	return head;
}

int unwind_worker_done_fd(const struct unwind_worker *w)
{
	return w->done_fd;
}
