// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* A bounded queue of bpf_links and the threads that destroy them. */
#define _GNU_SOURCE /* pipe2 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#include "discover/link_reaper.h"
#include "util/log.h"

struct link_reaper {
	pthread_mutex_t lock;
	pthread_cond_t wake; /* a link was queued, or stop */
	struct bpf_link **queue; /* ring of capacity */
	size_t capacity, head, count, busy;
	int stop;
	int holder_pipe; /* write end; the holder process exits once it is closed (-1: none) */
	pthread_t *threads;
	size_t nthreads;
	struct link_reaper_stats stats;
};

static void *reaper_main(void *arg)
{
	struct link_reaper *r = arg;
	struct bpf_link *link;

	pthread_mutex_lock(&r->lock);
	for (;;) {
		while (!r->count && !r->stop)
			pthread_cond_wait(&r->wake, &r->lock);
		if (!r->count)
			break; /* stop, and nothing left */
		link = r->queue[r->head];
		r->head = (r->head + 1) % r->capacity;
		r->count--;
		r->busy++;
		pthread_mutex_unlock(&r->lock);
		bpf_link__destroy(link);
		pthread_mutex_lock(&r->lock);
		r->busy--;
		r->stats.destroyed++;
	}
	pthread_mutex_unlock(&r->lock);
	return NULL;
}

struct link_reaper *link_reaper_new(size_t threads, size_t capacity)
{
	struct link_reaper *r = calloc(1, sizeof(*r));
	int err;

	if (!r)
		return NULL;
	pthread_mutex_init(&r->lock, NULL);
	pthread_cond_init(&r->wake, NULL);
	r->holder_pipe = -1;
	r->capacity = capacity ? capacity : 1;
	r->queue = calloc(r->capacity, sizeof(*r->queue));
	r->threads = calloc(threads ? threads : 1, sizeof(*r->threads));
	if (!r->queue || !r->threads) {
		link_reaper_free(r);
		errno = ENOMEM;
		return NULL;
	}
	for (; r->nthreads < (threads ? threads : 1); r->nthreads++) {
		err = pthread_create(&r->threads[r->nthreads], NULL, reaper_main, r);
		if (err) {
			log_err(-err, "start the uprobe detach thread");
			link_reaper_free(r);
			errno = err;
			return NULL;
		}
	}
	return r;
}

void link_reaper_free(struct link_reaper *r)
{
	size_t i;

	if (!r)
		return;
	pthread_mutex_lock(&r->lock);
	r->stop = 1;
	pthread_cond_broadcast(&r->wake);
	pthread_mutex_unlock(&r->lock);
	for (i = 0; i < r->nthreads; i++)
		pthread_join(r->threads[i], NULL);
	/* Without threads (start-up failed), what is queued is destroyed here. */
	for (; r->count; r->count--, r->head = (r->head + 1) % r->capacity)
		bpf_link__destroy(r->queue[r->head]);
	if (r->holder_pipe >= 0)
		close(r->holder_pipe); /* the holder process lets go of the uprobes now */
	pthread_cond_destroy(&r->wake);
	pthread_mutex_destroy(&r->lock);
	free(r->threads);
	free(r->queue);
	free(r);
}

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

/* In the holder: closes every descriptor but the sorted keep[] (async-signal-safe). */
static void close_all_but(const int *keep, size_t n)
{
	unsigned int from = 0;
	size_t i;

	for (i = 0; i < n; i++) {
		if ((unsigned int)keep[i] > from)
			close_range(from, keep[i] - 1, 0);
		from = keep[i] + 1;
	}
	close_range(from, ~0u, 0);
}

/* Forks the holder of keep[0..n) (sorted here) and the pipe's read end; locked, so that no
 * queued link is destroyed between the count and the fork. */
static int fork_holder(struct link_reaper *r, int *keep, size_t n)
{
	int fds[2];
	pid_t pid;
	char c;

	if (pipe2(fds, O_CLOEXEC))
		return -errno;
	keep[n++] = fds[0];
	qsort(keep, n, sizeof(*keep), cmp_int);
	pid = fork();
	if (pid < 0) {
		close(fds[0]);
		close(fds[1]);
		return -errno;
	}
	if (pid == 0) {
		/* The holder: keeps a reference to the links' descriptors (only those: no
		 * listening socket or map outlives the agent) until the agent closes the pipe,
		 * then exits; the kernel's slow removals happen in its exit. Only
		 * async-signal-safe calls here (the agent has threads). */
		close_all_but(keep, n);
		while (read(fds[0], &c, 1) < 0 && errno == EINTR)
			;
		_exit(0);
	}
	close(fds[0]);
	r->holder_pipe = fds[1];
	return 0;
}

int link_reaper_hand_off(struct link_reaper *r, const int *fds, size_t n)
{
	int *keep = NULL, err = 0, fd;
	size_t i, k = 0;

	pthread_mutex_lock(&r->lock);
	if (r->holder_pipe >= 0)
		goto out_unlock; /* handed off already */
	keep = calloc(n + r->count + 1, sizeof(*keep));
	if (!keep) {
		err = -ENOMEM;
		goto out_unlock;
	}
	for (i = 0; i < n; i++)
		keep[k++] = fds[i];
	/* Links still queued: their removal would be as slow. */
	for (i = 0; i < r->count; i++)
		if ((fd = bpf_link__fd(r->queue[(r->head + i) % r->capacity])) >= 0)
			keep[k++] = fd;
	if (k)
		err = fork_holder(r, keep, k);
out_unlock:
	pthread_mutex_unlock(&r->lock);
	free(keep);
	return err;
}

void link_reaper_push(struct link_reaper *r, struct bpf_link *link)
{
	if (!link)
		return;
	pthread_mutex_lock(&r->lock);
	if (r->count == r->capacity) {
		r->stats.inline_destroys++;
		pthread_mutex_unlock(&r->lock);
		bpf_link__destroy(link);
		return;
	}
	r->queue[(r->head + r->count) % r->capacity] = link;
	r->count++;
	r->stats.queued++;
	pthread_cond_signal(&r->wake);
	pthread_mutex_unlock(&r->lock);
}

void link_reaper_get_stats(struct link_reaper *r, struct link_reaper_stats *out)
{
	pthread_mutex_lock(&r->lock);
	*out = r->stats;
	out->pending = r->count + r->busy;
	pthread_mutex_unlock(&r->lock);
}
