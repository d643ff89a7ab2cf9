// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Benchmark, for the design of a hook that writes OpenTelemetry thread context instead of
 * trapping into the kernel at every span change: what such a call costs in user space, measured
 * beside today's spanprof_span_set() with no agent attached (no uprobe), in one run:
 *  - the record store alone (ids and valid into a per-thread record, the TLS slot set);
 *  - the store plus a CLOCK_MONOTONIC read and a (span, time) boundary appended to a per-thread
 *    ring, as the sched_switch program would need to keep exact CPU time per span;
 *  - the same with the time stamp counter (rdtsc, x86-64) instead of the vDSO clock: the agent
 *    would then publish the counter's conversion to CLOCK_MONOTONIC for the BPF side.
 * Prints ns per call and the ratios to an empty call. No BPF: runs anywhere. */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "spanprof.h"

#define CALLS 20000000
#define RING 64

struct record {
	uint8_t trace_id[16], span_id[8], valid, flags;
	uint16_t attrs_size;
	uint8_t attrs[36];
} __attribute__((packed, aligned(8)));

struct boundary {
	uint64_t ns;
	uint8_t span_id[8];
};

static __thread struct record rec;
static __thread void *volatile slot;
static __thread struct {
	uint32_t head;
	struct boundary e[RING];
} ring;

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static __attribute__((noinline)) void empty_call(const struct spanprof_span *s)
{
	__asm__ volatile("" : : "r"(s) : "memory");
}

static __attribute__((noinline)) void store_only(const struct spanprof_span *s)
{
	rec.valid = 0;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	memcpy(rec.trace_id, s->trace_id, 16);
	memcpy(rec.span_id, s->span_id, 8);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	rec.valid = 1;
	slot = &rec;
}

static __attribute__((noinline)) void store_and_ring(const struct spanprof_span *s)
{
	struct timespec ts;
	struct boundary *b;

	store_only(s);
	clock_gettime(CLOCK_MONOTONIC, &ts);
	b = &ring.e[ring.head % RING];
	b->ns = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
	memcpy(b->span_id, s->span_id, 8);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	ring.head++;
}

#if defined(__x86_64__)
static __attribute__((noinline)) void store_and_ring_tsc(const struct spanprof_span *s)
{
	struct boundary *b;
	uint32_t lo, hi;

	store_only(s);
	__asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
	b = &ring.e[ring.head % RING];
	b->ns = (uint64_t)hi << 32 | lo;
	memcpy(b->span_id, s->span_id, 8);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	ring.head++;
}
#endif

static double per_call(void (*fn)(const struct spanprof_span *), struct spanprof_span *s)
{
	double t0 = now_ns();
	int i;

	for (i = 0; i < CALLS; i++) {
		s->span_id[7] = (uint8_t)i;
		fn(s);
	}
	return (now_ns() - t0) / CALLS;
}

int main(void)
{
	struct spanprof_span s = { .abi_version = SPANPROF_SPAN_ABI_VERSION, .trace_id = { 1 } };
	double base, hook, store, full, tsc = 0;

	base = per_call(empty_call, &s);
	hook = per_call(spanprof_span_set, &s);
	store = per_call(store_only, &s);
	full = per_call(store_and_ring, &s);
#if defined(__x86_64__)
	tsc = per_call(store_and_ring_tsc, &s);
#endif
	printf("\n== a thread context writing hook, user-space cost per call (no agent) ==\n");
	printf("  %-52s %7.1f ns\n", "empty call (baseline)", base);
	printf("  %-52s %7.1f ns  (%.1fx)\n", "spanprof_span_set(), no uprobe attached", hook,
	       hook / base);
	printf("  %-52s %7.1f ns  (%.1fx)\n", "record store + TLS slot", store, store / base);
	printf("  %-52s %7.1f ns  (%.1fx)\n", "... + CLOCK_MONOTONIC + boundary ring append", full,
	       full / base);
	if (tsc > 0)
		printf("  %-52s %7.1f ns  (%.1fx)\n", "... + rdtsc + boundary ring append", tsc,
		       tsc / base);
	return 0;
}
