// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* What the hook (hooks/c/thread_record.c, linked on its own) hands the uprobe when an agent is
 * attached: when it asks for an entry, the name it sends, and the ring it keeps. The uprobe's
 * argument is read with the hook ABI version 3 layout from include/spanprof_abi.h. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <linux/types.h>

#include "spanprof.h"
#include "spanprof_abi.h"
#include "thread_record.h"

static void fill(struct spanprof_span *s, uint8_t span, const char *name)
{
	memset(s, 0, sizeof(*s));
	s->abi_version = SPANPROF_SPAN_ABI_VERSION;
	s->trace_id[15] = 1;
	s->span_id[7] = span;
	s->root_span_id[7] = 1;
	snprintf(s->name, sizeof(s->name), "%s", name);
}

static const char *trap_name(const void *arg)
{
	return ((const struct spanprof_span *)arg)->name;
}

/* A clear that registers the thread with a new agent still sends the thread's root name: the
 * agent names the thread's span segments from the entry's name. */
static void test_clear_trap_carries_the_root_name(void **state)
{
	struct spanprof_span s;
	const void *arg;

	(void)state;
	fill(&s, 2, "checkout");
	arg = thread_record_set(&s, 1);
	assert_non_null(arg);
	assert_string_equal(trap_name(arg), "checkout");
	/* Agent 1 went, agent 2 came (the semaphore moved): the first call, a clear, registers. */
	arg = thread_record_set(NULL, 2);
	assert_non_null(arg);
	assert_string_equal(trap_name(arg), "checkout");
	assert_int_equal(((const struct spanprof_span *)arg)->abi_version, SPANPROF_ABI_VERSION_V3);
}

/* Set and clear alternate: the periodic entries (every SPANPROF_RING_TRAP_EVERY changes) land
 * on the clears, and each one still names the root. */
static void test_periodic_traps_on_clears_keep_the_name(void **state)
{
	struct spanprof_span s;
	unsigned traps = 0, named = 0;

	(void)state;
	fill(&s, 3, "payment");
	assert_non_null(thread_record_set(&s, 3)); /* a new root name and agent */
	for (unsigned i = 0; i < 4 * SPANPROF_RING_TRAP_EVERY; i++) {
		const void *arg = thread_record_set(i & 1 ? &s : NULL, 3);

		if (arg) {
			traps++;
			named += !strcmp(trap_name(arg), "payment");
		}
	}
	assert_true(traps >= 3);
	assert_int_equal(named, traps);
}

/* Set by a test: the hook's next clock read runs a nested call, as a signal handler that
 * interrupts spanprof_span_set() in the middle of it would. */
static int nest_at_clock;
static time_t clock_skew_s; /* added to every clock read */
static int hold_at_clock; /* the next clock read tells held[1], then waits on release[0] */
static int held[2], release[2];
static int nested_ran;
static const void *nested_arg;

/* The hook's clock read, linked in place of the C library's (thread_record.c is linked into this
 * executable): the point inside a call where the ring's head was read but not yet stored. */
int clock_gettime(clockid_t clock, struct timespec *ts)
{
	if (__atomic_exchange_n(&hold_at_clock, 0, __ATOMIC_ACQ_REL)) {
		char c = 0;

		if (write(held[1], &c, 1) != 1 || read(release[0], &c, 1) != 1)
			return -1;
	}
	if (nest_at_clock) {
		struct spanprof_span s;

		nest_at_clock = 0;
		fill(&s, 9, "handler");
		nested_arg = thread_record_set(&s, 5);
		nested_ran = 1;
	}
	if (syscall(SYS_clock_gettime, clock, ts))
		return -1;
	ts->tv_sec += clock_skew_s;
	return 0;
}

/* A call made while another runs on the same thread is dropped and counted: the ring's head
 * moves by the outer call's one change, and the record holds the outer call's span. */
static void test_nested_call_is_dropped_and_counted(void **state)
{
	struct spanprof_span s;
	const struct spanprof_thread_area *area;
	const void *arg;
	uint64_t head;

	(void)state;
	fill(&s, 4, "orders");
	arg = thread_record_set(&s, 5); /* registers: the argument names the area */
	assert_non_null(arg);
	memcpy(&head, (const char *)arg + SPANPROF_ABI_V3_AREA_OFFSET, sizeof(head));
	area = (const struct spanprof_thread_area *)(uintptr_t)head;
	head = area->head;
	assert_int_equal(area->nested, 0);
	fill(&s, 5, "orders");
	nest_at_clock = 1;
	thread_record_set(&s, 5);
	assert_true(nested_ran);
	assert_null(nested_arg);
	assert_int_equal(area->nested, 1);
	assert_int_equal(area->head, head + 1);
	assert_int_equal(area->ring[head & SPANPROF_RING_MASK].span_id[7], 5);
	assert_int_equal(area->record[16 + 7], 5); /* the OTEP record's span id */
	/* The next call runs again. */
	fill(&s, 6, "orders");
	thread_record_set(&s, 5);
	assert_int_equal(area->head, head + 2);
	assert_int_equal(area->nested, 1);
}

/* 1 when this process maps a process context. */
static int has_context_mapping(void)
{
	char line[512];
	FILE *f = fopen("/proc/self/maps", "re");
	int found = 0;

	if (!f)
		return 0;
	while (!found && fgets(line, sizeof(line), f))
		found = strstr(line, "OTEL_CTX") != NULL;
	fclose(f);
	return found;
}

static void *publisher(void *arg)
{
	(void)arg;
	spanprof_process_context_publish(NULL, NULL, 0);
	return NULL;
}

/* A child forked while another thread of the parent held the process context's lock (in the
 * middle of a publish) still announces its own context at its first span set. */
static void test_child_forked_under_the_lock_announces(void **state)
{
	pthread_t thread;
	int status = 0;
	pid_t forked;
	char c = 0;

	(void)state;
	assert_int_equal(pipe(held), 0);
	assert_int_equal(pipe(release), 0);
	hold_at_clock = 1;
	assert_int_equal(pthread_create(&thread, NULL, publisher, NULL), 0);
	assert_int_equal(read(held[0], &c, 1), 1); /* the publisher holds the lock */
	forked = fork();
	assert_true(forked >= 0);
	if (forked == 0) {
		struct spanprof_span s;

		fill(&s, 7, "child");
		thread_record_set(&s, 0);
		_exit(has_context_mapping() ? 0 : 1);
	}
	assert_int_equal(waitpid(forked, &status, 0), forked);
	assert_int_equal(write(release[1], &c, 1), 1);
	assert_int_equal(pthread_join(thread, NULL), 0);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
}

/* A thread whose last uprobe entry is over a second old enters it again at its next change:
 * an agent that came while the semaphore went 1, 0, 1 unseen learns of its area. */
static void test_old_entry_enters_again(void **state)
{
	struct spanprof_span s;

	(void)state;
	fill(&s, 10, "search");
	assert_non_null(thread_record_set(&s, 11)); /* registers */
	for (uint8_t i = 11; i < 20; i++) {
		fill(&s, i, "search");
		assert_null(thread_record_set(&s, 11));
	}
	clock_skew_s += 2;
	fill(&s, 20, "search");
	assert_non_null(thread_record_set(&s, 11));
	fill(&s, 21, "search");
	assert_null(thread_record_set(&s, 11));
	/* A call that queues no change reads no clock, and does not enter. */
	clock_skew_s += 2;
	assert_null(thread_record_set(&s, 11));
}

/* FNV-1a 64 of a name's bytes: the id the agent keys span names by, computed here from its
 * definition. */
static uint64_t fnv1a64(const char *name)
{
	uint64_t h = 0xcbf29ce484222325ull;

	for (const char *c = name; *c; c++) {
		h ^= (uint8_t)*c;
		h *= 0x100000001b3ull;
	}
	return h;
}

static const struct spanprof_thread_area *area_of(const void *arg)
{
	uint64_t at;

	memcpy(&at, (const char *)arg + SPANPROF_ABI_V3_AREA_OFFSET, sizeof(at));
	return (const struct spanprof_thread_area *)(uintptr_t)at;
}

static uint64_t last_name_id(const struct spanprof_thread_area *area)
{
	return area->ring[(area->head - 1) & SPANPROF_RING_MASK].name_id;
}

/* A thread switching between root names it already sent enters the uprobe only for each name's
 * first use; every change carries its name's id. When the agent may have changed (the
 * semaphore's value moved, or an entry for age), names are sent again, once each. */
static void test_names_sent_before_do_not_enter_again(void **state)
{
	const struct spanprof_thread_area *area;
	struct spanprof_span s;
	const void *arg;

	(void)state;
	fill(&s, 40, "GET /alpha");
	arg = thread_record_set(&s, 31); /* a new agent: registers */
	assert_non_null(arg);
	area = area_of(arg);
	assert_true(last_name_id(area) == fnv1a64("GET /alpha"));
	fill(&s, 41, "GET /beta");
	arg = thread_record_set(&s, 31); /* a name the agent does not know yet */
	assert_non_null(arg);
	assert_string_equal(trap_name(arg), "GET /beta");
	for (uint8_t i = 42; i < 60; i++) {
		fill(&s, i, i & 1 ? "GET /beta" : "GET /alpha");
		assert_null(thread_record_set(&s, 31));
		assert_true(last_name_id(area) == fnv1a64(i & 1 ? "GET /beta" : "GET /alpha"));
		assert_null(thread_record_set(NULL, 31));
		assert_true(last_name_id(area) == 0);
	}
	/* The same span renamed is a change of its own. */
	fill(&s, 60, "GET /alpha");
	assert_null(thread_record_set(&s, 31));
	fill(&s, 60, "GET /beta");
	assert_null(thread_record_set(&s, 31));
	assert_int_equal(area->ring[(area->head - 1) & SPANPROF_RING_MASK].span_id[7], 60);
	assert_true(last_name_id(area) == fnv1a64("GET /beta"));
	/* Another agent: registering sends the current name, the other one is sent at its use. */
	fill(&s, 61, "GET /alpha");
	assert_non_null(thread_record_set(&s, 32));
	fill(&s, 62, "GET /beta");
	arg = thread_record_set(&s, 32);
	assert_non_null(arg);
	assert_string_equal(trap_name(arg), "GET /beta");
	fill(&s, 63, "GET /alpha");
	assert_null(thread_record_set(&s, 32));
	/* An entry for age forgets them too. */
	clock_skew_s += 2;
	fill(&s, 64, "GET /beta");
	assert_non_null(thread_record_set(&s, 32));
	fill(&s, 65, "GET /alpha");
	arg = thread_record_set(&s, 32);
	assert_non_null(arg);
	assert_string_equal(trap_name(arg), "GET /alpha");
	fill(&s, 66, "GET /beta");
	assert_null(thread_record_set(&s, 32));
}

/* More root names than a thread remembers: each one coming back after the others pushed it out
 * is sent again, so none is left unknown to the agent. */
static void test_many_names_are_each_sent_again_when_forgotten(void **state)
{
	struct spanprof_span s;
	char name[32];
	unsigned traps = 0;

	(void)state;
	fill(&s, 70, "first");
	assert_non_null(thread_record_set(&s, 33));
	for (int round = 0; round < 3; round++) {
		for (int n = 0; n < 40; n++) {
			snprintf(name, sizeof(name), "route-%d", n);
			fill(&s, (uint8_t)(71 + n), name);
			traps += thread_record_set(&s, 33) != NULL;
		}
	}
	/* 40 names through 32 remembered slots, round robin: every use misses. */
	assert_int_equal(traps, 120);
}

/* A call that changes nothing the ring's last entry holds queues nothing (the hook tells it
 * from the record, not from that entry); a change back after a clear, and every change once the
 * agent changed or after calls with none attached, is queued. */
static void test_only_changes_are_queued(void **state)
{
	const struct spanprof_thread_area *area;
	struct spanprof_span s;
	const void *arg;
	uint64_t h;

	(void)state;
	fill(&s, 100, "repeat");
	arg = thread_record_set(&s, 61); /* a new semaphore value: registers */
	assert_non_null(arg);
	area = area_of(arg);
	h = area->head;
	assert_null(thread_record_set(&s, 61));
	assert_int_equal(area->head, h);
	assert_null(thread_record_set(NULL, 61));
	assert_int_equal(area->head, h + 1);
	assert_null(thread_record_set(NULL, 61));
	assert_int_equal(area->head, h + 1);
	assert_null(thread_record_set(&s, 61)); /* the same span again, after a clear */
	assert_int_equal(area->head, h + 2);
	assert_int_equal(area->ring[(h + 1) & SPANPROF_RING_MASK].span_id[7], 100);
	fill(&s, 101, "repeat");
	assert_null(thread_record_set(&s, 61));
	assert_int_equal(area->head, h + 3);
	/* Another agent: the same span is queued for it. */
	assert_non_null(thread_record_set(&s, 62));
	assert_int_equal(area->head, h + 4);
	/* No agent: the record changes, the ring does not; the next agent's first call queues. */
	assert_null(thread_record_set(NULL, 0));
	assert_null(thread_record_set(&s, 0));
	assert_int_equal(area->head, h + 4);
	assert_non_null(thread_record_set(&s, 63));
	assert_int_equal(area->head, h + 5);
	assert_int_equal(area->ring[(h + 4) & SPANPROF_RING_MASK].span_id[7], 101);
	assert_true(last_name_id(area) == fnv1a64("repeat"));
	/* The same ids under a new name are a change: queued, with the new name's id. */
	fill(&s, 101, "renamed");
	thread_record_set(&s, 63); /* a name never sent enters the uprobe: not asserted here */
	assert_int_equal(area->head, h + 6);
	assert_true(last_name_id(area) == fnv1a64("renamed"));
}

static uint64_t mono_now(void)
{
	struct timespec ts;

	syscall(SYS_clock_gettime, CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* With the time stamp counter usable, the ring holds counter readings and the uprobe entry
 * carries a reading with the CLOCK_MONOTONIC time beside it; without one, ns and a zero pair. */
static void test_ring_clock_and_its_pair(void **state)
{
	const struct spanprof_thread_area *area;
	uint64_t tsc, ns, at, before, after, entry;
	struct spanprof_span s;
	const void *arg;

	(void)state;
	thread_record_use_tsc(1);
	fill(&s, 30, "clock");
	before = mono_now();
	arg = thread_record_set(&s, 21); /* a new semaphore value: registers */
	after = mono_now();
	assert_non_null(arg);
	memcpy(&at, (const char *)arg + SPANPROF_ABI_V3_AREA_OFFSET, sizeof(at));
	memcpy(&tsc, (const char *)arg + SPANPROF_ABI_V3_CLOCK_TSC_OFFSET, sizeof(tsc));
	memcpy(&ns, (const char *)arg + SPANPROF_ABI_V3_CLOCK_NS_OFFSET, sizeof(ns));
	area = (const struct spanprof_thread_area *)(uintptr_t)at;
	entry = area->ring[(area->head - 1) & SPANPROF_RING_MASK].time;
	if (!tsc) {
		print_message("no usable time stamp counter here: the ring holds ns\n");
		assert_int_equal(ns, 0);
		assert_true(entry >= before && entry <= after);
	} else {
		/* The change was stamped before the pair was read. */
		assert_true(ns >= before && ns <= after);
		assert_true(entry <= tsc);
		assert_true(tsc - entry < 1000000000ull);
	}
	thread_record_use_tsc(0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ring_clock_and_its_pair),
		cmocka_unit_test(test_clear_trap_carries_the_root_name),
		cmocka_unit_test(test_periodic_traps_on_clears_keep_the_name),
		cmocka_unit_test(test_nested_call_is_dropped_and_counted),
		cmocka_unit_test(test_child_forked_under_the_lock_announces),
		cmocka_unit_test(test_old_entry_enters_again),
		cmocka_unit_test(test_names_sent_before_do_not_enter_again),
		cmocka_unit_test(test_many_names_are_each_sent_again_when_forgotten),
		cmocka_unit_test(test_only_changes_are_queued),
	};

	/* The cases below move clock_gettime under the hook: its ring must read it. */
	thread_record_use_tsc(0);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
