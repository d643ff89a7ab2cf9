// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Tests for hooks/c/spanprof_otel.h (hex ids -> struct spanprof_span) and for the example that
 * shows it, examples/otel_ids.c, which this test compiles with -Werror and runs. */
#define _GNU_SOURCE
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

#include "spanprof_otel.h"
#include "tmpdir.h"

#define TRACE_HEX "4bf92f3577b34da6a3ce929d0e0e4736"
#define SPAN_HEX "00f067aa0ba902b7"
#define ROOT_HEX "a3ce929d0e0e4736"

static const uint8_t trace_bytes[16] = { 0x4b, 0xf9, 0x2f, 0x35, 0x77, 0xb3, 0x4d, 0xa6,
					 0xa3, 0xce, 0x92, 0x9d, 0x0e, 0x0e, 0x47, 0x36 };
static const uint8_t span_bytes[8] = { 0x00, 0xf0, 0x67, 0xaa, 0x0b, 0xa9, 0x02, 0xb7 };
static const uint8_t root_bytes[8] = { 0xa3, 0xce, 0x92, 0x9d, 0x0e, 0x0e, 0x47, 0x36 };

static void test_otel_span_init_decodes_w3c_ids(void **state)
{
	struct spanprof_span s;

	(void)state;
	memset(&s, 0xee, sizeof(s));
	assert_int_equal(spanprof_otel_span_init(&s, TRACE_HEX, SPAN_HEX, ROOT_HEX, "GET /a"), 0);
	assert_int_equal(s.abi_version, SPANPROF_SPAN_ABI_VERSION);
	assert_int_equal(s.reserved, 0);
	assert_memory_equal(s.trace_id, trace_bytes, 16);
	assert_memory_equal(s.span_id, span_bytes, 8);
	assert_memory_equal(s.root_span_id, root_bytes, 8);
	assert_string_equal(s.name, "GET /a");
	/* The rest of the name field is zeroed, not left over from before. */
	assert_int_equal(s.name[SPANPROF_SPAN_NAME_MAX - 1], 0);
}

static void test_otel_span_init_accepts_upper_case_and_own_root(void **state)
{
	static const uint8_t zero[8];
	struct spanprof_span s;

	(void)state;
	assert_int_equal(spanprof_otel_span_init(&s, "4BF92F3577B34DA6A3CE929D0E0E4736",
						 "00F067AA0BA902B7", NULL, NULL),
			 0);
	assert_memory_equal(s.trace_id, trace_bytes, 16);
	assert_memory_equal(s.span_id, span_bytes, 8);
	assert_memory_equal(s.root_span_id, zero, 8);
	assert_string_equal(s.name, "");
	assert_int_equal(spanprof_otel_span_init(&s, TRACE_HEX, SPAN_HEX, "", "x"), 0);
	assert_memory_equal(s.root_span_id, zero, 8);
	assert_int_equal(spanprof_otel_span_init(&s, TRACE_HEX, SPAN_HEX, "0000000000000000", "x"),
			 0);
	assert_memory_equal(s.root_span_id, zero, 8);
}

static void test_otel_span_init_rejects_bad_hex_and_leaves_span_unchanged(void **state)
{
	const char *bad_spans[] = {
		NULL, /* missing */
		"", /* empty */
		"00f067aa0ba902b", /* 15 digits */
		"00f067aa0ba902b7a", /* 17 digits */
		"00f067aa0ba902bg", /* not hex */
		"0x00f067aa0ba902b7", /* prefix */
		" 00f067aa0ba902b7", /* leading space */
		"00f067aa 0ba902b7", /* inner space */
		"00f067aa0ba902b7\n", /* trailing newline */
	};
	struct spanprof_span s, before;
	size_t i;

	(void)state;
	memset(&s, 0x5a, sizeof(s));
	before = s;
	for (i = 0; i < sizeof(bad_spans) / sizeof(bad_spans[0]); i++) {
		assert_int_equal(spanprof_otel_span_init(&s, TRACE_HEX, bad_spans[i], NULL, "n"),
				 -EINVAL);
		assert_memory_equal(&s, &before, sizeof(s));
	}
	assert_int_equal(spanprof_otel_span_init(&s, "4bf92f3577b34da6", SPAN_HEX, NULL, "n"),
			 -EINVAL);
	assert_int_equal(spanprof_otel_span_init(&s, TRACE_HEX, SPAN_HEX, "a3ce92", "n"), -EINVAL);
	assert_int_equal(spanprof_otel_span_init(&s, TRACE_HEX, SPAN_HEX, "zz", "n"), -EINVAL);
	assert_memory_equal(&s, &before, sizeof(s));
}

static void test_otel_span_init_rejects_all_zero_ids(void **state)
{
	struct spanprof_span s;

	(void)state;
	assert_int_equal(spanprof_otel_span_init(&s, "00000000000000000000000000000000", SPAN_HEX,
						 NULL, NULL),
			 -EINVAL);
	assert_int_equal(spanprof_otel_span_init(&s, TRACE_HEX, "0000000000000000", NULL, NULL),
			 -EINVAL);
}

static void test_otel_name_is_cut_on_a_character_boundary(void **state)
{
	char name[400], dst[SPANPROF_SPAN_NAME_MAX];

	(void)state;
	/* 254 ASCII bytes, then a 3-byte euro sign at 254..256: it cannot fit in 255 bytes. */
	memset(name, 'a', 254);
	strcpy(name + 254, "\xe2\x82\xac tail");
	spanprof_otel_copy_name(dst, name);
	assert_int_equal(strlen(dst), 254);
	/* 253 ASCII bytes and a 2-byte character at 253..254: fits exactly in 255 bytes. */
	memset(name, 'b', 253);
	strcpy(name + 253, "\xc3\xa9 tail");
	spanprof_otel_copy_name(dst, name);
	assert_int_equal(strlen(dst), 255);
	assert_memory_equal(dst + 253, "\xc3\xa9", 2);
	/* Plain ASCII is cut at 255 bytes; 100 bytes (cut at 63 by ABI v1) stay whole. */
	memset(name, 'c', 300);
	name[300] = '\0';
	spanprof_otel_copy_name(dst, name);
	assert_int_equal(strlen(dst), 255);
	name[100] = '\0';
	spanprof_otel_copy_name(dst, name);
	assert_int_equal(strlen(dst), 100);
}

/* The repository's top directory: make runs tests from there; else from this binary's path,
 * <top>/build/tests/hooks/<name>. Returns a static buffer. */
static const char *top_dir(void)
{
	static char top[4096];
	char *p;
	ssize_t n;

	if (!access("examples/otel_ids.c", R_OK))
		return getcwd(top, sizeof(top)) ? top : ".";
	n = readlink("/proc/self/exe", top, sizeof(top) - 1);
	top[n > 0 ? n : 0] = '\0';
	p = strstr(top, "/build/tests/");
	if (p)
		*p = '\0';
	return top;
}

/* Runs cmd and puts its stdout in out; returns its exit status, or -1. */
static int run_capture(const char *cmd, char *out, size_t size)
{
	FILE *p = popen(cmd, "r");
	size_t n;
	int status;

	if (!p)
		return -1;
	n = fread(out, 1, size - 1, p);
	out[n] = '\0';
	status = pclose(p);
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static void test_otel_example_compiles_with_werror_and_prints_the_ids(void **state)
{
	char *dir = tmpdir_new("otel-ids");
	const char *top = top_dir();
	char *compile, cmd[8192], out[4096], exe[4200];

	(void)state;
	assert_non_null(dir);
	snprintf(exe, sizeof(exe), "%s/otel_ids", dir);
	assert_true(
		asprintf(&compile,
			 "cc -std=gnu11 -O1 -g -Wall -Wextra -Werror -I%s/include -I%s/hooks/c "
			 "%s/examples/otel_ids.c -L%s/build -lspanprof -Wl,-rpath,%s/build -o %s",
			 top, top, top, top, top, exe) > 0);
	if (system(compile) != 0)
		fail_msg("compiling the example failed: %s", compile);
	free(compile);

	snprintf(cmd, sizeof(cmd), "%s %s %s %s 'GET /cart'", exe, TRACE_HEX, SPAN_HEX, ROOT_HEX);
	assert_int_equal(run_capture(cmd, out, sizeof(out)), 0);
	assert_non_null(strstr(out, "trace_id=" TRACE_HEX "\n"));
	assert_non_null(strstr(out, "span_id=" SPAN_HEX "\n"));
	assert_non_null(strstr(out, "root_span_id=" ROOT_HEX "\n"));
	assert_non_null(strstr(out, "name=GET /cart\n"));

	/* Defaults: its own local root, so the root id is all zero. */
	assert_int_equal(run_capture(exe, out, sizeof(out)), 0);
	assert_non_null(strstr(out, "root_span_id=0000000000000000\n"));

	snprintf(cmd, sizeof(cmd), "%s %s 00f067aa0ba9 2>/dev/null", exe, TRACE_HEX);
	assert_int_equal(run_capture(cmd, out, sizeof(out)), 2);
	tmpdir_remove(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_otel_span_init_decodes_w3c_ids),
		cmocka_unit_test(test_otel_span_init_accepts_upper_case_and_own_root),
		cmocka_unit_test(test_otel_span_init_rejects_bad_hex_and_leaves_span_unchanged),
		cmocka_unit_test(test_otel_span_init_rejects_all_zero_ids),
		cmocka_unit_test(test_otel_name_is_cut_on_a_character_boundary),
		cmocka_unit_test(test_otel_example_compiles_with_werror_and_prints_the_ids),
	};

	return cmocka_run_group_tests_name("spanprof_otel", tests, NULL, NULL);
}
