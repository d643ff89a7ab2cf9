// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* What the hook (hooks/c/thread_record.c, linked on its own) hands the uprobe when an agent is
 * attached: when it asks for an entry, the name it sends, and the ring it keeps. The uprobe's
 * argument is read with the hook ABI version 3 layout from include/spanprof_abi.h. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_clear_trap_carries_the_root_name),
		cmocka_unit_test(test_periodic_traps_on_clears_keep_the_name),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
