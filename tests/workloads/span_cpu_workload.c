// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Test workload for exact CPU time per span: two threads each run N spans (argv[1], 2000) of
 * argv[2] us of CPU (300), named by turns "GET /alpha" and "POST /beta \"q\"" (a name JSON and
 * Prometheus must escape), while a third thread burns CPU outside any span. Each span's own CPU
 * time is read with CLOCK_THREAD_CPUTIME_ID twice: inside (right after the span is set, right
 * before it is cleared) and outside (right before the set, right after the clear: the hook's own
 * calls included). Printed: "span <trace_id hex> <span_id hex> <0|1 name index> <inside ns>
 * <outside ns>"; then the totals by name ("total <index> <inside ns> <outside ns>"), the outside
 * thread's id ("outside_tid N") and cpu_s=. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "spanprof.h"
#include "workload_clock.h"
#include "workload_gate.h"

#define SPAN_CPU_NS 300000
#define SPAN_THREADS 2

static const char *const names[2] = { "GET /alpha", "POST /beta \"q\"" };
static volatile int outside_stop;
static int nspans = 2000;
static long long span_cpu_ns = SPAN_CPU_NS;

struct span_log {
	int thread;
	long long *cpu_ns, *outer_ns; /* per span */
	long long totals[2], outer_totals[2];
};

static void fill_span(struct spanprof_span *s, int thread, int i)
{
	memset(s, 0, sizeof(*s));
	s->abi_version = SPANPROF_SPAN_ABI_VERSION;
	memset(s->trace_id, 0x3c, sizeof(s->trace_id));
	s->trace_id[15] = thread + 1;
	s->span_id[0] = 0xc0;
	s->span_id[1] = thread + 1;
	s->span_id[6] = i >> 8;
	s->span_id[7] = i & 0xff;
	s->span_id[5] = i >> 16;
	snprintf(s->name, sizeof(s->name), "%s", names[i & 1]);
}

static void *in_spans(void *arg)
{
	struct span_log *log = arg;
	struct spanprof_span s;
	long long c0, outer0;

	for (int i = 0; i < nspans; i++) {
		fill_span(&s, log->thread, i);
		outer0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
		spanprof_span_set(&s);
		c0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
		burn_cpu(span_cpu_ns);
		log->cpu_ns[i] = clock_ns(CLOCK_THREAD_CPUTIME_ID) - c0;
		spanprof_span_set(NULL);
		log->outer_ns[i] = clock_ns(CLOCK_THREAD_CPUTIME_ID) - outer0;
		log->totals[i & 1] += log->cpu_ns[i];
		log->outer_totals[i & 1] += log->outer_ns[i];
	}
	return NULL;
}

static void *outside(void *arg)
{
	*(pid_t *)arg = syscall(SYS_gettid);
	while (!outside_stop)
		burn_cpu(SPAN_CPU_NS);
	return NULL;
}

static void hex(const unsigned char *b, int n, char *out)
{
	for (int i = 0; i < n; i++)
		sprintf(out + 2 * i, "%02x", b[i]);
}

static void print_log(const struct span_log *log)
{
	char trace[33], span[17];
	struct spanprof_span s;

	for (int i = 0; i < nspans; i++) {
		fill_span(&s, log->thread, i);
		hex(s.trace_id, 16, trace);
		hex(s.span_id, 8, span);
		printf("span %s %s %d %lld %lld\n", trace, span, i & 1, log->cpu_ns[i],
		       log->outer_ns[i]);
	}
}

int main(int argc, char **argv)
{
	struct span_log logs[SPAN_THREADS];
	pthread_t threads[SPAN_THREADS], out;
	pid_t outside_tid = 0;
	long long totals[2] = { 0, 0 }, outer_totals[2] = { 0, 0 };

	if (argc > 1)
		nspans = atoi(argv[1]);
	if (argc > 2)
		span_cpu_ns = atoll(argv[2]) * 1000;
	if (workload_wait_agent(NULL, 0))
		return 3;
	pthread_create(&out, NULL, outside, &outside_tid);
	for (int t = 0; t < SPAN_THREADS; t++) {
		logs[t].thread = t;
		logs[t].totals[0] = logs[t].totals[1] = 0;
		logs[t].outer_totals[0] = logs[t].outer_totals[1] = 0;
		logs[t].cpu_ns = calloc(nspans, sizeof(long long));
		logs[t].outer_ns = calloc(nspans, sizeof(long long));
		if (!logs[t].cpu_ns || !logs[t].outer_ns)
			return 2;
		pthread_create(&threads[t], NULL, in_spans, &logs[t]);
	}
	for (int t = 0; t < SPAN_THREADS; t++) {
		pthread_join(threads[t], NULL);
		totals[0] += logs[t].totals[0];
		totals[1] += logs[t].totals[1];
		outer_totals[0] += logs[t].outer_totals[0];
		outer_totals[1] += logs[t].outer_totals[1];
		print_log(&logs[t]);
		free(logs[t].cpu_ns);
		free(logs[t].outer_ns);
	}
	outside_stop = 1;
	pthread_join(out, NULL);
	printf("total 0 %lld %lld\ntotal 1 %lld %lld\noutside_tid %d\n", totals[0], outer_totals[0],
	       totals[1], outer_totals[1], outside_tid);
	printf("cpu_s=%.6f\n", clock_ns(CLOCK_PROCESS_CPUTIME_ID) / 1e9);
	fflush(stdout);
	return 0;
}
