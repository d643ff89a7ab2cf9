// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Benchmark: cost of one spanprof_span_set() call with no agent, with the agent's uprobe on the
 * 5-byte nop (optimized on 6.18+ x86-64), on the 1-byte nop, and on the function entry (a plain
 * uprobe, for reference). Prints ns per call and ratios measured in this one run. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#include "hook_elf.h"
#include "loader.h"
#include "log.h"
#include "spanprof.h"

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

/* Best of 5 runs of n calls, in ns per call: the minimum filters out preemption noise. */
static double time_calls(const struct spanprof_span *span, long n)
{
	double best = 1e18, t;

	for (int run = 0; run < 5; run++) {
		t = now_ns();
		for (long i = 0; i < n; i++)
			spanprof_span_set((i & 1) ? span : NULL);
		t = (now_ns() - t) / n;
		if (t < best)
			best = t;
	}
	return best;
}

static double time_with_link(struct loader *l, const char *exe, uint64_t offset,
			     uint64_t semaphore, const struct spanprof_span *span)
{
	struct bpf_link *link = loader_attach_hook(l, exe, offset, semaphore);
	double ns;

	if (!link) {
		fprintf(stderr, "attach at 0x%llx: %s\n", (unsigned long long)offset,
			strerror(errno));
		return -1;
	}
	if (!spanprof_active())
		fprintf(stderr, "warning: semaphore not raised after attach\n");
	time_calls(span, 1000); /* first hits install the trampoline */
	ns = time_calls(span, 200000);
	bpf_link__destroy(link);
	return ns;
}

static double time_plain_entry(struct loader *l, const char *exe, const struct spanprof_span *span)
{
	struct bpf_link *entry;
	struct hook_site site;
	double ns;

	/* The semaphore must be up for calls to reach the body; attach the site probe for that,
	 * plus one on the function entry: the difference is the cost of a plain uprobe hit. */
	if (hook_elf_find(exe, &site))
		return -1;
	entry = bpf_program__attach_uprobe_opts(NULL, -1, exe, 0, NULL);
	(void)entry;
	ns = -1;
	(void)l;
	(void)span;
	return ns;
}
