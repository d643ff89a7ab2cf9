// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>

#include "util/clock.h"
#include "util/log.h"
#include "util/worker_thread.h"

#ifdef __SANITIZE_ADDRESS__
#include <sanitizer/lsan_interface.h>
#endif

int worker_thread_start(struct worker_thread *w, unsigned int stop_wait_ms, void *(*fn)(void *),
			void *arg)
{
	int err;

	atomic_init(&w->stop, 0);
	w->running = 1;
	w->stop_wait_ms = stop_wait_ms;
	pthread_mutex_init(&w->lock, NULL);
	pthread_cond_init(&w->wake, NULL);
	pthread_cond_init(&w->exited, NULL);
	err = pthread_create(&w->thread, NULL, fn, arg);
	if (err) {
		pthread_cond_destroy(&w->exited);
		pthread_cond_destroy(&w->wake);
		pthread_mutex_destroy(&w->lock);
		return -err;
	}
	return 0;
}

void worker_thread_returned(struct worker_thread *w)
{
	w->running = 0;
	pthread_cond_signal(&w->exited);
	pthread_mutex_unlock(&w->lock);
}

/* Called locked. */
static void request_stop(struct worker_thread *w)
{
	if (!atomic_load(&w->stop))
		w->stop_deadline = clock_after_ms(CLOCK_REALTIME, w->stop_wait_ms);
	atomic_store(&w->stop, 1);
	pthread_cond_signal(&w->wake);
}

void worker_thread_stop(struct worker_thread *w)
{
	pthread_mutex_lock(&w->lock);
	request_stop(w);
	pthread_mutex_unlock(&w->lock);
}

int worker_thread_end(struct worker_thread *w, const void *owner, const char *what)
{
	int err = 0, running;

	pthread_mutex_lock(&w->lock);
	request_stop(w);
	while (w->running && !err)
		err = pthread_cond_timedwait(&w->exited, &w->lock, &w->stop_deadline);
	running = w->running;
	pthread_mutex_unlock(&w->lock);
	if (running) {
		pthread_detach(w->thread);
		log_warn(-ETIMEDOUT, "%s still running at exit: not waited for", what);
#ifdef __SANITIZE_ADDRESS__
		if (owner)
			__lsan_ignore_object(owner);
#else
		(void)owner;
#endif
		return -ETIMEDOUT;
	}
	pthread_join(w->thread, NULL);
	pthread_cond_destroy(&w->exited);
	pthread_cond_destroy(&w->wake);
	pthread_mutex_destroy(&w->lock);
	return 0;
}
