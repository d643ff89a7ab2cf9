// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Test workload for exact CPU time per span: two threads each run N spans (argv[1], 2000) of
 * argv[2] us of CPU (300), named by turns "GET /alpha" and "POST /beta \"q\"" (a name JSON and
 * Prometheus must escape), while a third thread burns CPU outside any span. Each span's own CPU
 * time is read with CLOCK_THREAD_CPUTIME_ID twice: inside (right after the span is set, right
 * before it is cleared) and outside (right before the set, right after the clear: the hook's own
 * calls included). Printed: "span <trace_id hex> <span_id hex> <0|1 name index> <inside ns>
 * <outside ns>"; then the totals by name ("total <index> <inside ns> <outside ns>"), the outside
 * thread's id ("outside_tid N") and cpu_s=.
 *
 * With argv[3] = B > 0 changes and argv[4] = K spans, each span is read by the agent once set:
 * the thread waits until it was switched out (the agent reads a thread's ring at its
 * switch-outs). Spans BURST_FIRST to BURST_FIRST + K - 1 then end with a burst of B changes to
 * other spans (span_id c0 -> b0, bytes 2-3 the change's number; the enclosing span's name), all
 * inside the enclosing span's readings. With a hook that reads the ring only at switch-outs, the
 * B + 2 changes from the burst to the next span's set overflow the 256-entry ring by B + 2 - 256
 * when the thread is not switched out in between (its switch counts unchanged), by less when it
 * is: printed as "ring_lost_min N" (the bursts without a switch) and "ring_lost_max N". */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <linux/types.h>

#include "spanprof.h"
#include "spanprof_abi.h"
#include "workload_clock.h"
#include "workload_gate.h"

#define SPAN_CPU_NS 300000
#define SPAN_THREADS 2

static const char *const names[2] = { "GET /alpha", "POST /beta \"q\"" };
static volatile int outside_stop;
static int nspans = 2000;
static long long span_cpu_ns = SPAN_CPU_NS;
static int burst_changes, bursts;
/* The first span that bursts: the hook enters the uprobe at the thread's first two sets (to
 * register, then for the second name), and such an entry reads the ring. */
#define BURST_FIRST 2

struct span_log {
	int thread;
	long long *cpu_ns, *outer_ns; /* per span */
	long long totals[2], outer_totals[2];
	long long ring_lost_min, ring_lost_max;
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

/* The thread's context switches so far. */
static long long switches(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_THREAD, &ru))
		return -1;
	return ru.ru_nvcsw + ru.ru_nivcsw;
}

/* Returns once the thread was switched out after the call (so the agent read its ring), with
 * its switch count then (-1 at once when the count cannot be read: the test finds the spans'
 * records wrong rather than the workload hanging). */
static long long switched_out(void)
{
	long long before = switches(), now;

	while (before >= 0 && (now = switches()) == before)
		nanosleep(&(struct timespec){ .tv_nsec = 100000 }, NULL);
	return before >= 0 ? now : -1;
}

/* burst_changes changes to spans other than s: the thread is left in the last one. */
static void burst(const struct spanprof_span *s)
{
	struct spanprof_span b = *s;

	b.span_id[0] = 0xb0;
	for (int j = 0; j < burst_changes; j++) {
		b.span_id[2] = j >> 8;
		b.span_id[3] = j & 0xff;
		spanprof_span_set(&b);
	}
}

static void *in_spans(void *arg)
{
	struct span_log *log = arg;
	struct spanprof_span s;
	long long c0, outer0, seen = 0, overflow = 0;

	for (int i = 0; i < nspans; i++) {
		fill_span(&s, log->thread, i);
		outer0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
		spanprof_span_set(&s);
		c0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
		if (burst_changes) {
			/* The previous span's burst, its clear and this set, unread until now. */
			if (overflow > 0 && switches() == seen)
				log->ring_lost_min += overflow;
			log->ring_lost_max += overflow > 0 ? overflow : 0;
			seen = switched_out();
			overflow = 0;
		}
		burn_cpu(span_cpu_ns);
		if (burst_changes && i >= BURST_FIRST && i < BURST_FIRST + bursts) {
			burst(&s);
			overflow = burst_changes + 2 - SPANPROF_RING_ENTRIES;
		}
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
	long long totals[2] = { 0, 0 }, outer_totals[2] = { 0, 0 }, lost_min = 0, lost_max = 0;

	if (argc > 1)
		nspans = atoi(argv[1]);
	if (argc > 2)
		span_cpu_ns = atoll(argv[2]) * 1000;
	if (argc > 4) {
		burst_changes = atoi(argv[3]);
		bursts = atoi(argv[4]);
	}
	/* Every burst is followed by a span that reads it, and its changes fit the span ids. */
	if (burst_changes < 0 || burst_changes > 0xffff || bursts < 0 ||
	    (burst_changes && BURST_FIRST + bursts >= nspans))
		return 2;
	if (workload_wait_agent(NULL, 0))
		return 3;
	pthread_create(&out, NULL, outside, &outside_tid);
	for (int t = 0; t < SPAN_THREADS; t++) {
		logs[t].thread = t;
		logs[t].totals[0] = logs[t].totals[1] = 0;
		logs[t].outer_totals[0] = logs[t].outer_totals[1] = 0;
		logs[t].ring_lost_min = logs[t].ring_lost_max = 0;
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
		lost_min += logs[t].ring_lost_min;
		lost_max += logs[t].ring_lost_max;
		print_log(&logs[t]);
		free(logs[t].cpu_ns);
		free(logs[t].outer_ns);
	}
	outside_stop = 1;
	pthread_join(out, NULL);
	printf("total 0 %lld %lld\ntotal 1 %lld %lld\noutside_tid %d\n", totals[0], outer_totals[0],
	       totals[1], outer_totals[1], outside_tid);
	if (burst_changes)
		printf("ring_lost_min %lld\nring_lost_max %lld\n", lost_min, lost_max);
	printf("cpu_s=%.6f\n", clock_ns(CLOCK_PROCESS_CPUTIME_ID) / 1e9);
	fflush(stdout);
	return 0;
}
