// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Two copies of the hook in one process (hooks/c/hook_owner.c): libspanprof.so and a plugin that
 * carries its own copy of the hook objects, linked -Bsymbolic so that nothing of it binds to the
 * other copy. Whichever copy a thread calls, its span must land in the record of the copy loaded
 * first, and the other copy's otel_thread_ctx_v1 must stay NULL; also when the first is a library
 * built before copies looked for their owner (with a GNU or only a SysV symbol hash table). No agent: the records are read
 * through dlsym, as a third-party reader finds them. Each load order runs in its own child. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <libgen.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "spanprof.h"

typedef void (*span_set_fn)(const struct spanprof_span *);

static char lib_path[PATH_MAX], plugin_path[PATH_MAX], old_path[PATH_MAX], old_sysv_path[PATH_MAX];

static int setup(void **state)
{
	const char *lib = getenv("SPANPROF_LIBRARY");
	char dir[PATH_MAX];
	const char *build;

	(void)state;
	snprintf(lib_path, sizeof(lib_path), "%s", lib ? lib : "build/libspanprof.so");
	snprintf(dir, sizeof(dir), "%s", lib_path);
	build = dirname(dir);
	snprintf(plugin_path, sizeof(plugin_path),
		 "%s/tests/workloads/two_copies/libplugin_symbolic.so", build);
	snprintf(old_path, sizeof(old_path), "%s/tests/workloads/two_copies/libplugin_old.so",
		 build);
	snprintf(old_sysv_path, sizeof(old_sysv_path),
		 "%s/tests/workloads/two_copies/libplugin_old_sysv.so", build);
	if (access(plugin_path, R_OK) || access(old_path, R_OK) || access(old_sysv_path, R_OK)) {
		fprintf(stderr, "the plugins of %s/tests/workloads/two_copies are not built\n",
			build);
		return -1;
	}
	return 0;
}

/* The calling thread's otel_thread_ctx_v1 in copy h (dlsym resolves a TLS symbol for the calling
 * thread; h's own definition comes first in its scope). */
static const uint8_t *record_of(void *h)
{
	const uint8_t *const *slot = dlsym(h, "otel_thread_ctx_v1");

	return slot ? *slot : (const uint8_t *)1;
}

/* In the child: loads first and second in that order, sets a span through each copy in turn,
 * and returns 0 when every span is in first's record and second's stays NULL. */
static int child(const char *first, const char *second)
{
	void *a = dlopen(first, RTLD_NOW | RTLD_LOCAL), *b = dlopen(second, RTLD_NOW | RTLD_LOCAL);
	span_set_fn set_a, set_b;
	struct spanprof_span s;

	if (!a || !b)
		return 10;
	set_a = (span_set_fn)(uintptr_t)dlsym(a, "spanprof_span_set");
	set_b = (span_set_fn)(uintptr_t)dlsym(b, "spanprof_span_set");
	if (!set_a || !set_b || set_a == set_b)
		return 11;
	for (int i = 1; i <= 4; i++) {
		memset(&s, 0, sizeof(s));
		s.abi_version = SPANPROF_SPAN_ABI_VERSION;
		s.trace_id[0] = 0x11;
		s.span_id[7] = (uint8_t)i;
		snprintf(s.name, sizeof(s.name), "span %d", i);
		(i & 1 ? set_b : set_a)(&s);
		/* span_id is at offset 16 of the OTEP record, valid at 24. */
		if (!record_of(a) || record_of(a)[16 + 7] != i || record_of(a)[24] != 1)
			return 20 + i;
		if (record_of(b))
			return 30 + i;
	}
	set_b(NULL);
	if (record_of(a)[24] != 0)
		return 40;
	return 0;
}

static void run_child(const char *first, const char *second)
{
	int status = -1;
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (!pid)
		_exit(child(first, second));
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
}

static void test_plugin_loaded_second_uses_the_first_copy(void **state)
{
	(void)state;
	run_child(lib_path, plugin_path);
}

static void test_library_loaded_second_uses_the_plugin(void **state)
{
	(void)state;
	run_child(plugin_path, lib_path);
}

/* A library built before copies looked for their owner, loaded first: found by its exported
 * functions (it has no owner note), through its GNU hash table or its SysV one (DT_HASH). */
static void test_older_library_loaded_first_is_the_owner(void **state)
{
	(void)state;
	run_child(old_path, lib_path);
}

static void test_older_library_with_sysv_hash_table_is_the_owner(void **state)
{
	(void)state;
	run_child(old_sysv_path, lib_path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_plugin_loaded_second_uses_the_first_copy),
		cmocka_unit_test(test_library_loaded_second_uses_the_plugin),
		cmocka_unit_test(test_older_library_loaded_first_is_the_owner),
		cmocka_unit_test(test_older_library_with_sysv_hash_table_is_the_owner),
	};

	return cmocka_run_group_tests_name("hook_owner", tests, setup, NULL);
}
