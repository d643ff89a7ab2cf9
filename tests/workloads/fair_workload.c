// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Workloads for the fair-share tests: hook-slot hogs, span-name floods and an ordinary service.
 * The hook library is dlopen()ed, so the test decides which copy each process maps. Modes:
 *   hog LIB...                      maps every LIB, prints "ready", sleeps until killed
 *   maps GATE FILE...               once GATE exists, maps every FILE executable (no loading),
 *                                   prints "mapped", sleeps until killed
 *   spin SECONDS                    runs fair_service_work for SECONDS of CPU
 *   tick SECONDS BUSY_MS            for SECONDS, runs BUSY_MS of CPU every 50 ms (a light
 *                                   service that is sampled in every window)
 *   flood LIB SECONDS               sets a span with a new name each time, as fast as it can
 *   service LIB GATE NAME SECONDS [SERVICE NAMESPACE]
 *                                   once the file GATE exists, maps LIB (and publishes SERVICE
 *                                   and NAMESPACE as its OTel process context), prints "loaded",
 *                                   and once GATE.go exists (the test saw the uprobe attached)
 *                                   runs spans named NAME (10 ms of CPU each) for SECONDS
 * flood and service print what they did at the end ("spans=N"). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "spanprof.h"

typedef void (*span_set_fn)(const struct spanprof_span *);
typedef int (*publish_fn)(const char *const *keys, const char *const *values, size_t n);

static volatile unsigned long sink;

static double clock_s(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static span_set_fn load(const char *lib)
{
	void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
	span_set_fn fn = h ? (span_set_fn)dlsym(h, "spanprof_span_set") : NULL;

	if (!fn)
		fprintf(stderr, "dlopen %s: %s\n", lib, dlerror());
	return fn;
}

/* Publishes service.name and service.namespace through lib's process context. */
static int publish(const char *lib, const char *service, const char *ns)
{
	const char *keys[] = { "service.name", "service.namespace" };
	const char *values[] = { service, ns };
	void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
	publish_fn fn = h ? (publish_fn)dlsym(h, "spanprof_process_context_publish") : NULL;

	return fn ? fn(keys, values, 2) : -1;
}

static void make_span(struct spanprof_span *s, uint64_t n, const char *name)
{
	memset(s, 0, sizeof(*s));
	s->abi_version = SPANPROF_SPAN_ABI_VERSION;
	s->trace_id[0] = 0x5f;
	memcpy(s->trace_id + 8, &n, sizeof(n));
	memcpy(s->span_id, &n, sizeof(n));
	s->span_id[7] |= 0x80; /* never all zero */
	snprintf(s->name, sizeof(s->name), "%s", name);
}

__attribute__((noinline)) static void fair_service_work(double end)
{
	while (clock_s(CLOCK_THREAD_CPUTIME_ID) < end)
		for (int i = 0; i < 1000; i++)
			sink += i;
}

static int hog(int n, char **libs)
{
	int i;

	for (i = 0; i < n; i++)
		if (!load(libs[i]))
			return 1;
	printf("ready\n");
	fflush(stdout);
	for (;;)
		pause();
}

static int map_files(const char *gate, int n, char **files)
{
	struct stat st;
	int i, fd;

	while (access(gate, F_OK))
		usleep(20000);
	for (i = 0; i < n; i++) {
		fd = open(files[i], O_RDONLY);
		if (fd < 0 || fstat(fd, &st) ||
		    mmap(NULL, st.st_size, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0) ==
			    MAP_FAILED) {
			perror(files[i]);
			return 1;
		}
		close(fd);
	}
	printf("mapped\n");
	for (;;)
		pause();
}

static int flood(const char *lib, double seconds)
{
	span_set_fn set = load(lib);
	struct spanprof_span s;
	char name[64];
	uint64_t n = 0;
	double end;

	if (!set)
		return 1;
	printf("ready\n");
	fflush(stdout);
	for (end = clock_s(CLOCK_MONOTONIC) + seconds; clock_s(CLOCK_MONOTONIC) < end;) {
		for (int i = 0; i < 1000; i++, n++) {
			snprintf(name, sizeof(name), "flood-%llu", (unsigned long long)n);
			make_span(&s, n + 1, name);
			set(&s);
		}
	}
	set(NULL);
	printf("spans=%llu\n", (unsigned long long)n);
	return 0;
}

__attribute__((noinline)) static int service(const char *lib, const char *gate, const char *name,
					     double seconds, const char *svc, const char *ns)
{
	struct spanprof_span s;
	char go[4200];
	span_set_fn set;
	uint64_t n = 0;
	double end;

	snprintf(go, sizeof(go), "%s.go", gate);
	while (access(gate, F_OK))
		usleep(20000);
	set = load(lib);
	if (!set || (svc && publish(lib, svc, ns)))
		return 1;
	printf("loaded\n");
	fflush(stdout);
	while (access(go, F_OK))
		usleep(20000);
	for (end = clock_s(CLOCK_MONOTONIC) + seconds; clock_s(CLOCK_MONOTONIC) < end; n++) {
		make_span(&s, n + 1, name);
		set(&s);
		fair_service_work(clock_s(CLOCK_THREAD_CPUTIME_ID) + 0.01);
		set(NULL);
		usleep(1000);
	}
	printf("spans=%llu\n", (unsigned long long)n);
	return 0;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc >= 3 && !strcmp(argv[1], "hog"))
		return hog(argc - 2, argv + 2);
	if (argc >= 4 && !strcmp(argv[1], "maps"))
		return map_files(argv[2], argc - 3, argv + 3);
	if (argc == 3 && !strcmp(argv[1], "spin")) {
		printf("ready\n");
		fair_service_work(clock_s(CLOCK_THREAD_CPUTIME_ID) + atof(argv[2]));
		return 0;
	}
	if (argc == 4 && !strcmp(argv[1], "tick")) {
		double end = clock_s(CLOCK_MONOTONIC) + atof(argv[2]), busy = atof(argv[3]) / 1e3;

		printf("ready\n");
		while (clock_s(CLOCK_MONOTONIC) < end) {
			fair_service_work(clock_s(CLOCK_THREAD_CPUTIME_ID) + busy);
			usleep(50000);
		}
		return 0;
	}
	if (argc == 4 && !strcmp(argv[1], "flood"))
		return flood(argv[2], atof(argv[3]));
	if ((argc == 6 || argc == 8) && !strcmp(argv[1], "service"))
		return service(argv[2], argv[3], argv[4], atof(argv[5]), argc == 8 ? argv[6] : NULL,
			       argc == 8 ? argv[7] : NULL);
	fprintf(stderr, "usage: fair_workload hog LIB... | maps GATE FILE... | spin SECONDS | "
			"tick SECONDS BUSY_MS | "
			"flood LIB SECONDS | "
			"service LIB GATE NAME SECONDS [SERVICE NAMESPACE]\n");
	return 2;
}
