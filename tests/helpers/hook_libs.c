// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Test-only: the benchmark's own hook and the version 2 library (see hook_libs.h). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hook_libs.h"
#include "hook_semaphore.h"

/* Where the probe note of the benchmark's executable is read: the executable, or the original
 * a copy without the note runs for (HOOK_LIBS_ORIGIN_ENV). */
static const char *note_exe(const char *exe)
{
	const char *origin = getenv(HOOK_LIBS_ORIGIN_ENV);

	return origin && *origin ? origin : exe;
}

int hook_lib_self(struct hook_lib *h, char *exe, size_t size)
{
	ssize_t n = readlink("/proc/self/exe", exe, size - 1);

	if (n < 0) {
		perror("readlink /proc/self/exe");
		return -1;
	}
	exe[n] = '\0';
	memset(h, 0, sizeof(*h));
	h->path = exe;
	h->set = spanprof_span_set;
	h->name = "v3";
	if (hook_elf_find(note_exe(exe), &h->site) || !h->site.nop5_offset) {
		fprintf(stderr, "no hook site (5-byte nop) in %s\n", exe);
		return -1;
	}
	h->semaphore = hook_semaphore_mapped(exe, h->site.semaphore_offset);
	if (!h->semaphore) {
		fprintf(stderr, "the hook's semaphore in %s is not mapped writable\n", exe);
		return -1;
	}
	return 0;
}

int hook_lib_open_v2(struct hook_lib *h, char *path, size_t size, const char *exe)
{
	const char *slash = strrchr(exe, '/'), *origin = note_exe(exe);
	const char *oslash = strrchr(origin, '/');
	char note[4200];
	void *lib;

	memset(h, 0, sizeof(*h));
	/* build/tests/bench/bench_x -> build/tests/workloads/libspanprof_v2.so */
	snprintf(path, size, "%.*s/../workloads/libspanprof_v2.so", slash ? (int)(slash - exe) : 1,
		 slash ? exe : ".");
	snprintf(note, sizeof(note), "%.*s/../workloads/libspanprof_v2.so",
		 oslash ? (int)(oslash - origin) : 1, oslash ? origin : ".");
	lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!lib || hook_elf_find(note, &h->site) || !h->site.nop5_offset) {
		fprintf(stderr, "no ABI v2 hook library at %s (make it first)\n", path);
		return -1;
	}
	h->path = path;
	h->set = (span_set_fn)(uintptr_t)dlsym(lib, "spanprof_span_set");
	h->name = "v2";
	h->semaphore = hook_semaphore_mapped(path, h->site.semaphore_offset);
	if (!h->set || !h->semaphore) {
		fprintf(stderr, "no spanprof_span_set or no writable semaphore in %s\n", path);
		return -1;
	}
	return 0;
}
