// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Quickstart: a "server" that handles two kinds of requests, each in its own span, and tells
 * spanprof which span is active. Build and run it as the README shows. */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "spanprof.h"

static volatile unsigned long sink;

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static __attribute__((noinline)) void render_invoice(void)
{
	for (int i = 0; i < 3000000; i++)
		sink += i;
}

static __attribute__((noinline)) void charge_card(void)
{
	for (int i = 0; i < 1000000; i++)
		sink ^= i;
}

/* One request: a local root span with the ids your tracer gave it (fixed here for the demo). */
static void handle(unsigned char request, const char *route, void (*work)(void))
{
	struct spanprof_span span = { .abi_version = SPANPROF_SPAN_ABI_VERSION };

	memset(span.trace_id, 0xab, sizeof(span.trace_id));
	span.span_id[0] = 0xa1;
	span.span_id[7] = request; /* span id a1000000000000NN */
	snprintf(span.name, sizeof(span.name), "%s", route);
	spanprof_span_set(&span);
	work();
	spanprof_span_set(NULL); /* the request is over: no span on this thread */
}

int main(void)
{
	double end = now_s() + 120; /* until stopped: two minutes at most */

	while (now_s() < end) {
		handle(1, "GET /invoice", render_invoice);
		handle(2, "POST /checkout", charge_card);
	}
	return 0;
}
