// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Benchmark: what uploading costs for a busy node. Builds a synthetic window like a node with
 * many processes and deep stacks produces (BENCH_SERVICES services x distinct stacks, 40-80
 * frames, span labels), then measures per window the time to encode the profiles, split them per
 * the server's limits, wrap and gzip them as push requests, and compares the bytes uploaded with
 * the same profiles written as raw pprof. Per minute = 4 windows of 15 s. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "output/push_encode.h"
#include "profile/pprof.h"

#define WINDOWS_PER_MINUTE 4
#define SERVICES 50
#define STACKS_PER_SERVICE 400
#define FUNCS 3000

struct totals {
	size_t raw, pushed, chunks;
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* One service's window: stacks drawn from a shared pool of function names, as real code shares
 * libraries; every third sample in one of 20 spans. */
static struct pprof_builder *make_window(unsigned int seed, char names[][48])
{
	struct pprof_builder *b = pprof_builder_new(10000000, 0, 15000000000LL);
	struct sym_frame frames[80];
	char span[17], trace[33];
	struct pprof_label labels[3] = { { "span_id", span },
					 { "trace_id", trace },
					 { "span_name", "GET /api/orders" } };

	for (int s = 0; b && s < STACKS_PER_SERVICE; s++) {
		int depth = 40 + rand_r(&seed) % 40;

		for (int f = 0; f < depth; f++) {
			memset(&frames[f], 0, sizeof(frames[f]));
			frames[f].addr = 0x400000 + (rand_r(&seed) % FUNCS) * 64;
			frames[f].has_mapping = 1;
			frames[f].mapping =
				(struct sym_mapping){ 0x400000, 0x800000, 0, "/usr/bin/app",
						      "0123456789abcdef" };
			frames[f].nlines = 1;
			frames[f].lines[0].function = names[(frames[f].addr - 0x400000) / 64];
			frames[f].lines[0].file = "src/app.c";
			frames[f].lines[0].line = 100 + f;
		}
		snprintf(span, sizeof(span), "5a5a0000000000%02x", s % 20);
		snprintf(trace, sizeof(trace), "7e7e7e7e7e7e7e7e7e7e7e7e7e7e7e%02x", s % 20);
		pprof_builder_add_sample(b, frames, depth, 1 + rand_r(&seed) % 30, labels,
					 s % 3 ? 0 : 3);
	}
	return b;
}

static int push_chunk(void *ctx, const uint8_t *buf, size_t len, size_t nsamples)
{
	struct totals *t = ctx;
	uint8_t *body;
	size_t body_len;
	int err;

	(void)nsamples;
	err = push_encode("bench-service", NULL, 0, buf, len, &body, &body_len);
	if (err)
		return err;
	t->raw += len;
	t->pushed += body_len;
	t->chunks++;
	free(body);
	return 0;
}

int main(void)
{
	static char names[FUNCS][48];
	struct pprof_builder *b[SERVICES];
	struct totals t = { 0 };
	double start, encode_s = 0;
	int w, s;

	for (int f = 0; f < FUNCS; f++)
		snprintf(names[f], sizeof(names[f]), "namespace::Component%d::handle_request_%d",
			 f % 97, f);
	for (w = 0; w < WINDOWS_PER_MINUTE; w++) {
		for (s = 0; s < SERVICES; s++)
			b[s] = make_window(w * 1000 + s, names);
		start = now_s();
		for (s = 0; s < SERVICES; s++)
			if (!b[s] ||
			    pprof_builder_encode_chunks(b[s], 16000, 4 << 20, push_chunk, &t))
				return 1;
		encode_s += now_s() - start;
		for (s = 0; s < SERVICES; s++)
			pprof_builder_free(b[s]);
	}
	printf("\n== upload volume: %d services x %d stacks (40-80 frames) per 15 s window ==\n",
	       SERVICES, STACKS_PER_SERVICE);
	printf("  encode + split + gzip per window   %8.1f ms\n",
	       1000 * encode_s / WINDOWS_PER_MINUTE);
	printf("  raw pprof per minute               %8.1f KiB\n", t.raw / 1024.0);
	printf("  uploaded (gzipped push) per minute %8.1f KiB  (%.1f%% of raw, %zu requests)\n",
	       t.pushed / 1024.0, 100.0 * t.pushed / t.raw, t.chunks);
	return 0;
}
