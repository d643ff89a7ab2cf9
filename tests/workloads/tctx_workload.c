// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Test-only: a process that publishes OpenTelemetry thread context (OTEP 4947) through the
 * writer of tests/fixtures/tctx_writer.c, linked in (static TLS) or dlopen()ed from a shared
 * library built with TLS descriptors. Usage:
 *   tctx_workload static|dl LIB normal|hostile SECONDS
 *   tctx_workload static|dl LIB obi SECONDS MAP
 *   tctx_workload static|dl LIB plain SECONDS   (the normal run publishing nothing: a baseline)
 *   tctx_workload static|dl LIB both SECONDS HOOK   (the normal run; alpha's thread also sets
 *                                                   spanprof's hook span, loaded from HOOK)
 *   tctx_workload static|dl LIB obiboth SECONDS MAP
 *   tctx_workload static|dl LIB badptr SECONDS
 * It publishes its process context, then waits for "go" on stdin. "normal": two threads, each
 * alternating one function inside its span's record and one with no record. "hostile": one
 * thread per hostile record (valid 0, cut attributes, an unknown key index later added to the
 * key map, a 64 KiB attrs_data_size, a pointer into unmapped memory, a large attrs_data_size
 * over readable memory with attributes on both sides of the OTEP's 640-byte record bound).
 * "obi": one thread with no record puts its ids in OBI's map (pinned at MAP, an LRU hash keyed
 * by pid_tgid, as OBI's eBPF would) while in tctx_work_obi, and takes them out for
 * tctx_work_outside. "obiboth": one thread with its ids in OBI's map and its record set in
 * tctx_work_both, its OBI entry only in tctx_work_obi, neither in tctx_work_outside. "badptr": one
 * thread per record pointer no user read can follow (a kernel address, the vsyscall page, a
 * non-canonical address, a record across the top of the user address space), beside the
 * normal run's alpha thread. At the end it prints "cpu_s=...". */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <linux/bpf.h>
#include <time.h>
#include <unistd.h>

#include "spanprof.h"
#include "../fixtures/tctx_writer.h"
#include "workload_gate.h"

/* Key map: index = position. "late.key" is appended during the hostile run. */
static const char *const keys[] = { "datadog.local_root_span_id",
				    "http.route",
				    "spanprof.span_name",
				    "thread.name",
				    "pad.key",
				    "late.key" };
#define NKEYS_FIRST 5
#define KEY_ROUTE 1
#define KEY_THREAD_NAME 3
#define KEY_PAD 4
#define KEY_LATE 5
/* The OTEP's bound on a record (640 bytes) less its 28-byte header: attributes past it are not
 * read. */
#define ATTRS_BOUND (640 - TCTX_RECORD_HEADER)

static struct {
	int (*publish)(const char *, const char *const *, int);
	size_t (*build)(void *, size_t, const uint8_t *, const uint8_t *, const struct tctx_attr *,
			int);
	void (*set)(void *);
} w;

/* "both": spanprof's hook, dlopen()ed; alpha's thread sets hook_span around its function. */
static void (*hook_set)(const struct spanprof_span *);
static struct spanprof_span hook_span = {
	.abi_version = SPANPROF_SPAN_ABI_VERSION,
	.trace_id = { 0x5a, 0x5a },
	.span_id = { 0x5a, 0x5a, 0, 0, 0, 0, 0, 0x42 },
	.name = "hook-span",
};

static volatile unsigned long sink;
static double seconds;

static double cpu_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static __attribute__((noinline)) void spin(double end)
{
	while (cpu_s() < end)
		for (int i = 0; i < 2000; i++)
			sink += i;
}

/* One function per span. */
static __attribute__((noinline)) void tctx_work_alpha(double end)
{
	spin(end);
}
static __attribute__((noinline)) void tctx_work_beta(double end)
{
	spin(end);
}
static __attribute__((noinline)) void tctx_work_outside(double end)
{
	spin(end);
}
static __attribute__((noinline)) void tctx_work_obi(double end)
{
	spin(end);
}
static __attribute__((noinline)) void tctx_work_both(double end)
{
	spin(end);
}
static __attribute__((noinline)) void tctx_badptr_kernel(double end)
{
	spin(end);
}
static __attribute__((noinline)) void tctx_badptr_vsyscall(double end)
{
	spin(end);
}
static __attribute__((noinline)) void tctx_badptr_noncanonical(double end)
{
	spin(end);
}
static __attribute__((noinline)) void tctx_badptr_top(double end)
{
	spin(end);
}
static __attribute__((noinline)) void tctx_hostile_invalid(double end)
{
	spin(end);
}
static __attribute__((noinline)) void tctx_hostile_cut(double end)
{
	spin(end);
}
static __attribute__((noinline)) void tctx_hostile_unknown(double end)
{
	spin(end);
}
static __attribute__((noinline)) void tctx_hostile_huge(double end)
{
	spin(end);
}
static __attribute__((noinline)) void tctx_hostile_unmapped(double end)
{
	spin(end);
}
static __attribute__((noinline)) void tctx_hostile_big(double end)
{
	spin(end);
}

static void ids(uint8_t trace[16], uint8_t span[8], uint8_t tag)
{
	for (int i = 0; i < 16; i++)
		trace[i] = (uint8_t)(0xa0 + i);
	for (int i = 0; i < 8; i++)
		span[i] = (uint8_t)(tag + i);
}

static void print_id(const char *what, const uint8_t span[8])
{
	printf("%s=", what);
	for (int i = 0; i < 8; i++)
		printf("%02x", span[i]);
	printf("\n");
}

struct span_thread {
	void (*fn)(double);
	uint8_t record[640] __attribute__((aligned(8)));
};

/* Runs fn inside the record and tctx_work_outside with none, in 20 ms CPU slices. */
static int plain;

static void *alternate(void *arg)
{
	struct span_thread *t = arg;
	double end = cpu_s() + seconds, now;

	while ((now = cpu_s()) < end) {
		if (!plain)
			w.set(t->record);
		if (hook_set && t->fn == tctx_work_alpha)
			hook_set(&hook_span);
		t->fn(now + 0.02);
		if (hook_set && t->fn == tctx_work_alpha)
			hook_set(NULL); /* NULL: no span */
		if (!plain)
			w.set(NULL);
		tctx_work_outside(cpu_s() + 0.02);
	}
	return NULL;
}

static int run_normal(void)
{
	static struct span_thread th[2];
	struct tctx_attr alpha[] = { { 0, "00000000000000aa" },
				     { 1, "/alpha" },
				     { 2, "alpha-span" } };
	struct tctx_attr beta[] = { { 1, "/beta" }, { 3, "worker-2" } };
	uint8_t trace[16], span[8];
	pthread_t pt[2];
	int i;

	ids(trace, span, 0x10);
	print_id("alpha_span", span);
	if (!w.build(th[0].record, sizeof(th[0].record), trace, span, alpha, 3))
		return -1;
	ids(trace, span, 0x20);
	print_id("beta_span", span);
	if (!w.build(th[1].record, sizeof(th[1].record), trace, span, beta, 2))
		return -1;
	th[0].fn = tctx_work_alpha;
	th[1].fn = tctx_work_beta;
	for (i = 0; i < 2; i++)
		pthread_create(&pt[i], NULL, alternate, &th[i]);
	for (i = 0; i < 2; i++)
		pthread_join(pt[i], NULL);
	return 0;
}

/* Hostile records: each thread keeps its record set while it spins in its function. */
struct hostile {
	void (*fn)(double);
	void *record;
	int republish; /* append "late.key" to the key map half way */
};

static void *hold(void *arg)
{
	struct hostile *h = arg;
	double start = cpu_s();

	w.set(h->record);
	if (h->republish) {
		h->fn(start + seconds / 2);
		w.publish("tctx-hostile", keys, NKEYS_FIRST + 1);
		h->fn(start + seconds);
	} else {
		h->fn(start + seconds);
	}
	w.set(NULL);
	return NULL;
}

static int run_hostile(void)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	/* Two pages: a record at the very end of the first, the second made inaccessible. */
	uint8_t *pages =
		mmap(NULL, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	static uint8_t invalid[64], cut[64], unknown[128];
	struct tctx_attr a_cut[] = { { 1, "/cut" } };
	struct tctx_attr a_unknown[] = { { KEY_LATE, "grown" }, { KEY_ROUTE, "/unknown" } };
	struct tctx_attr a_huge[] = { { KEY_ROUTE, "/huge" } };
	static char pad250[251], pad100[101];
	/* 6 + 2 * 252 + 102 bytes: the entry after the pads starts right at the bound. */
	struct tctx_attr a_big[] = { { KEY_ROUTE, "/big" },
				     { KEY_PAD, pad250 },
				     { KEY_PAD, pad250 },
				     { KEY_PAD, pad100 },
				     { KEY_THREAD_NAME, "past-the-bound" } };
	static uint8_t big[4096]; /* all readable */
	uint8_t trace[16], span[8], *huge;
	struct hostile h[6];
	pthread_t pt[6];
	uint16_t size;
	size_t n;
	int i;

	if (pages == MAP_FAILED || mprotect(pages + page, page, PROT_NONE))
		return -1;
	ids(trace, span, 0x30);
	w.build(invalid, sizeof(invalid), trace, span, NULL, 0);
	invalid[24] = 0; /* valid = 0: being changed */
	ids(trace, span, 0x40);
	print_id("cut_span", span);
	n = w.build(cut, sizeof(cut), trace, span, a_cut, 1);
	/* The entry claims more bytes than attrs_data_size holds: cut. */
	cut[TCTX_RECORD_HEADER + 1] = 200;
	(void)n;
	ids(trace, span, 0x50);
	print_id("unknown_span", span);
	w.build(unknown, sizeof(unknown), trace, span, a_unknown, 2);
	ids(trace, span, 0x60);
	print_id("huge_span", span);
	huge = pages + page - 40; /* header + one entry end at the inaccessible page */
	w.build(huge, 40, trace, span, a_huge, 1);
	size = 65535;
	memcpy(huge + 26, &size, 2);
	h[0] = (struct hostile){ tctx_hostile_invalid, invalid, 0 };
	h[1] = (struct hostile){ tctx_hostile_cut, cut, 0 };
	h[2] = (struct hostile){ tctx_hostile_unknown, unknown, 1 };
	h[3] = (struct hostile){ tctx_hostile_huge, huge, 0 };
	h[4] = (struct hostile){ tctx_hostile_unmapped, pages + page, 0 };
	ids(trace, span, 0x90);
	print_id("big_span", span);
	memset(pad250, 'p', sizeof(pad250) - 1);
	memset(pad100, 'p', sizeof(pad100) - 1);
	n = w.build(big, sizeof(big), trace, span, a_big, 5);
	if (n != TCTX_RECORD_HEADER + ATTRS_BOUND + 2 + strlen(a_big[4].value))
		return -1;
	/* attrs_data_size claims far more than the bound, all of it readable. */
	size = (uint16_t)(sizeof(big) - TCTX_RECORD_HEADER);
	memcpy(big + 26, &size, 2);
	h[5] = (struct hostile){ tctx_hostile_big, big, 0 };
	for (i = 0; i < 6; i++)
		pthread_create(&pt[i], NULL, hold, &h[i]);
	for (i = 0; i < 6; i++)
		pthread_join(pt[i], NULL);
	return 0;
}

static long sys_bpf(int cmd, union bpf_attr *attr)
{
	return syscall(SYS_bpf, cmd, attr, sizeof(*attr));
}

static int obi_map_op(int fd, int cmd, uint64_t key, const void *value)
{
	union bpf_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.map_fd = (uint32_t)fd;
	attr.key = (uint64_t)(uintptr_t)&key;
	attr.value = (uint64_t)(uintptr_t)value;
	attr.flags = BPF_ANY;
	return sys_bpf(cmd, &attr) ? -1 : 0;
}

/* Opens OBI's map pinned at PATH and fills VALUE (trace id, then span id) with the entry this
 * thread puts there, its span id printed as "obi_span". Returns the map's fd, or -1. */
static int open_obi_entry(const char *path, uint8_t value[24])
{
	union bpf_attr attr;
	int fd;

	memset(&attr, 0, sizeof(attr));
	attr.pathname = (uint64_t)(uintptr_t)path;
	fd = (int)sys_bpf(BPF_OBJ_GET, &attr);
	if (fd < 0) {
		perror("BPF_OBJ_GET");
		return -1;
	}
	ids(value, value + 16, 0x70);
	print_id("obi_span", value + 16);
	return fd;
}

/* This thread's ids in OBI's map while it runs tctx_work_obi, none while tctx_work_outside; with
 * rec, also its record rec set (beside the OBI entry) while it runs tctx_work_both. */
static int run_obi_entry(const char *path, void *rec)
{
	uint64_t key = (uint64_t)getpid() << 32 | (uint32_t)gettid();
	uint8_t value[24];
	double end, now;
	int fd;

	fd = open_obi_entry(path, value);
	if (fd < 0)
		return -1;
	end = cpu_s() + seconds;
	while ((now = cpu_s()) < end) {
		if (obi_map_op(fd, BPF_MAP_UPDATE_ELEM, key, value))
			return -1;
		if (rec) {
			w.set(rec);
			tctx_work_both(now + 0.02);
			w.set(NULL);
			now = cpu_s();
		}
		tctx_work_obi(now + 0.02);
		if (obi_map_op(fd, BPF_MAP_DELETE_ELEM, key, NULL))
			return -1;
		tctx_work_outside(cpu_s() + 0.02);
	}
	close(fd);
	return 0;
}

/* "obi": this thread's ids in OBI's map and no record. */
static int run_obi(const char *path)
{
	return run_obi_entry(path, NULL);
}

/* "obiboth": this thread's record and its OBI entry (different span ids) in tctx_work_both, the
 * OBI entry alone in tctx_work_obi, neither in tctx_work_outside. */
static int run_obi_both(const char *path)
{
	static uint8_t rec[640] __attribute__((aligned(8)));
	struct tctx_attr route[] = { { KEY_ROUTE, "/both" } };
	uint8_t trace[16], span[8];

	ids(trace, span, 0xb0);
	print_id("both_span", span);
	if (!w.build(rec, sizeof(rec), trace, span, route, 1))
		return -1;
	return run_obi_entry(path, rec);
}

/* "badptr": each thread keeps its slot at an address no user read can follow while it spins in
 * its function; alpha's thread runs as in the normal run. */
static int run_badptr(void)
{
	static const struct {
		void (*fn)(double);
		uint64_t record;
	} bad[] = {
		{ tctx_badptr_kernel, 0xffff888000000000ull }, /* the kernel's direct map */
		{ tctx_badptr_vsyscall, 0xffffffffff600000ull }, /* user-executable, kernel half */
		{ tctx_badptr_noncanonical, 0x8000000000000000ull }, /* with 4- or 5-level paging */
		{ tctx_badptr_top, 0x00007ffffffffff0ull }, /* a header past the 47-bit top */
	};
	static struct hostile h[4];
	static struct span_thread alpha;
	struct tctx_attr a_alpha[] = { { KEY_ROUTE, "/alpha" } };
	uint8_t trace[16], span[8];
	pthread_t pt[5];
	int i;

	ids(trace, span, 0x10);
	if (!w.build(alpha.record, sizeof(alpha.record), trace, span, a_alpha, 1))
		return -1;
	alpha.fn = tctx_work_alpha;
	for (i = 0; i < 4; i++) {
		h[i] = (struct hostile){ bad[i].fn, (void *)(uintptr_t)bad[i].record, 0 };
		pthread_create(&pt[i], NULL, hold, &h[i]);
	}
	pthread_create(&pt[4], NULL, alternate, &alpha);
	for (i = 0; i < 5; i++)
		pthread_join(pt[i], NULL);
	return 0;
}

/* "wait": a thread that sleeps 20 ms at a time under its record, then works a little outside
 * it; it prints the time it slept under the record ("wait_ns N"). */
static __attribute__((noinline)) void tctx_wait_in_record(void)
{
	usleep(20000);
	__asm__ volatile("" ::: "memory"); /* not a tail call: this frame stays on the stack */
}

static double wall_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void *waiter(void *arg)
{
	static uint8_t rec[640] __attribute__((aligned(8)));
	struct tctx_attr name[] = { { 1, "/wait" }, { 2, "wait-span" } };
	double end = wall_s() + seconds, t0, *slept = arg;
	uint8_t trace[16], span[8];

	ids(trace, span, 0x80);
	print_id("wait_span", span);
	if (!w.build(rec, sizeof(rec), trace, span, name, 2))
		return NULL;
	while (wall_s() < end) {
		w.set(rec);
		t0 = wall_s();
		tctx_wait_in_record();
		*slept += wall_s() - t0;
		w.set(NULL);
		tctx_work_outside(cpu_s() + 0.002);
	}
	return NULL;
}

static int run_wait(void)
{
	double slept = 0;
	pthread_t pt;

	if (pthread_create(&pt, NULL, waiter, &slept) || pthread_join(pt, NULL))
		return -1;
	printf("wait_ns %lld\n", (long long)(slept * 1e9));
	return 0;
}

/* "flood": threads whose record names a new span every 0.2 ms of CPU, as a user flooding the
 * shared span-name table through its thread context would (each sample of them interns a new
 * name). */
static __attribute__((noinline)) void tctx_flood(double end)
{
	spin(end);
}

static void *flood(void *arg)
{
	static _Thread_local uint8_t rec[2][640] __attribute__((aligned(8)));
	double end = cpu_s() + seconds, now;
	struct tctx_attr name = { 2, NULL };
	uint8_t trace[16], span[8];
	unsigned long n = (unsigned long)arg << 32;
	char text[32];

	ids(trace, span, 0x70);
	while ((now = cpu_s()) < end) {
		snprintf(text, sizeof(text), "flood-%lx", n++);
		name.value = text;
		if (!w.build(rec[n & 1], sizeof(rec[0]), trace, span, &name, 1))
			return NULL;
		w.set(rec[n & 1]);
		tctx_flood(now + 0.0002);
	}
	w.set(NULL);
	return NULL;
}

static int run_flood(void)
{
	pthread_t pt[2];
	long i;

	if (w.publish("tctx-flood", keys, NKEYS_FIRST))
		return -1;
	printf("ready\n");
	fflush(stdout);
	for (i = 0; i < 2; i++)
		pthread_create(&pt[i], NULL, flood, (void *)i);
	for (i = 0; i < 2; i++)
		pthread_join(pt[i], NULL);
	return 0;
}

static int bind_writer(const char *mode, const char *lib)
{
	void *dl;

	if (!strcmp(mode, "static")) {
#ifdef TCTX_WRITER_LINKED
		w.publish = tctx_publish;
		w.build = tctx_record_build;
		w.set = tctx_set;
		return 0;
#else
		return -1;
#endif
	}
	dl = dlopen(lib, RTLD_NOW);
	if (!dl) {
		fprintf(stderr, "dlopen %s: %s\n", lib, dlerror());
		return -1;
	}
	w.publish = (int (*)(const char *, const char *const *, int))dlsym(dl, "tctx_publish");
	w.build = (size_t(*)(void *, size_t, const uint8_t *, const uint8_t *,
			     const struct tctx_attr *, int))dlsym(dl, "tctx_record_build");
	w.set = (void (*)(void *))dlsym(dl, "tctx_set");
	return w.publish && w.build && w.set ? 0 : -1;
}

int main(int argc, char **argv)
{
	int hostile = argc > 3 && !strcmp(argv[3], "hostile");
	struct rusage ru;
	int err;

	if (argc < 5 || bind_writer(argv[1], argv[2])) {
		fprintf(stderr, "usage: tctx_workload static|dl LIB normal|hostile SECONDS\n");
		return 2;
	}
	seconds = atof(argv[4]);
	if (!strcmp(argv[3], "flood"))
		return run_flood() ? 1 : 0;
	if (!strcmp(argv[3], "both")) {
		void *hook = argc > 5 ? dlopen(argv[5], RTLD_NOW) : NULL;

		hook_set = hook ? (void (*)(const struct spanprof_span *))dlsym(
					  hook, "spanprof_span_set") :
				  NULL;
		if (!hook_set) {
			fprintf(stderr, "no spanprof_span_set in %s\n", argc > 5 ? argv[5] : "-");
			return 2;
		}
	}
	plain = !strcmp(argv[3], "plain");
	/* The SDK publishes its process context first, then threads publish records. */
	if (!plain && w.publish(hostile ? "tctx-hostile" : "tctx-svc", keys, NKEYS_FIRST))
		return 1;
	if (!plain)
		w.set(NULL); /* this thread touches the slot: its TLS is allocated */
	if (workload_read_go())
		return 1;
	if (!strcmp(argv[3], "obi"))
		err = argc > 5 ? run_obi(argv[5]) : -1;
	else if (!strcmp(argv[3], "obiboth"))
		err = argc > 5 ? run_obi_both(argv[5]) : -1;
	else if (!strcmp(argv[3], "badptr"))
		err = run_badptr();
	else if (!strcmp(argv[3], "wait"))
		err = run_wait();
	else
		err = hostile ? run_hostile() : run_normal();
	if (err || getrusage(RUSAGE_SELF, &ru))
		return 1;
	printf("cpu_s=%.4f\n", ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + ru.ru_stime.tv_sec +
				       ru.ru_stime.tv_usec / 1e6);
	return 0;
}
