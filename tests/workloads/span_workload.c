// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Test workload: threads that switch spans every few ms and run a distinct noinline function per
 * span, so a profile can be checked function by function. Modes select the scenario; durations
 * are CPU seconds of each thread (CLOCK_THREAD_CPUTIME_ID), not wall time.
 * With SPANPROF_WORKLOAD_GATE=1 it loads the hook, then waits for a "go" line on stdin (the test
 * sends it once its own agent attached; spanprof_active() cannot tell, as any agent on the machine
 * raises it). At the end it prints the CPU seconds it used ("cpu_s=..."), which the test compares
 * with the samples it got. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "spanprof.h"
#include "workload_gate.h"

typedef void (*span_set_fn)(const struct spanprof_span *);
typedef int (*active_fn)(void);

struct workload {
	span_set_fn span_set;
	active_fn active;
	int switch_ms;
	double seconds;
	int abi_v1; /* pass struct spanprof_span as ABI version 1 laid it out */
	const char *name_two; /* span 2's name ("GET /two", or a long one) */
};

/* struct spanprof_span of ABI version 1 (name[64]), as programs built against the old header
 * still pass it. */
struct spanprof_span_v1 {
	uint32_t abi_version, reserved;
	uint8_t trace_id[16], span_id[8], root_span_id[8];
	char name[64];
};

/* A span name longer than ABI version 1's 63 bytes (200 bytes). */
#define LONG_NAME                                                                              \
	"GET /api/v1/tenants/{tenant}/projects/{project}/environments/{environment}/services/" \
	"{service}/deployments/{deployment}/revisions/{revision}/artifacts/{artifact}/layers/" \
	"{layer}/blobs/{blob}/xx"

static volatile unsigned long sink;

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* This thread's CPU time: work is measured in it, so a loaded machine stretches the run but not
 * the samples it should get. */
static double cpu_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static __attribute__((noinline)) void spin_until(double end)
{
	while (cpu_s() < end)
		for (int i = 0; i < 2000; i++)
			sink += i;
}

/* One function per span: the profile must show each with its own span id. */
static __attribute__((noinline)) void work_in_span_0(double end)
{
	spin_until(end);
}
static __attribute__((noinline)) void work_in_span_1(double end)
{
	spin_until(end);
}
static __attribute__((noinline)) void work_in_child_span(double end)
{
	spin_until(end);
}
static __attribute__((noinline)) void work_outside_span(double end)
{
	spin_until(end);
}
static __attribute__((noinline)) void work_after_tid_reuse(double end)
{
	spin_until(end);
}

/* Spends its time in the kernel: the profile must show kernel frames under it. */
static __attribute__((noinline)) void work_in_syscalls(double end)
{
	char buf[4096] = { 0 };
	int fd = open("/dev/null", O_WRONLY);

	while (cpu_s() < end)
		for (int i = 0; i < 100; i++)
			if (write(fd, buf, sizeof(buf)) < 0)
				break;
	close(fd);
}

/* Span ids the test expects: 5a5a00000000000N, trace 7e7e...N; child span 3's root is span 2. */
static void make_span(struct spanprof_span *s, int id, int root, const char *name)
{
	memset(s, 0, sizeof(*s));
	s->abi_version = SPANPROF_SPAN_ABI_VERSION;
	memset(s->trace_id, 0x7e, sizeof(s->trace_id));
	s->trace_id[15] = id;
	s->span_id[0] = s->span_id[1] = 0x5a;
	s->span_id[7] = id;
	if (root) {
		s->root_span_id[0] = s->root_span_id[1] = 0x5a;
		s->root_span_id[7] = root;
	}
	snprintf(s->name, sizeof(s->name), "%s", name);
}

static __attribute__((noinline)) int run_syscalls(const struct workload *w)
{
	struct spanprof_span s;

	make_span(&s, 1, 0, "GET /one");
	w->span_set(&s);
	work_in_syscalls(cpu_s() + w->seconds);
	w->span_set(NULL);
	return 0;
}

/* The ABI version 1 form of s, its name cut at 63 bytes. */
static void to_v1(const struct spanprof_span *s, struct spanprof_span_v1 *v1)
{
	memset(v1, 0, sizeof(*v1));
	memcpy(v1, s, offsetof(struct spanprof_span_v1, name));
	v1->abi_version = 1;
	snprintf(v1->name, sizeof(v1->name), "%s", s->name);
}

static void *span_thread(void *arg)
{
	const struct workload *w = arg;
	struct spanprof_span s[3];
	struct spanprof_span_v1 v1[3];
	const struct spanprof_span *p[3];
	double end = cpu_s() + w->seconds, step = w->switch_ms / 1000.0, t;

	make_span(&s[0], 1, 0, "GET /one");
	make_span(&s[1], 2, 0, w->name_two);
	make_span(&s[2], 3, 2, w->name_two);
	for (int i = 0; i < 3; i++) {
		to_v1(&s[i], &v1[i]);
		p[i] = w->abi_v1 ? (const struct spanprof_span *)(const void *)&v1[i] : &s[i];
	}
	while ((t = cpu_s()) < end) {
		w->span_set(p[0]);
		work_in_span_0(t + step);
		w->span_set(p[1]);
		work_in_span_1(cpu_s() + step);
		w->span_set(p[2]); /* a child of span 2 */
		work_in_child_span(cpu_s() + step);
		w->span_set(NULL);
		work_outside_span(cpu_s() + step);
	}
	return NULL;
}

/* Distinct span names set in turn by the "names" mode: more than a small span name map holds. */
#define MANY_NAMES 256

/* Sets span 1 under a new name each step, "name-0" to "name-255" in turn. */
static void *many_names_thread(void *arg)
{
	const struct workload *w = arg;
	double end = cpu_s() + w->seconds, step = w->switch_ms / 1000.0, t;
	struct spanprof_span s;
	char name[32];
	int i = 0;

	while ((t = cpu_s()) < end) {
		snprintf(name, sizeof(name), "name-%d", i++ % MANY_NAMES);
		make_span(&s, 1, 0, name);
		w->span_set(&s);
		work_in_span_0(t + step);
	}
	w->span_set(NULL);
	return NULL;
}

static void *exit_in_span(void *arg)
{
	const struct workload *w = arg;
	struct spanprof_span s;
	pid_t *tid = malloc(sizeof(*tid));

	if (!tid)
		return NULL;
	make_span(&s, 1, 0, "GET /one");
	w->span_set(&s);
	work_in_span_0(cpu_s() + 0.5);
	*tid = syscall(SYS_gettid);
	return tid; /* exits with the span still set */
}

static void *after_reuse(void *arg)
{
	pid_t *want = arg;

	if (syscall(SYS_gettid) != *want)
		return (void *)1;
	work_after_tid_reuse(cpu_s() + 1.0);
	return NULL;
}

/* Makes the kernel hand out `tid` next (ns_last_pid) and runs a thread with it that sets no span.
 * Other processes forking meanwhile take the tid first on a busy machine (50 attempts were not
 * enough beside parallel builds), so it tries for up to 10 s of wall time. */
static int reuse_tid(pid_t tid)
{
	struct timespec t0, t;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (t = t0; t.tv_sec - t0.tv_sec < 10; clock_gettime(CLOCK_MONOTONIC, &t)) {
		char buf[32];
		pthread_t th;
		void *ret;
		int fd = open("/proc/sys/kernel/ns_last_pid", O_WRONLY);

		if (fd < 0)
			return -errno;
		snprintf(buf, sizeof(buf), "%d", tid - 1);
		if (write(fd, buf, strlen(buf)) < 0) {
			close(fd);
			return -errno;
		}
		close(fd);
		pthread_create(&th, NULL, after_reuse, &tid);
		pthread_join(th, &ret);
		if (!ret) {
			printf("tid %d reused\n", tid);
			return 0;
		}
	}
	return -EAGAIN;
}

static int load_hook(struct workload *w, const char *dlopen_path)
{
	void *lib;

	if (!dlopen_path) {
#ifdef WORKLOAD_DLOPEN_ONLY
		fprintf(stderr, "this build only loads the hook with dlopen\n");
		return -1;
#else
		w->span_set = spanprof_span_set;
		w->active = spanprof_active;
		return 0;
#endif
	}
	lib = dlopen(dlopen_path, RTLD_NOW);
	if (!lib) {
		fprintf(stderr, "dlopen %s: %s\n", dlopen_path, dlerror());
		return -1;
	}
	w->span_set = (span_set_fn)dlsym(lib, "spanprof_span_set");
	w->active = (active_fn)dlsym(lib, "spanprof_active");
	return w->span_set && w->active ? 0 : -1;
}

/* Waits for the go-ahead; run alone, prints how long the agent took to attach. */
static int wait_attached(const struct workload *w)
{
	double start = now_s();

	if (workload_gated())
		return workload_read_go();
	/* An agent starting on a loaded machine (load average 20) can take more than 10 s to load
	 * its programs and attach the hook. */
	if (workload_wait_agent(w->active, 60))
		return -1;
	printf("attached after %.3f s\n", now_s() - start);
	fflush(stdout);
	return 0;
}

/* Names the service in code only (no OTEL_SERVICE_NAME), as an SDK's Resource does: OTel
 * process context (OTEP 4719) through the hook library. */
static int publish_service(const char *name)
{
#ifdef WORKLOAD_DLOPEN_ONLY
	(void)name;
	return -1;
#else
	const char *keys[] = { "service.name", "service.namespace" };
	const char *values[] = { name, "spanprof-tests" };
	int err = name ? spanprof_process_context_publish(keys, values, 2) : -EINVAL;

	if (err)
		fprintf(stderr, "publish process context: %s\n", strerror(-err));
	return err;
#endif
}

/* The CPU time this process used, as the kernel accounted it: user + system, and system. */
static void print_cpu(void)
{
	struct rusage ru;
	double sys_s;

	if (getrusage(RUSAGE_SELF, &ru))
		return;
	sys_s = ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
	printf("cpu_s=%.4f\nsys_s=%.4f\n", ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + sys_s,
	       sys_s);
	fflush(stdout);
}

static int run_tid_reuse(struct workload *w)
{
	pthread_t th;
	void *ret;
	pid_t tid;

	pthread_create(&th, NULL, exit_in_span, w);
	pthread_join(th, &ret);
	if (!ret)
		return 5;
	tid = *(pid_t *)ret;
	free(ret);
	return reuse_tid(tid) ? 4 : 0;
}

static int run_mode(struct workload *w, const char *mode, int nthreads)
{
	pthread_t th[16];

	if (!strcmp(mode, "syscalls"))
		return run_syscalls(w);
	if (!strcmp(mode, "tid-reuse"))
		return run_tid_reuse(w);
	for (int i = 0; i < nthreads; i++)
		pthread_create(&th[i], NULL,
			       strcmp(mode, "names") ? span_thread : many_names_thread, w);
	for (int i = 0; i < nthreads; i++)
		pthread_join(th[i], NULL);
	return 0;
}

int main(int argc, char **argv)
{
	struct workload w = { .switch_ms = 4, .seconds = 3, .name_two = "GET /two" };
	const char *mode = argc > 1 ? argv[1] : "spans";
	int nthreads = argc > 2 ? atoi(argv[2]) : 2;
	int rc;

	if (argc > 3)
		w.seconds = atof(argv[3]);
	if (nthreads < 1 || nthreads > 16 ||
	    load_hook(&w, !strcmp(mode, "dlopen") && argc > 4 ? argv[4] : NULL))
		return 2;
	if (wait_attached(&w))
		return 3;
	if (!strcmp(mode, "procctx") && publish_service(argc > 4 ? argv[4] : NULL))
		return 6;
	w.abi_v1 = !strcmp(mode, "spans-v1");
	if (!strcmp(mode, "spans-long"))
		w.name_two = LONG_NAME;
	rc = run_mode(&w, mode, nthreads);
	print_cpu();
	return rc;
}
