// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Test workload for two copies of the span hook in one process: the executable links
 * libspanprof.so (copy A) and dlopen()s a second library that carries its own copy of the hook
 * objects (copy B, argv[1]), as an app and a Python extension or plugin that statically links
 * libspanprof.a do. Thread "a" sets its spans through copy A, thread "b" through copy B, and
 * thread "alt" through one and then the other, span after span.
 *
 *   two_copies_workload COPY labels SECONDS
 *     Each thread runs 1 ms spans with one fixed span id per function (work_via_a,
 *     work_via_b, work_alt_a, work_alt_b; "alt" also runs work_alt_outside in none) until it
 *     used SECONDS of CPU ("alt" twice that), then prints cpu_s=.
 *   two_copies_workload COPY cpu N
 *     Each thread runs N spans of about 0.3 ms of CPU, with unique ids, named by turns
 *     "GET /alpha" and "POST /beta" for runs of eight spans, and prints each span's own CPU time (as
 *     span_cpu_workload does): "span <trace_id hex> <span_id hex> <name index> <cpu_ns>". */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "spanprof.h"
#include "workload_clock.h"
#include "workload_gate.h"

#define SPAN_CPU_NS 300000
#define NTHREADS 3

typedef void (*span_set_fn)(const struct spanprof_span *);

enum { VIA_A, VIA_B, VIA_ALT };

static const char *const names[2] = { "GET /alpha", "POST /beta" };
static span_set_fn set_b;
static double seconds = 1;
static int nspans = 500;

struct thread_log {
	int thread; /* VIA_* */
	long long *cpu_ns; /* cpu mode: per span */
};

static __attribute__((noinline)) void work_via_a(void)
{
	burn_cpu(1000000);
}

static __attribute__((noinline)) void work_via_b(void)
{
	burn_cpu(1000000);
}

static __attribute__((noinline)) void work_alt_a(void)
{
	burn_cpu(1000000);
}

static __attribute__((noinline)) void work_alt_b(void)
{
	burn_cpu(1000000);
}

static __attribute__((noinline)) void work_alt_outside(void)
{
	burn_cpu(1000000);
}

/* Span id 7a7a0000000000<id>, trace id 3c..3c<id>; unique ids put i in bytes 4-6. */
static void fill_span(struct spanprof_span *s, int id, int i, const char *name)
{
	memset(s, 0, sizeof(*s));
	s->abi_version = SPANPROF_SPAN_ABI_VERSION;
	memset(s->trace_id, 0x3c, sizeof(s->trace_id));
	s->trace_id[15] = (unsigned char)id;
	s->span_id[0] = 0x7a;
	s->span_id[1] = 0x7a;
	s->span_id[4] = (unsigned char)(i >> 16);
	s->span_id[5] = (unsigned char)(i >> 8);
	s->span_id[6] = (unsigned char)i;
	s->span_id[7] = (unsigned char)id;
	snprintf(s->name, sizeof(s->name), "%s", name);
}

/* In span id through set, then none. */
static void in_span(span_set_fn set, int id, void (*work)(void))
{
	struct spanprof_span s;

	fill_span(&s, id, 0, "two copies");
	set(&s);
	work();
	set(NULL);
}

static void *labels_thread(void *arg)
{
	const struct thread_log *log = arg;
	long long end = clock_ns(CLOCK_THREAD_CPUTIME_ID) +
			(long long)(seconds * (log->thread == VIA_ALT ? 2 : 1) * 1e9);

	while (clock_ns(CLOCK_THREAD_CPUTIME_ID) < end) {
		switch (log->thread) {
		case VIA_A:
			in_span(spanprof_span_set, 1, work_via_a);
			break;
		case VIA_B:
			in_span(set_b, 2, work_via_b);
			break;
		default:
			in_span(spanprof_span_set, 3, work_alt_a);
			in_span(set_b, 4, work_alt_b);
			work_alt_outside();
			break;
		}
	}
	return NULL;
}

/* A span's name: the same for runs of eight spans, so that most span changes do not rename
 * (a rename makes the hook enter the uprobe, which would hide a change the agent missed). */
static int name_of(int i)
{
	return (i >> 3) & 1;
}

/* Thread "alt" takes copy A and copy B by turns of two spans, so both names go through both. */
static span_set_fn cpu_span_set(int thread, int i)
{
	if (thread == VIA_A)
		return spanprof_span_set;
	if (thread == VIA_B)
		return set_b;
	return (i >> 1) & 1 ? set_b : spanprof_span_set;
}

static void *cpu_thread(void *arg)
{
	struct thread_log *log = arg;
	struct spanprof_span s;
	span_set_fn set;
	long long c0;

	for (int i = 0; i < nspans; i++) {
		fill_span(&s, log->thread + 1, i, names[name_of(i)]);
		set = cpu_span_set(log->thread, i);
		set(&s);
		c0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
		burn_cpu(SPAN_CPU_NS);
		log->cpu_ns[i] = clock_ns(CLOCK_THREAD_CPUTIME_ID) - c0;
		set(NULL);
	}
	return NULL;
}

static void print_log(const struct thread_log *log)
{
	struct spanprof_span s;

	for (int i = 0; i < nspans; i++) {
		fill_span(&s, log->thread + 1, i, names[name_of(i)]);
		printf("span ");
		for (int j = 0; j < 16; j++)
			printf("%02x", s.trace_id[j]);
		printf(" ");
		for (int j = 0; j < 8; j++)
			printf("%02x", s.span_id[j]);
		printf(" %d %lld\n", name_of(i), log->cpu_ns[i]);
	}
}

int main(int argc, char **argv)
{
	struct thread_log logs[NTHREADS];
	pthread_t threads[NTHREADS];
	void *copy;
	int cpu_mode;

	if (argc < 4 || (strcmp(argv[2], "labels") && strcmp(argv[2], "cpu"))) {
		fprintf(stderr, "usage: %s COPY labels SECONDS | COPY cpu N\n", argv[0]);
		return 2;
	}
	cpu_mode = !strcmp(argv[2], "cpu");
	if (cpu_mode)
		nspans = atoi(argv[3]);
	else
		seconds = atof(argv[3]);
	copy = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
	if (!copy) {
		fprintf(stderr, "dlopen %s: %s\n", argv[1], dlerror());
		return 2;
	}
	set_b = (span_set_fn)dlsym(copy, "spanprof_span_set");
	if (!set_b || set_b == spanprof_span_set) {
		fprintf(stderr, "%s holds no second copy of spanprof_span_set\n", argv[1]);
		return 2;
	}
	if (workload_wait_agent(NULL, 0))
		return 3;
	for (int t = 0; t < NTHREADS; t++) {
		logs[t].thread = t;
		logs[t].cpu_ns = cpu_mode ? calloc(nspans, sizeof(long long)) : NULL;
		if (cpu_mode && !logs[t].cpu_ns)
			return 2;
		pthread_create(&threads[t], NULL, cpu_mode ? cpu_thread : labels_thread, &logs[t]);
	}
	for (int t = 0; t < NTHREADS; t++)
		pthread_join(threads[t], NULL);
	for (int t = 0; t < NTHREADS && cpu_mode; t++) {
		print_log(&logs[t]);
		free(logs[t].cpu_ns);
	}
	printf("cpu_s=%.6f\n", clock_ns(CLOCK_PROCESS_CPUTIME_ID) / 1e9);
	fflush(stdout);
	return 0;
}
