// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Test workload for off-CPU stacks through libc: five threads, each in its own span ("wait
 * <kind>"), wait about 10 ms at a time in a function of their own that calls libc: usleep(),
 * read() on a pipe, recv() on a socket, pthread_cond_timedwait(), and pthread_mutex_lock() on a
 * mutex another thread holds. libc's wrappers keep no frame pointer, so only an unwinder that
 * reads CFI finds the function that called them. Each waiter prints the time it spent off the
 * CPU inside its span (wall minus thread CPU time): "off_cpu_ns <kind> N".
 * Usage: off_cpu_waits [ITERATIONS [GATE]]: with GATE, it starts once that file exists, and
 * after printing its figures stays until GATE.end exists (its stacks are symbolized while it
 * lives).
 *
 * A waker thread per kind makes each wait real: the waiter asks it (one byte on a request pipe,
 * before the span starts), and it answers about 10 ms later. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "spanprof.h"
#include "workload_clock.h"

#define WAIT_US 10000

enum kind { K_USLEEP, K_PIPE, K_RECV, K_COND, K_MUTEX, K__COUNT };

static const char *const kind_names[K__COUNT] = { "usleep", "pipe", "recv", "cond", "mutex" };

struct waiter {
	enum kind kind;
	int req[2]; /* waiter -> waker: one byte per wait */
	int data[2]; /* pipe: the byte read; recv: a socket pair; mutex: the waker's "held" */
	pthread_mutex_t m; /* cond: the condition's mutex; mutex: the one the waker holds */
	pthread_cond_t c;
	int flag; /* cond: set by the waker */
	long long off_ns; /* off the CPU inside the span, measured here */
};

static struct waiter waiters[K__COUNT];
static int iterations = 40;

static void must(int ok, const char *what)
{
	if (!ok) {
		fprintf(stderr, "%s: %s\n", what, strerror(errno));
		exit(2);
	}
}

/* The barrier after each call keeps -O2 from turning it into a tail jump (which would take the
 * waiting function off the stack). */
#define NO_TAIL_CALL() __asm__ volatile("" ::: "memory")

static __attribute__((noinline)) void wait_usleep(struct waiter *w)
{
	(void)w;
	usleep(WAIT_US);
	NO_TAIL_CALL();
}

static __attribute__((noinline)) void wait_pipe(struct waiter *w)
{
	char b;

	must(read(w->data[0], &b, 1) == 1, "read pipe");
	NO_TAIL_CALL();
}

static __attribute__((noinline)) void wait_recv(struct waiter *w)
{
	char b;

	must(recv(w->data[0], &b, 1, 0) == 1, "recv");
	NO_TAIL_CALL();
}

static __attribute__((noinline)) void wait_cond(struct waiter *w)
{
	struct timespec deadline;

	clock_gettime(CLOCK_REALTIME, &deadline);
	deadline.tv_sec += 5;
	pthread_mutex_lock(&w->m);
	while (!w->flag)
		if (pthread_cond_timedwait(&w->c, &w->m, &deadline) == ETIMEDOUT)
			break;
	pthread_mutex_unlock(&w->m);
	NO_TAIL_CALL();
}

static __attribute__((noinline)) void wait_mutex(struct waiter *w)
{
	pthread_mutex_lock(&w->m);
	pthread_mutex_unlock(&w->m);
	NO_TAIL_CALL();
}

static void (*const wait_fns[K__COUNT])(struct waiter *) = { wait_usleep, wait_pipe, wait_recv,
							     wait_cond, wait_mutex };

/* Answers one request of w's waiter about WAIT_US later. */
static void wake(struct waiter *w)
{
	char b = 1;

	switch (w->kind) {
	case K_PIPE:
	case K_RECV:
		usleep(WAIT_US);
		must(write(w->data[1], &b, 1) == 1, "write");
		break;
	case K_COND:
		usleep(WAIT_US);
		pthread_mutex_lock(&w->m);
		w->flag = 1;
		pthread_cond_signal(&w->c);
		pthread_mutex_unlock(&w->m);
		break;
	case K_MUTEX:
		pthread_mutex_lock(&w->m);
		must(write(w->data[1], &b, 1) == 1, "write held");
		usleep(WAIT_US);
		pthread_mutex_unlock(&w->m);
		break;
	default:
		break;
	}
}

static void *waker(void *arg)
{
	struct waiter *w = arg;
	char b;

	while (read(w->req[0], &b, 1) == 1)
		wake(w);
	return NULL;
}

/* Before the span: what the wait needs from its waker (kept out of the span's time). */
static void prepare(struct waiter *w)
{
	char b = 1;

	if (w->kind == K_USLEEP)
		return;
	if (w->kind == K_COND) {
		pthread_mutex_lock(&w->m);
		w->flag = 0;
		pthread_mutex_unlock(&w->m);
	}
	must(write(w->req[1], &b, 1) == 1, "request");
	if (w->kind == K_MUTEX) /* the waker holds the mutex once it says so */
		must(read(w->data[0], &b, 1) == 1, "read held");
}

static void *waiter(void *arg)
{
	struct waiter *w = arg;
	struct spanprof_span s;
	long long wall0, cpu0;

	memset(&s, 0, sizeof(s));
	s.abi_version = SPANPROF_SPAN_ABI_VERSION;
	memset(s.trace_id, 0x3c, sizeof(s.trace_id));
	s.span_id[0] = 0x77;
	s.span_id[7] = (unsigned char)(w->kind + 1);
	snprintf(s.name, sizeof(s.name), "wait %s", kind_names[w->kind]);
	for (int i = 0; i < iterations; i++) {
		prepare(w);
		wall0 = clock_ns(CLOCK_MONOTONIC);
		cpu0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
		spanprof_span_set(&s);
		wait_fns[w->kind](w);
		spanprof_span_set(NULL);
		w->off_ns += (clock_ns(CLOCK_MONOTONIC) - wall0) -
			     (clock_ns(CLOCK_THREAD_CPUTIME_ID) - cpu0);
	}
	return NULL;
}

/* The test creates the file gate once its own agent attached the hook and has the unwind
 * tables of this process. */
static int wait_for_gate(const char *gate)
{
	long long end = clock_ns(CLOCK_MONOTONIC) + 60000000000LL;

	while (access(gate, F_OK)) {
		if (clock_ns(CLOCK_MONOTONIC) > end) {
			fprintf(stderr, "no %s within 60 s\n", gate);
			return -1;
		}
		usleep(10000);
	}
	return 0;
}

static void setup(struct waiter *w, enum kind k)
{
	w->kind = k;
	must(!pipe(w->req), "pipe");
	if (k == K_RECV)
		must(!socketpair(AF_UNIX, SOCK_STREAM, 0, w->data), "socketpair");
	else
		must(!pipe(w->data), "pipe");
	pthread_mutex_init(&w->m, NULL);
	pthread_cond_init(&w->c, NULL);
}

int main(int argc, char **argv)
{
	pthread_t wt[K__COUNT], kt[K__COUNT];
	char end[4096];
	int k;

	if (argc > 1)
		iterations = atoi(argv[1]);
	if (argc > 2 && wait_for_gate(argv[2]))
		return 3;
	for (k = 0; k < K__COUNT; k++) {
		setup(&waiters[k], k);
		pthread_create(&kt[k], NULL, waker, &waiters[k]);
		pthread_create(&wt[k], NULL, waiter, &waiters[k]);
	}
	for (k = 0; k < K__COUNT; k++) {
		pthread_join(wt[k], NULL);
		close(waiters[k].req[1]);
		pthread_join(kt[k], NULL);
	}
	for (k = 0; k < K__COUNT; k++)
		printf("off_cpu_ns %s %lld\n", kind_names[k], waiters[k].off_ns);
	printf("cpu_s=%.6f\n", clock_ns(CLOCK_PROCESS_CPUTIME_ID) / 1e9);
	fflush(stdout);
	if (argc > 2) {
		snprintf(end, sizeof(end), "%s.end", argv[2]);
		if (wait_for_gate(end))
			return 3;
	}
	return 0;
}
