// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Tests for spanprof_process_context_publish() (hooks/c/process_ctx.c): this process publishes
 * its resource, then reads it back through /proc/self the way the agent does (process_ctx.c),
 * and protobuf-c decodes the payload as opentelemetry-proto's ProcessContext. */
#define _GNU_SOURCE
#include <errno.h>
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

#include "proto/process_context.pb-c.h"
#include "discover/process_ctx.h"
#include "spanprof.h"

static void test_published_resource_is_read_back_through_proc(void **state)
{
	const char *keys[] = { "service.name", "service.namespace", "service.instance.id" };
	const char *values[] = { "set-in-code", "shop", "0f6e2a10" };
	struct process_ctx ctx;

	(void)state;
	assert_int_equal(spanprof_process_context_publish(keys, values, 3), 0);
	assert_int_equal(process_ctx_read("/proc", getpid(), &ctx), 0);
	assert_string_equal(ctx.service_name, "set-in-code");
	assert_string_equal(ctx.service_namespace, "shop");
	/* Publishing again replaces the resource (update protocol). */
	values[0] = "renamed";
	assert_int_equal(spanprof_process_context_publish(keys, values, 1), 0);
	assert_int_equal(process_ctx_read("/proc", getpid(), &ctx), 0);
	assert_string_equal(ctx.service_name, "renamed");
	assert_string_equal(ctx.service_namespace, "");
}

/* The header as OTEP 4719 lays it out, and a payload any protobuf library decodes. */
static void test_mapping_holds_the_otep_header_and_a_process_context(void **state)
{
	const char *keys[] = { "service.name" }, *values[] = { "proto-check" };
	char line[512], name[256] = "";
	unsigned long long start = 0, end;
	Otelctx__ProcessContext *pc;
	const uint8_t *h = NULL;
	uint32_t size;
	uint64_t ptr, ts;
	FILE *maps;

	(void)state;
	assert_int_equal(spanprof_process_context_publish(keys, values, 1), 0);
	maps = fopen("/proc/self/maps", "r");
	assert_non_null(maps);
	while (!h && fgets(line, sizeof(line), maps))
		if (sscanf(line, "%llx-%llx %*s %*s %*s %*s %255s", &start, &end, name) == 3 &&
		    strstr(name, "OTEL_CTX"))
			h = (const uint8_t *)(uintptr_t)start;
	fclose(maps);
	assert_non_null(h);
	assert_memory_equal(h, "OTEL_CTX", 8);
	assert_int_equal(*(const uint32_t *)(h + 8), 2);
	memcpy(&size, h + 12, 4);
	memcpy(&ts, h + 16, 8);
	memcpy(&ptr, h + 24, 8);
	assert_true(ts != 0);
	pc = otelctx__process_context__unpack(NULL, size, (const uint8_t *)(uintptr_t)ptr);
	assert_non_null(pc);
	assert_non_null(pc->resource);
	assert_int_equal(pc->resource->n_attributes, 1);
	assert_string_equal(pc->resource->attributes[0]->key, "service.name");
	assert_string_equal(pc->resource->attributes[0]->value->string_value, "proto-check");
	otelctx__process_context__free_unpacked(pc, NULL);
}

/* MADV_DONTFORK: a child does not inherit the parent's resource. */
static void test_a_forked_child_has_no_context(void **state)
{
	const char *keys[] = { "service.name" }, *values[] = { "parent" };
	struct process_ctx ctx;
	int status;
	pid_t pid;

	(void)state;
	assert_int_equal(spanprof_process_context_publish(keys, values, 1), 0);
	pid = fork();
	if (!pid)
		_exit(process_ctx_read("/proc", getpid(), &ctx) == -ENOENT ? 0 : 1);
	assert_true(pid > 0);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

static void test_bad_arguments_are_refused(void **state)
{
	const char *keys[] = { "service.name" }, *nulls[] = { NULL };
	static char huge[70 * 1024];
	const char *values[] = { huge };

	(void)state;
	assert_int_equal(spanprof_process_context_publish(keys, nulls, 1), -EINVAL);
	assert_int_equal(spanprof_process_context_publish(NULL, NULL, 1), -EINVAL);
	memset(huge, 'x', sizeof(huge) - 1);
	assert_int_equal(spanprof_process_context_publish(keys, values, 1), -EMSGSIZE);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_published_resource_is_read_back_through_proc),
		cmocka_unit_test(test_mapping_holds_the_otep_header_and_a_process_context),
		cmocka_unit_test(test_a_forked_child_has_no_context),
		cmocka_unit_test(test_bad_arguments_are_refused),
	};

	return cmocka_run_group_tests_name("process_ctx_publish", tests, NULL, NULL);
}
