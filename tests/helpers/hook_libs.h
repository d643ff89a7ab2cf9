/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Test-only: the two hook builds the hook benchmarks compare in one process: the benchmark's
 * own (libspanprof.a linked in, hook ABI version 3) and the library built for hook ABI version
 * 2 beside it (build/tests/workloads/libspanprof_v2.so, dlopen'ed: the uprobe at every call, as
 * programs linked with an older libspanprof run). */
#ifndef SPANPROF_TEST_HOOK_LIBS_H
#define SPANPROF_TEST_HOOK_LIBS_H

#include <stddef.h>

#include "discover/hook_elf.h"
#include "spanprof.h"

typedef void (*span_set_fn)(const struct spanprof_span *);

/* Set by a benchmark that runs from a copy of its executable (and of the version 2 library
 * beside it) with the probe note removed, so that other agents on the machine do not attach to
 * its hooks: the original executable's path. The sites are read from the originals (the copies
 * hold the same bytes at the same offsets); the copies are what runs and what is probed. */
#define HOOK_LIBS_ORIGIN_ENV "BENCH_HOOK_ORIGIN"

/* One hook build: its file, its probe site as the agent finds it, and its entry point. */
struct hook_lib {
	const char *path;
	struct hook_site site;
	span_set_fn set;
	const char *name; /* "v3" or "v2", for the output */
	/* The site's semaphore in this process: how many uprobes are attached to the site (any
	 * agent's, not only the benchmark's) */
	const volatile unsigned short *semaphore;
};

/* This executable's hook (its path in exe, size bytes). Returns 0, or -1 with the reason
 * printed (no 5-byte nop site: not built with the hook's probe note). */
int hook_lib_self(struct hook_lib *h, char *exe, size_t size);

/* The version 2 library next to the benchmark (exe: this executable's path), dlopen'ed, its
 * path in path. Returns 0, or -1 with the reason printed (make it first). */
int hook_lib_open_v2(struct hook_lib *h, char *path, size_t size, const char *exe);

#endif /* SPANPROF_TEST_HOOK_LIBS_H */
