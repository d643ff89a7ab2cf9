// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Benchmark: spanprof_span_set() through libspanprof.so opened with dlopen, as the Python and
 * Ruby integrations open it, with no agent, with the hook's semaphore raised by hand and no
 * uprobe (the hook alone), and with the agent's default options, in one run. The library's TLS
 * block (11 KiB) does not fit the static TLS the C library keeps for libraries loaded late, so
 * each TLS access of the hook is a TLS descriptor call that looks in the thread's DTV; bench_hook
 * links libspanprof.a into its executable, where the linker turns those calls into fixed offsets,
 * and so does not show them. This executable does not link the hook: a copy in it would be the
 * owner the library forwards its calls to (hooks/c/hook_owner.c). It opens a copy of the
 * library without its probe note (objcopy), so that another agent on the machine that profiles
 * every process does not attach to it, and attaches its own at the site read from the original
 * (without objcopy it opens the library itself and says so). Each row is the best of 3 rounds,
 * each the best of 200 runs of 5,000 calls (set and clear in turn), timed with the thread's CPU
 * clock. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#include "agent/loader.h"
#include "discover/hook_elf.h"
#include "hook_copies.h"
#include "hook_semaphore.h"
#include "spanprof.h"
#include "util/log.h"

#define ROUNDS 3
#define RUNS 200
#define CALLS 5000

typedef void (*span_set_fn)(const struct spanprof_span *);

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

/* ns per call, best of RUNS runs. */
static double time_calls(span_set_fn set, const struct spanprof_span *span)
{
	double best = 1e18, t;

	for (int run = 0; run < RUNS; run++) {
		t = now_ns();
		for (int i = 0; i < CALLS; i++)
			set((i & 1) ? span : NULL);
		t = (now_ns() - t) / CALLS;
		if (t < best)
			best = t;
	}
	return best;
}

/* A copy of lib without its probe notes in a new directory (dir), its path in copy; 0, or -1 when
 * there is none. */
static int copy_without_note(const char *lib, char *dir, char *copy, size_t size)
{
	if (!mkdtemp(dir))
		return -1;
	snprintf(copy, size, "%s/libspanprof.so", dir);
	if (!hook_copy_without_notes(lib, copy))
		return 0;
	unlink(copy);
	rmdir(dir);
	return -1;
}

static void remove_copy(int copied, const char *copy, const char *dir)
{
	if (copied && (unlink(copy) || rmdir(dir)))
		fprintf(stderr, "bench_hook_shared: could not remove %s\n", dir);
}

static double min_of(double a, double b)
{
	return a < b ? a : b;
}

int main(void)
{
	struct loader_options lo = {
		.frequency = 100,
		.stack_entries = 1024,
		.count_entries = 1024,
		.off_cpu = 1,
		.off_cpu_entries = 1024,
		.off_cpu_min_ns = 1000000,
		.span_times = 1,
	};
	struct spanprof_span span = { .abi_version = SPANPROF_SPAN_ABI_VERSION, .name = "bench" };
	double none = 1e18, alone = 1e18, agent = 1e18;
	volatile unsigned short *sem;
	char exe[4096], lib[4200], dir[] = "/tmp/bench_hook_shared.XXXXXX", copy[4300];
	struct hook_site site;
	struct loader *l;
	const char *slash;
	span_set_fn set;
	int foreign = 0, copied;
	ssize_t n;
	void *h;

	log_set_level(LOG_LEVEL_WARN);
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n < 0)
		return 1;
	exe[n] = '\0';
	slash = strrchr(exe, '/');
	/* build/tests/bench/bench_x -> build/libspanprof.so */
	snprintf(lib, sizeof(lib), "%.*s/../../libspanprof.so", slash ? (int)(slash - exe) : 1,
		 slash ? exe : ".");
	copied = !copy_without_note(lib, dir, copy, sizeof(copy));
	if (!copied) {
		fprintf(stderr, "bench_hook_shared: no copy without the probe note (objcopy): "
				"other agents may attach to the library\n");
		snprintf(copy, sizeof(copy), "%s", lib);
	}
	h = dlopen(copy, RTLD_NOW | RTLD_LOCAL);
	set = h ? (span_set_fn)(uintptr_t)dlsym(h, "spanprof_span_set") : NULL;
	if (!set || hook_elf_find(lib, &site) || !site.nop5_offset ||
	    !(sem = (volatile unsigned short *)hook_semaphore_mapped(copy,
								     site.semaphore_offset))) {
		fprintf(stderr, "bench_hook_shared: no hook library at %s (make it first)\n", lib);
		remove_copy(copied, copy, dir);
		return 1;
	}
	/* Non-zero ids: a span with a zero span id is no span. */
	span.trace_id[15] = 1;
	span.span_id[7] = 2;
	l = loader_open(&lo);
	if (!l) {
		fprintf(stderr, "bench_hook_shared: cannot load BPF (needs root): %s\n",
			strerror(errno));
		remove_copy(copied, copy, dir);
		return 1;
	}
	for (int round = 0; round < ROUNDS; round++) {
		struct bpf_link *link;

		/* Raised by hand only while no uprobe counts in it: the kernel keeps the count. */
		foreign |= *sem != 0;
		none = min_of(none, time_calls(set, &span));
		if (!*sem) {
			*sem += 1;
			alone = min_of(alone, time_calls(set, &span));
			*sem -= 1; /* not = 0: an agent that attached meanwhile keeps its count */
		}
		link = loader_attach_hook(l, copy, site.nop5_offset, site.semaphore_offset,
					  LOADER_HOOK_C, 0);
		if (!link) {
			fprintf(stderr, "bench_hook_shared: attach to %s: %s\n", copy,
				strerror(errno));
			loader_close(l);
			remove_copy(copied, copy, dir);
			return 1;
		}
		time_calls(set, &span); /* registers, and the first hits install the trampoline */
		agent = min_of(agent, time_calls(set, &span));
		bpf_link__destroy(link);
	}
	loader_close(l);
	remove_copy(copied, copy, dir);
	printf("\n== hook cost per call through libspanprof.so opened with dlopen (best of %d rounds "
	       "of %d runs of %d calls, set and clear in turn) ==\n",
	       ROUNDS, RUNS, CALLS);
	printf("  %-46s %7.2f ns\n", "ABI v3, no agent", none);
	printf("  %-46s %7.2f ns   (%.1fx no agent)\n", "ABI v3, semaphore up, no BPF (hook alone)",
	       alone, alone / none);
	printf("  %-46s %7.2f ns   (%.1fx no agent)\n", "ABI v3, agent, default options", agent,
	       agent / none);
	if (foreign)
		printf("    ... another agent's uprobe was attached to the library: the no-agent row "
		       "is its\n");
	return 0;
}
