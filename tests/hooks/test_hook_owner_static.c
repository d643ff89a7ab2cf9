// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Two copies of the hook in one process, the first linked into the executable from
 * libspanprof.a without exporting anything (this test), the second a plugin dlopen()ed later
 * (linked -Bsymbolic, so nothing of it binds to this copy): the plugin finds this copy by its
 * owner note (hooks/c/hook_owner.c), and spans set through the plugin land in this copy's
 * record. No agent. */
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

#include <cmocka.h>

#include "spanprof.h"

typedef void (*span_set_fn)(const struct spanprof_span *);

/* This executable's copy of the record pointer (hooks/c/thread_record.c). */
extern __thread const uint8_t *otel_thread_ctx_v1;

static void test_plugin_uses_the_executables_copy(void **state)
{
	const char *lib = getenv("SPANPROF_LIBRARY");
	char dir[PATH_MAX], plugin[PATH_MAX];
	const uint8_t *const *plugin_slot;
	struct spanprof_span s;
	span_set_fn set;
	void *h;

	(void)state;
	snprintf(dir, sizeof(dir), "%s", lib ? lib : "build/libspanprof.so");
	snprintf(plugin, sizeof(plugin), "%s/tests/workloads/two_copies/libplugin_symbolic.so",
		 dirname(dir));
	/* This copy, not exported: only the note names it. */
	assert_null(dlsym(RTLD_DEFAULT, "spanprof_span_set"));
	spanprof_span_set(NULL);
	h = dlopen(plugin, RTLD_NOW | RTLD_LOCAL);
	if (!h)
		fprintf(stderr, "dlopen %s: %s\n", plugin, dlerror());
	assert_non_null(h);
	set = (span_set_fn)(uintptr_t)dlsym(h, "spanprof_span_set");
	plugin_slot = dlsym(h, "otel_thread_ctx_v1");
	assert_non_null(set);
	assert_non_null(plugin_slot);
	assert_true((void *)set != (void *)spanprof_span_set);
	memset(&s, 0, sizeof(s));
	s.abi_version = SPANPROF_SPAN_ABI_VERSION;
	s.span_id[7] = 0x42;
	set(&s);
	/* span_id at offset 16 of the OTEP record, valid at 24. */
	assert_non_null(otel_thread_ctx_v1);
	assert_int_equal(otel_thread_ctx_v1[16 + 7], 0x42);
	assert_int_equal(otel_thread_ctx_v1[24], 1);
	assert_null(*plugin_slot);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_plugin_uses_the_executables_copy),
	};

	return cmocka_run_group_tests_name("hook_owner_static", tests, NULL, NULL);
}
