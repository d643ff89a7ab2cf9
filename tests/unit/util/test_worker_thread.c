// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Unit tests for the worker thread's life: queued work wakes it, a job that reads the stop flag
 * without the lock gives up midway when asked, and the exit waits for a job that ignores the
 * stop only until the deadline, then leaves the thread detached. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "util/clock.h"
#include "util/log.h"
#include "util/worker_thread.h"

/* How long a test waits for the thread to reach a point before failing: generous, so that a
 * loaded machine does not fail it. */
#define REACH_WAIT_NS (10 * NS_PER_S)

struct fixture {
	struct worker_thread w;
	int queued, done; /* guarded by w.lock */
	atomic_int in_job; /* the thread is inside its long job */
	atomic_int cancelled; /* the job saw the stop flag midway */
	atomic_int release; /* lets a job that ignores the stop return */
};

/* Waits until *flag is set; 0 when it was within REACH_WAIT_NS. */
static int wait_flag(const atomic_int *flag)
{
	const struct timespec tick = { .tv_nsec = 1000000 };
	uint64_t end = clock_mono_ns() + REACH_WAIT_NS;

	while (!atomic_load(flag)) {
		if (clock_mono_ns() > end)
			return -ETIMEDOUT;
		nanosleep(&tick, NULL);
	}
	return 0;
}

/* The usual shape: runs each queued item under the loop, stops when asked. */
static void *queue_loop(void *arg)
{
	struct fixture *f = arg;

	pthread_mutex_lock(&f->w.lock);
	while (!atomic_load(&f->w.stop)) {
		if (!f->queued) {
			pthread_cond_wait(&f->w.wake, &f->w.lock);
			continue;
		}
		f->queued--;
		f->done++;
	}
	worker_thread_returned(&f->w);
	return NULL;
}

static void test_queued_work_wakes_the_thread_and_stop_ends_it(void **state)
{
	const struct timespec tick = { .tv_nsec = 1000000 };
	struct fixture f = { 0 };
	uint64_t end;
	int done;

	(void)state;
	assert_int_equal(worker_thread_start(&f.w, 5000, queue_loop, &f), 0);
	pthread_mutex_lock(&f.w.lock);
	f.queued = 3;
	pthread_cond_signal(&f.w.wake);
	pthread_mutex_unlock(&f.w.lock);
	end = clock_mono_ns() + REACH_WAIT_NS;
	do {
		pthread_mutex_lock(&f.w.lock);
		done = f.done;
		pthread_mutex_unlock(&f.w.lock);
		if (done < 3)
			nanosleep(&tick, NULL);
	} while (done < 3 && clock_mono_ns() < end);
	assert_int_equal(done, 3);
	assert_int_equal(worker_thread_end(&f.w, NULL, "test job"), 0);
	assert_int_equal(f.queued, 0);
}

/* A long job that polls the stop flag without the lock, as a cancellable build does. */
static void *cancellable_job(void *arg)
{
	struct fixture *f = arg;
	const struct timespec tick = { .tv_nsec = 100000 };

	atomic_store(&f->in_job, 1);
	while (!atomic_load(&f->w.stop))
		nanosleep(&tick, NULL);
	atomic_store(&f->cancelled, 1);
	pthread_mutex_lock(&f->w.lock);
	worker_thread_returned(&f->w);
	return NULL;
}

static void test_a_job_reading_stop_unlocked_gives_up_when_asked(void **state)
{
	struct fixture f = { 0 };

	(void)state;
	/* The deadline is far: an end that returns 0 means the job saw the flag, not that the
	 * wait ran out. */
	assert_int_equal(worker_thread_start(&f.w, 10000, cancellable_job, &f), 0);
	assert_int_equal(wait_flag(&f.in_job), 0);
	assert_int_equal(atomic_load(&f.cancelled), 0);
	assert_int_equal(worker_thread_end(&f.w, NULL, "test job"), 0);
	assert_int_equal(atomic_load(&f.cancelled), 1);
}

/* A job that runs on after the stop until the test lets it go. */
static void *stubborn_job(void *arg)
{
	struct fixture *f = arg;
	const struct timespec tick = { .tv_nsec = 100000 };

	atomic_store(&f->in_job, 1);
	while (!atomic_load(&f->release))
		nanosleep(&tick, NULL);
	pthread_mutex_lock(&f->w.lock);
	worker_thread_returned(&f->w);
	return NULL;
}

static void test_end_gives_up_at_the_deadline_and_detaches(void **state)
{
	struct fixture f = { 0 };
	uint64_t start, took;
	char logged[512] = "";
	FILE *log = tmpfile();
	int running;

	(void)state;
	assert_non_null(log);
	assert_int_equal(worker_thread_start(&f.w, 100, stubborn_job, &f), 0);
	assert_int_equal(wait_flag(&f.in_job), 0);
	log_set_output(log);
	start = clock_mono_ns();
	assert_int_equal(worker_thread_end(&f.w, NULL, "test job"), -ETIMEDOUT);
	took = clock_mono_ns() - start;
	log_set_output(NULL);
	rewind(log);
	assert_true(fread(logged, 1, sizeof(logged) - 1, log) > 0);
	fclose(log);
	/* Reported once, naming what was left running. */
	assert_non_null(strstr(logged, "test job still running at exit"));
	assert_null(strstr(strstr(logged, "test job") + 1, "test job"));
	assert_true(took >= 90 * NS_PER_MS); /* CLOCK_REALTIME deadline, read on another clock */
	/* The lock and conditions were left set up for the detached thread: let it return and
	 * wait for it, so that f outlives its last touch. */
	atomic_store(&f.release, 1);
	pthread_mutex_lock(&f.w.lock);
	while (f.w.running)
		pthread_cond_wait(&f.w.exited, &f.w.lock);
	running = f.w.running;
	pthread_mutex_unlock(&f.w.lock);
	assert_int_equal(running, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_queued_work_wakes_the_thread_and_stop_ends_it),
		cmocka_unit_test(test_a_job_reading_stop_unlocked_gives_up_when_asked),
		cmocka_unit_test(test_end_gives_up_at_the_deadline_and_detaches),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
