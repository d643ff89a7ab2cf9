// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Unit tests for proc_table: service names read from a fake proc root (OTel process context,
 * environ, comm), caching and refresh, sweeping exited processes, and the bound on entries. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "discover/proc_table.h"
#include "fixture_build.h"
#include "tmpdir.h"

#define MAX_SWEPT 16

struct test_state {
	char *root; /* fake proc root, fresh per test */
	struct proc_table *t;
	pid_t swept[MAX_SWEPT];
	size_t nswept;
};

static int setup(void **state)
{
	struct test_state *s = calloc(1, sizeof(*s));

	if (!s)
		return -1;
	s->root = tmpdir_new("proctable");
	if (!s->root) {
		free(s);
		return -1;
	}
	*state = s;
	return 0;
}

static int teardown(void **state)
{
	struct test_state *s = *state;

	proc_table_free(s->t);
	tmpdir_remove(s->root);
	free(s);
	return 0;
}

static void write_bytes(const char *path, const char *bytes, size_t len)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	assert_int_equal(fwrite(bytes, 1, len, f), len);
	fclose(f);
}

/* <root>/PID/environ holding env (env_len bytes, NUL-separated) and <root>/PID/comm. */
static void fake_proc(struct test_state *s, int pid, const char *env, size_t env_len,
		      const char *comm)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%d", s->root, pid);
	if (mkdir(path, 0755))
		assert_int_equal(errno, EEXIST);
	snprintf(path, sizeof(path), "%s/%d/environ", s->root, pid);
	write_bytes(path, env, env_len);
	snprintf(path, sizeof(path), "%s/%d/comm", s->root, pid);
	write_bytes(path, comm, strlen(comm));
}

/* A process whose service is OTEL_SERVICE_NAME=svc (and whose comm is "comm<pid>"). */
static void fake_service(struct test_state *s, int pid, const char *svc)
{
	char env[2600], comm[32];
	int n;

	n = snprintf(env, sizeof(env), "PATH=/usr/bin%cOTEL_SERVICE_NAME=%s%cLANG=C", 0, svc, 0);
	snprintf(comm, sizeof(comm), "comm%d\n", pid);
	fake_proc(s, pid, env, (size_t)n + 1, comm);
}

static struct proc_table *new_table(struct test_state *s, size_t max)
{
	s->t = proc_table_new(max, s->root);
	assert_non_null(s->t);
	return s->t;
}

static const char *service_of(struct test_state *s, pid_t pid)
{
	struct proc_info scratch;
	const struct proc_info *info = proc_table_get(s->t, pid, &scratch);

	assert_non_null(info);
	assert_ptr_not_equal(info, &scratch); /* callers here never fill the table */
	assert_int_equal(info->pid, pid);
	return info->service;
}

/* A 2048-byte service name is kept whole, kept entries and scratch ones alike. */
static void test_proc_table_keeps_a_2048_byte_service_name(void **state)
{
	static char svc[2049];
	struct test_state *s = *state;
	const struct proc_info *info;
	struct proc_info scratch;

	memset(svc, 'n', 2048);
	fake_service(s, 42, svc);
	fake_service(s, 43, svc);
	new_table(s, 1);
	assert_int_equal(strlen(service_of(s, 42)), 2048);
	info = proc_table_get(s->t, 43, &scratch); /* table full of a live entry */
	assert_ptr_equal(info, &scratch);
	assert_string_equal(info->service, svc);
	proc_table_refresh(s->t, 42);
	assert_string_equal(service_of(s, 42), svc);
}

static void test_proc_table_names_service_from_otel_service_name(void **state)
{
	static const char env[] = "HOME=/root\0OTEL_SERVICE_NAME=checkout\0TERM=xterm";
	struct test_state *s = *state;

	fake_proc(s, 1234, env, sizeof(env), "python3\n");
	new_table(s, 8);
	assert_string_equal(service_of(s, 1234), "checkout");
	assert_int_equal(proc_table_count(s->t), 1);
}

/* The entry carries the real uid from status (not the effective one), which a fork passes on;
 * a process without a readable status has PROC_UID_UNKNOWN, never root's 0. */
static void test_proc_table_keeps_the_real_uid(void **state)
{
	static const char status[] = "Name:\tapp\nUid:\t1000\t0\t0\t0\n";
	struct test_state *s = *state;
	const struct proc_info *info;
	struct proc_info scratch;
	char path[PATH_MAX];

	fake_service(s, 50, "owned");
	snprintf(path, sizeof(path), "%s/50/status", s->root);
	write_bytes(path, status, strlen(status));
	fake_service(s, 51, "no_status");
	new_table(s, 8);
	info = proc_table_get(s->t, 50, &scratch);
	assert_int_equal(info->uid, 1000);
	proc_table_fork(s->t, 50, 52);
	assert_int_equal(proc_table_find(s->t, 52)->uid, 1000);
	assert_int_equal(proc_table_get(s->t, 51, &scratch)->uid, PROC_UID_UNKNOWN);
}

static void test_proc_table_falls_back_to_comm_without_otel_env(void **state)
{
	static const char env[] = "HOME=/root\0PATH=/bin";
	struct test_state *s = *state;

	fake_proc(s, 77, env, sizeof(env), "nginx\n");
	new_table(s, 8);
	assert_string_equal(service_of(s, 77), "nginx");
}

static void test_proc_table_names_vanished_pid_unknown_service(void **state)
{
	struct test_state *s = *state;

	fake_service(s, 10, "present");
	new_table(s, 8);
	assert_string_equal(service_of(s, 4242), "unknown_service");
	assert_string_equal(service_of(s, 10), "present");
}

/* <root>/PID/stat with the given task flags (field 9), as the kernel writes it. */
static void fake_task_stat(struct test_state *s, int pid, const char *comm, unsigned int flags)
{
	char path[PATH_MAX], stat[256];
	int n;

	n = snprintf(stat, sizeof(stat), "%d (%s) S 2 0 0 0 -1 %u 0 0 0 0 0 0 0 0 20 0 1 0\n", pid,
		     comm, flags);
	snprintf(path, sizeof(path), "%s/%d/stat", s->root, pid);
	write_bytes(path, stat, (size_t)n);
}

/* A kernel thread (PF_KTHREAD in its stat flags) is named "kernel", whatever its comm says and
 * although its environ cannot be read; a process whose flags lack the bit keeps its comm. */
static void test_proc_table_names_kernel_threads_kernel(void **state)
{
	struct test_state *s = *state;
	char path[PATH_MAX];

	fake_proc(s, 51, "", 0, "kworker/0:1-events\n");
	snprintf(path, sizeof(path), "%s/51/environ", s->root);
	assert_int_equal(unlink(path), 0); /* as the kernel answers ESRCH for it */
	fake_task_stat(s, 51, "kworker/0:1-events", 0x00208040);
	fake_proc(s, 52, "", 0, "ksoftirqd/1\n");
	fake_task_stat(s, 52, "ksoftirqd/1", 0x04208040);
	fake_proc(s, 53, "", 0, "kworker-lookalike\n");
	fake_task_stat(s, 53, "kworker-lookalike", 0x00400100);
	new_table(s, 8);
	assert_string_equal(service_of(s, 51), "kernel");
	assert_string_equal(service_of(s, 52), "kernel");
	assert_string_equal(service_of(s, 53), "kworker-lookalike");
}

/* The same on this machine's real /proc: kthreadd (found by its name, the parent of every
 * kernel thread) and its children are named "kernel". */
static void test_proc_table_names_real_kernel_threads_kernel(void **state)
{
	struct test_state *s = *state;
	char path[64], comm[32], line[512];
	int kthreadd = 0, checked = 0;
	struct dirent *de;
	FILE *f;
	DIR *d;

	d = opendir("/proc");
	assert_non_null(d);
	while ((de = readdir(d)) && !kthreadd) {
		snprintf(path, sizeof(path), "/proc/%.20s/comm", de->d_name);
		f = fopen(path, "r");
		if (f && fgets(comm, sizeof(comm), f) && !strcmp(comm, "kthreadd\n"))
			kthreadd = atoi(de->d_name);
		if (f)
			fclose(f);
	}
	closedir(d);
	if (!kthreadd) {
		printf("  no kthreadd in this /proc (a container's pid namespace): skipped\n");
		skip();
	}
	s->t = proc_table_new(64, "/proc");
	assert_non_null(s->t);
	assert_string_equal(service_of(s, kthreadd), "kernel");
	/* Its children: "pid (comm) S ppid ..."; ppid == kthreadd. */
	d = opendir("/proc");
	assert_non_null(d);
	while ((de = readdir(d)) && checked < 8) {
		int pid = atoi(de->d_name), ppid = 0;
		char *paren;

		snprintf(path, sizeof(path), "/proc/%.20s/stat", de->d_name);
		f = pid > 0 ? fopen(path, "r") : NULL;
		if (!f)
			continue;
		paren = fgets(line, sizeof(line), f) ? strrchr(line, ')') : NULL;
		fclose(f);
		if (!paren || sscanf(paren + 1, " %*c %d", &ppid) != 1 || ppid != kthreadd)
			continue;
		if (proc_table_pid_alive("/proc", pid) &&
		    strcmp(service_of(s, pid), "unknown_service")) /* not gone in between */
			assert_string_equal(service_of(s, pid), "kernel");
		checked++;
	}
	closedir(d);
	printf("  kthreadd (pid %d) and %d of its children named \"kernel\"\n", kthreadd, checked);
	assert_true(checked > 0);
}

static void test_proc_table_caches_entry_until_refreshed(void **state)
{
	struct test_state *s = *state;
	const struct proc_info *first, *again;
	struct proc_info scratch;

	fake_service(s, 500, "before-exec");
	new_table(s, 8);
	first = proc_table_get(s->t, 500, &scratch);
	assert_string_equal(first->service, "before-exec");
	fake_service(s, 500, "after-exec");
	again = proc_table_get(s->t, 500, &scratch);
	assert_ptr_equal(again, first);
	assert_string_equal(again->service, "before-exec");
	assert_int_equal(proc_table_count(s->t), 1);

	proc_table_refresh(s->t, 500);
	assert_string_equal(proc_table_get(s->t, 500, &scratch)->service, "after-exec");
	assert_int_equal(proc_table_count(s->t), 1);
}

/* find answers from what get kept, and reads nothing: a pid it does not know stays unknown even
 * though its files are there, and a changed file is not seen. */
static void test_proc_table_find_reads_nothing(void **state)
{
	struct test_state *s = *state;
	const struct proc_info *got;
	struct proc_info scratch;

	fake_service(s, 600, "first");
	new_table(s, 8);
	assert_null(proc_table_find(s->t, 600));
	assert_int_equal(proc_table_count(s->t), 0);
	got = proc_table_get(s->t, 600, &scratch);
	fake_service(s, 600, "changed");
	assert_ptr_equal(proc_table_find(s->t, 600), got);
	assert_string_equal(proc_table_find(s->t, 600)->service, "first");
	assert_null(proc_table_find(s->t, 600 + 4096)); /* same bucket, other pid */
}

static void record_swept(void *ctx, pid_t pid)
{
	struct test_state *s = ctx;

	assert_true(s->nswept < MAX_SWEPT);
	s->swept[s->nswept++] = pid;
}

static int was_swept(const struct test_state *s, pid_t pid)
{
	size_t i;

	for (i = 0; i < s->nswept; i++)
		if (s->swept[i] == pid)
			return 1;
	return 0;
}

/* <root>/PID/maps naming an OTEL_CTX mapping at 0x10000 and <root>/PID/mem holding an OTEP 4719
 * header there and a ProcessContext whose resource says service.name = "ctx-svc" (29 bytes,
 * encoded by hand: resource 1 { attributes 1 { key 1, value 2 { string_value 1 } } }). */
static void fake_process_ctx(struct test_state *s, int pid)
{
	static const char payload[] = "\x0a\x1b\x0a\x19\x0a\x0c"
				      "service.name"
				      "\x12\x09\x0a\x07"
				      "ctx-svc";
	static const char maps[] = "00010000-00011000 rw-p 00000000 00:01 77   /memfd:OTEL_CTX "
				   "(deleted)\n";
	struct {
		char sig[8];
		uint32_t version, size;
		uint64_t ts, payload;
	} h = { "OTEL_CTX", 2, sizeof(payload) - 1, 1, 0x10020 };
	char path[PATH_MAX];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%d/maps", s->root, pid);
	write_bytes(path, maps, sizeof(maps) - 1);
	snprintf(path, sizeof(path), "%s/%d/mem", s->root, pid);
	f = fopen(path, "w");
	assert_non_null(f);
	assert_int_equal(fseek(f, 0x10000, SEEK_SET), 0);
	assert_int_equal(fwrite(&h, sizeof(h), 1, f), 1);
	assert_int_equal(fwrite(payload, sizeof(payload) - 1, 1, f), 1);
	fclose(f);
}

/* A resource built in code is what the process's traces carry: it beats the environment. */
static void test_proc_table_prefers_the_service_named_in_code(void **state)
{
	struct test_state *s = *state;

	new_table(s, 8);
	fake_service(s, 300, "from-env");
	fake_process_ctx(s, 300);
	assert_string_equal(service_of(s, 300), "ctx-svc");
}

/* An SDK publishes its context after start-up: a process first seen without one is looked at
 * again (1 s later, then 2, 4 ...), and then takes the name its code gave it. */
static void test_proc_table_adopts_a_context_published_later(void **state)
{
	struct test_state *s = *state;
	struct timespec start, now;

	new_table(s, 8);
	fake_service(s, 301, "from-env");
	assert_string_equal(service_of(s, 301), "from-env");
	fake_process_ctx(s, 301);
	clock_gettime(CLOCK_MONOTONIC, &start);
	do {
		usleep(50000);
		clock_gettime(CLOCK_MONOTONIC, &now);
	} while (strcmp(service_of(s, 301), "ctx-svc") && now.tv_sec - start.tv_sec < 5);
	assert_string_equal(service_of(s, 301), "ctx-svc");
	assert_true(now.tv_sec - start.tv_sec >= 0 && now.tv_sec - start.tv_sec < 3);
}

/* The thread context reader reads a process's context when it finds its records: the table
 * takes the name then, not at its next scheduled look (a second or more later), so the first
 * samples that carry a record's span carry the service its context names too. */
static void test_proc_table_takes_the_context_another_reader_found(void **state)
{
	struct test_state *s = *state;

	new_table(s, 8);
	fake_service(s, 302, "from-env");
	assert_string_equal(service_of(s, 302), "from-env");
	fake_process_ctx(s, 302);
	/* Its next look is a second away: the table holds the old name until told. */
	assert_string_equal(proc_table_find(s->t, 302)->service, "from-env");
	proc_table_ctx_found(s->t, 302);
	assert_string_equal(proc_table_find(s->t, 302)->service, "ctx-svc");
	/* A pid the table does not know yet is read, context included. */
	fake_service(s, 303, "from-env");
	fake_process_ctx(s, 303);
	assert_null(proc_table_find(s->t, 303));
	proc_table_ctx_found(s->t, 303);
	assert_non_null(proc_table_find(s->t, 303));
	assert_string_equal(proc_table_find(s->t, 303)->service, "ctx-svc");
	/* No context after all (a reader raced its removal): the name stays. */
	fake_service(s, 304, "from-env");
	assert_string_equal(service_of(s, 304), "from-env");
	proc_table_ctx_found(s->t, 304);
	assert_string_equal(proc_table_find(s->t, 304)->service, "from-env");
}

static void test_proc_table_sweeps_exactly_the_exited_pids(void **state)
{
	/* 100 and 4196 share a hash bucket, so removal in the middle of a chain is covered too */
	const pid_t pids[] = { 100, 200, 300, 4196, 8292 };
	struct test_state *s = *state;
	char svc[32];
	size_t i;

	for (i = 0; i < sizeof(pids) / sizeof(pids[0]); i++) {
		snprintf(svc, sizeof(svc), "svc-%d", pids[i]);
		fake_service(s, pids[i], svc);
	}
	new_table(s, 16);
	for (i = 0; i < sizeof(pids) / sizeof(pids[0]); i++)
		service_of(s, pids[i]);
	assert_int_equal(proc_table_count(s->t), 5);

	proc_table_mark_exited(s->t, 200);
	proc_table_mark_exited(s->t, 4196);
	proc_table_mark_exited(s->t, 999); /* not in the table: ignored */
	assert_int_equal(proc_table_count(s->t), 5);
	/* The first sweep after the exit keeps them (a drain may still hold their samples). */
	proc_table_sweep_exited(s->t, record_swept, s);
	assert_int_equal(s->nswept, 0);
	assert_int_equal(proc_table_count(s->t), 5);
	proc_table_sweep_exited(s->t, record_swept, s);

	assert_int_equal(s->nswept, 2);
	assert_true(was_swept(s, 200));
	assert_true(was_swept(s, 4196));
	assert_int_equal(proc_table_count(s->t), 3);

	/* survivors stay cached; swept pids are read afresh */
	for (i = 0; i < sizeof(pids) / sizeof(pids[0]); i++)
		fake_service(s, pids[i], "new-name");
	assert_string_equal(service_of(s, 100), "svc-100");
	assert_string_equal(service_of(s, 300), "svc-300");
	assert_string_equal(service_of(s, 8292), "svc-8292");
	assert_string_equal(service_of(s, 200), "new-name");
	assert_string_equal(service_of(s, 4196), "new-name");

	/* a second sweep with nothing exited calls nothing */
	s->nswept = 0;
	proc_table_sweep_exited(s->t, record_swept, s);
	assert_int_equal(s->nswept, 0);
	assert_int_equal(proc_table_count(s->t), 5);
}

static void test_proc_table_evicts_exited_entry_when_full(void **state)
{
	struct test_state *s = *state;
	const struct proc_info *info;
	struct proc_info scratch;

	fake_service(s, 1, "one");
	fake_service(s, 2, "two");
	fake_service(s, 3, "three");
	new_table(s, 2);
	service_of(s, 1);
	service_of(s, 2);
	proc_table_mark_exited(s->t, 1);

	info = proc_table_get(s->t, 3, &scratch);
	assert_ptr_not_equal(info, &scratch);
	assert_int_equal(info->pid, 3);
	assert_string_equal(info->service, "three");
	assert_int_equal(proc_table_count(s->t), 2);

	/* pid 1 is gone from the table: the sweeps find nothing exited left */
	proc_table_sweep_exited(s->t, record_swept, s);
	proc_table_sweep_exited(s->t, record_swept, s);
	assert_int_equal(s->nswept, 0);
	assert_int_equal(proc_table_count(s->t), 2);
}

static void test_proc_table_fills_scratch_when_full_of_live_entries(void **state)
{
	struct test_state *s = *state;
	const struct proc_info *info;
	struct proc_info scratch;

	fake_service(s, 1, "one");
	fake_service(s, 2, "two");
	fake_service(s, 3, "three");
	new_table(s, 2);
	service_of(s, 1);
	service_of(s, 2);

	memset(&scratch, 0, sizeof(scratch));
	info = proc_table_get(s->t, 3, &scratch);
	assert_ptr_equal(info, &scratch);
	assert_int_equal(scratch.pid, 3);
	assert_string_equal(scratch.service, "three");
	assert_int_equal(proc_table_count(s->t), 2);

	/* not kept: a later get reads the process again */
	fake_service(s, 3, "three-again");
	info = proc_table_get(s->t, 3, &scratch);
	assert_ptr_equal(info, &scratch);
	assert_string_equal(info->service, "three-again");
	assert_int_equal(proc_table_count(s->t), 2);
	/* the live entries are untouched */
	assert_string_equal(service_of(s, 1), "one");
	assert_string_equal(service_of(s, 2), "two");
}

/* <root>/PID/stat with the given text (comm and state). */
static void fake_stat(struct test_state *s, int pid, const char *stat)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%d/stat", s->root, pid);
	write_bytes(path, stat, strlen(stat));
}

static void remove_proc(struct test_state *s, int pid)
{
	assert_int_equal(fixture_sh("rm -rf %s/%d", s->root, pid), 0);
}

static void sweep_twice(struct test_state *s)
{
	proc_table_sweep_exited(s->t, record_swept, s);
	proc_table_sweep_exited(s->t, record_swept, s);
}

/* The leak: a sample of a process whose exit was seen before it had an entry created one that
 * no exit event would ever mark. Now such an entry goes like any exited one. */
static void test_proc_table_entry_of_gone_process_is_swept(void **state)
{
	struct test_state *s = *state;

	new_table(s, 16);
	assert_string_equal(service_of(s, 4242), "unknown_service");
	assert_int_equal(proc_table_count(s->t), 1);
	sweep_twice(s);
	assert_int_equal(proc_table_count(s->t), 0);
	assert_true(was_swept(s, 4242));
	/* a zombie (exited, not yet waited for) likewise */
	fake_service(s, 77, "zombie-svc");
	fake_stat(s, 77, "77 (worker) Z 1 77 77 0");
	service_of(s, 77);
	sweep_twice(s);
	assert_int_equal(proc_table_count(s->t), 0);
}

/* A process that exec'd and died before /proc was read keeps the service its exec event named;
 * one still alive is read from /proc as usual. */
static void test_proc_table_exec_names_gone_process_from_event(void **state)
{
	struct test_state *s = *state;

	new_table(s, 16);
	proc_table_exec(s->t, 600, "storm", 0);
	assert_string_equal(service_of(s, 600), "storm");
	fake_service(s, 601, "from-proc");
	proc_table_exec(s->t, 601, "from-event", 0);
	assert_string_equal(service_of(s, 601), "from-proc");
	/* the exit event that follows the exec removes it after the grace sweep */
	proc_table_mark_exited(s->t, 600);
	sweep_twice(s);
	assert_int_equal(proc_table_count(s->t), 1);
	assert_true(was_swept(s, 600));
}

/* A forked child that exits without exec'ing has its parent's service, even when /proc never saw
 * it; a parent the table does not know yet is read for it. */
static void test_proc_table_fork_gives_child_its_parents_service(void **state)
{
	struct test_state *s = *state;

	fake_service(s, 700, "parent-svc");
	new_table(s, 16);
	proc_table_fork(s->t, 700, 701);
	assert_int_equal(proc_table_count(s->t), 2);
	assert_string_equal(service_of(s, 701), "parent-svc");
	/* the child's exec replaces what it inherited */
	proc_table_exec(s->t, 701, "after-exec", 0);
	assert_string_equal(service_of(s, 701), "after-exec");
	/* a parent that is gone passes nothing on */
	proc_table_fork(s->t, 999, 702);
	assert_int_equal(proc_table_count(s->t), 3); /* 999 itself, marked exited */
	/* An exec event whose environment search ended early names only the program: a child
	 * gone before /proc was read keeps what its parent passed on, unless there is nothing. */
	proc_table_fork(s->t, 700, 703);
	proc_table_exec(s->t, 703, "exec_storm", 1);
	assert_string_equal(service_of(s, 703), "parent-svc");
	proc_table_exec(s->t, 704, "exec_storm", 1);
	assert_string_equal(service_of(s, 704), "exec_storm");
	proc_table_fork(s->t, 700, 705);
	proc_table_exec(s->t, 705, "named-by-env", 0);
	assert_string_equal(service_of(s, 705), "named-by-env");
}

/* Lost exit events: the liveness check finds the dead and the zombies, and counts them. */
static void test_proc_table_reap_marks_dead_and_zombie_entries(void **state)
{
	struct test_state *s = *state;

	fake_service(s, 10, "alive");
	fake_stat(s, 10, "10 (a) Z) S 1 10 10 0"); /* a comm holding ") Z" stays alive */
	fake_service(s, 11, "zombie");
	fake_stat(s, 11, "11 (b) Z 1 11 11 0");
	fake_service(s, 12, "vanished");
	fake_service(s, 13, "no-stat"); /* a dir without stat counts as alive */
	new_table(s, 16);
	service_of(s, 10);
	service_of(s, 11);
	service_of(s, 12);
	service_of(s, 13);
	remove_proc(s, 12);
	assert_int_equal(proc_table_count(s->t), 4); /* 11: marked exited when first read */
	assert_int_equal(proc_table_reap(s->t), 1);
	assert_int_equal(proc_table_reaped(s->t), 1);
	assert_int_equal(proc_table_reap(s->t), 0); /* already marked */
	sweep_twice(s);
	assert_true(was_swept(s, 11));
	assert_true(was_swept(s, 12));
	assert_false(was_swept(s, 10));
	assert_false(was_swept(s, 13));
	assert_int_equal(proc_table_count(s->t), 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_proc_table_entry_of_gone_process_is_swept,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_proc_table_exec_names_gone_process_from_event,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_proc_table_reap_marks_dead_and_zombie_entries,
						setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_proc_table_fork_gives_child_its_parents_service, setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_proc_table_names_service_from_otel_service_name, setup, teardown),
		cmocka_unit_test_setup_teardown(test_proc_table_keeps_the_real_uid, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_proc_table_falls_back_to_comm_without_otel_env,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_proc_table_names_vanished_pid_unknown_service,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_proc_table_names_kernel_threads_kernel, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_proc_table_names_real_kernel_threads_kernel,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_proc_table_prefers_the_service_named_in_code,
						setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_proc_table_takes_the_context_another_reader_found, setup, teardown),
		cmocka_unit_test_setup_teardown(test_proc_table_adopts_a_context_published_later,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_proc_table_find_reads_nothing, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_proc_table_caches_entry_until_refreshed, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_proc_table_sweeps_exactly_the_exited_pids,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_proc_table_evicts_exited_entry_when_full,
						setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_proc_table_fills_scratch_when_full_of_live_entries, setup, teardown),
		cmocka_unit_test_setup_teardown(test_proc_table_keeps_a_2048_byte_service_name,
						setup, teardown),
	};

	return cmocka_run_group_tests_name("proc_table", tests, NULL, NULL);
}
