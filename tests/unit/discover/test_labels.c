// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Unit tests for labels: service-name precedence, percent-decoding, truncation, a fake proc root,
 * and the hex helpers. */
#define _GNU_SOURCE
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "discover/labels.h"
#include "tmpdir.h"
#include "text_file.h"

/* Environ blocks are NUL-separated; sizeof - 1 drops the literal's own final NUL. */
#define ENV(lit) (lit), sizeof(lit) - 1

static char out[LABELS_SERVICE_MAX];

/* The service name for an environ block and exe name, asserting success. */
static const char *service_of(const char *env, size_t len, const char *exe)
{
	assert_int_equal(labels_service_from_environ(env, len, exe, out, sizeof(out)), 0);
	return out;
}

static void test_labels_prefers_otel_service_name(void **state)
{
	(void)state;
	assert_string_equal(service_of(ENV("A=1\0OTEL_SERVICE_NAMEX=no\0"
					   "OTEL_SERVICE_NAME=checkout\0"
					   "OTEL_RESOURCE_ATTRIBUTES=service.name=other\0"),
				       "exe"),
			    "checkout");
}

static void test_labels_skips_empty_otel_service_name(void **state)
{
	(void)state;
	assert_string_equal(service_of(ENV("OTEL_SERVICE_NAME=\0"
					   "OTEL_RESOURCE_ATTRIBUTES=service.name=cart\0"),
				       "exe"),
			    "cart");
}

static void test_labels_decodes_resource_attribute_service_name(void **state)
{
	(void)state;
	assert_string_equal(service_of(ENV("OTEL_RESOURCE_ATTRIBUTES=deployment.environment=prod, "
					   "service.name = cart%20svc%2Cv2%3d%C3%A9 ,x=y\0"),
				       "exe"),
			    "cart svc,v2=\xc3\xa9");
}

static void test_labels_keeps_malformed_percent_escapes(void **state)
{
	(void)state;
	assert_string_equal(
		service_of(ENV("OTEL_RESOURCE_ATTRIBUTES=service.name=a%zz%4\0"), "exe"), "a%zz%4");
	/* A decoded byte that is not UTF-8 must not reach series labels. */
	assert_string_equal(service_of(ENV("OTEL_RESOURCE_ATTRIBUTES=service.name=x%FFy\0"), "exe"),
			    "x?y");
}

static void test_labels_falls_back_to_exe_name(void **state)
{
	(void)state;
	assert_string_equal(service_of(ENV("PATH=/bin\0"), "nginx"), "nginx");
	assert_string_equal(service_of(ENV("OTEL_RESOURCE_ATTRIBUTES="
					   "service.namespace=shop,service.name=\0"),
				       "nginx"),
			    "nginx");
	assert_int_equal(labels_service_from_environ(NULL, 0, "nginx", out, sizeof(out)), 0);
	assert_string_equal(out, "nginx");
	assert_int_equal(labels_service_from_environ(NULL, 0, "", out, sizeof(out)), 0);
	assert_string_equal(out, "unknown_service");
}

static void test_labels_first_occurrence_wins_and_last_entry_needs_no_nul(void **state)
{
	(void)state;
	assert_string_equal(
		service_of(ENV("OTEL_SERVICE_NAME=first\0OTEL_SERVICE_NAME=second\0"), "exe"),
		"first");
	assert_int_equal(labels_service_from_environ("OTEL_SERVICE_NAME=unterminated", 30, "exe",
						     out, sizeof(out)),
			 0);
	assert_string_equal(out, "unterminated");
}

static void test_labels_truncates_at_character_boundary(void **state)
{
	char small[6];

	(void)state;
	assert_int_equal(labels_service_from_environ(NULL, 0, "checkout", small, 4), 0);
	assert_string_equal(small, "che");
	/* "abc\xc3\xa9" needs 6 bytes; with 5 the split é is dropped whole. */
	assert_int_equal(labels_service_from_environ(NULL, 0, "abc\xc3\xa9", small, 5), 0);
	assert_string_equal(small, "abc");
	assert_int_equal(labels_service_from_environ(NULL, 0, "abc\xc3\xa9", small, 6), 0);
	assert_string_equal(small, "abc\xc3\xa9");
	assert_int_equal(labels_service_from_environ(NULL, 0, "x", NULL, 4), -EINVAL);
	assert_int_equal(labels_service_from_environ(NULL, 0, "x", small, 0), -EINVAL);
}

static int setup_proc(void **state)
{
	*state = tmpdir_new("labels");
	return *state ? 0 : -1;
}

static int teardown_proc(void **state)
{
	tmpdir_remove(*state);
	return 0;
}

static void test_labels_reads_fake_proc_root(void **state)
{
	const char *root = *state;
	char path[4096];

	proc_file_write(root, 100, "environ", ENV("HOME=/\0OTEL_SERVICE_NAME=payments\0"));
	proc_file_write(root, 100, "comm", "worker\n", 7);
	assert_int_equal(labels_service_for_pid(root, 100, out, sizeof(out)), 0);
	assert_string_equal(out, "payments");

	proc_file_write(root, 200, "environ", ENV("HOME=/\0"));
	proc_file_write(root, 200, "comm", "worker\n", 7);
	assert_int_equal(labels_service_for_pid(root, 200, out, sizeof(out)), 0);
	assert_string_equal(out, "worker");

	/* Empty comm: the basename of the exe link, without " (deleted)". */
	proc_file_write(root, 300, "environ", "", 0);
	proc_file_write(root, 300, "comm", "", 0);
	snprintf(path, sizeof(path), "%s/300/exe", root);
	assert_int_equal(symlink("/opt/app/bin/api-server (deleted)", path), 0);
	assert_int_equal(labels_service_for_pid(root, 300, out, sizeof(out)), 0);
	assert_string_equal(out, "api-server");

	assert_int_equal(labels_service_for_pid(root, 400, out, sizeof(out)), -ENOENT);
	assert_int_equal(labels_service_for_pid(root, 0, out, sizeof(out)), -EINVAL);
}

/* The kernel cuts comm at 15 bytes: the name comes from the executable's file name, unless comm
 * is not a cut of it (a script's comm is the script, its exe the interpreter). */
static void test_labels_names_a_process_after_its_executable(void **state)
{
	const char *root = *state;
	char path[4096];

	proc_file_write(root, 600, "environ", "", 0);
	proc_file_write(root, 600, "comm", "go_spans_stripp\n", 16);
	snprintf(path, sizeof(path), "%s/600/exe", root);
	assert_int_equal(symlink("/build/tests/go_spans_stripped", path), 0);
	assert_int_equal(labels_service_for_pid(root, 600, out, sizeof(out)), 0);
	assert_string_equal(out, "go_spans_stripped");

	proc_file_write(root, 700, "environ", "", 0);
	proc_file_write(root, 700, "comm", "nightly-job.sh\n", 15);
	snprintf(path, sizeof(path), "%s/700/exe", root);
	assert_int_equal(symlink("/usr/bin/bash", path), 0);
	assert_int_equal(labels_service_for_pid(root, 700, out, sizeof(out)), 0);
	assert_string_equal(out, "nightly-job.sh");

	proc_file_write(root, 800, "environ", "", 0);
	proc_file_write(root, 800, "comm", "renamed-worker0\n", 16); /* prctl(PR_SET_NAME) */
	snprintf(path, sizeof(path), "%s/800/exe", root);
	assert_int_equal(symlink("/usr/bin/python3.11", path), 0);
	assert_int_equal(labels_service_for_pid(root, 800, out, sizeof(out)), 0);
	assert_string_equal(out, "renamed-worker0");
}

/* service_name may be as long as the server takes (2048 bytes), so it matches the trace's
 * service.name whole; only a longer one is cut. */
static void test_labels_keeps_service_names_up_to_2048_bytes(void **state)
{
	static char env[4200];
	size_t n = strlen("OTEL_SERVICE_NAME=");

	(void)state;
	memcpy(env, "OTEL_SERVICE_NAME=", n);
	memset(env + n, 's', 2048);
	assert_int_equal(labels_service_from_environ(env, n + 2048, "exe", out, sizeof(out)), 0);
	assert_int_equal(strlen(out), 2048);
	memset(env + n, 't', 3000);
	assert_int_equal(labels_service_from_environ(env, n + 3000, "exe", out, sizeof(out)), 0);
	assert_int_equal(strlen(out), 2048);
	assert_int_equal(out[2047], 't');
}

/* Only the first 64 KiB of environ is read: a variable past it is not seen. */
static void test_labels_bounds_environ_read(void **state)
{
	const char *root = *state;
	const char *var = "OTEL_SERVICE_NAME=far";
	size_t fill = 70 * 1024, len = fill + strlen(var) + 1;
	char *env = malloc(len);

	assert_non_null(env);
	memset(env, 'x', fill);
	memcpy(env, "PAD=", 4);
	env[fill - 1] = '\0';
	memcpy(env + fill, var, strlen(var) + 1);
	proc_file_write(root, 500, "environ", env, len);
	proc_file_write(root, 500, "comm", "near\n", 5);
	free(env);
	assert_int_equal(labels_service_for_pid(root, 500, out, sizeof(out)), 0);
	assert_string_equal(out, "near");
}

/* Newline, ESC, other C0 controls, DEL, C1 controls (U+0085, U+009B) and broken UTF-8 each
 * become one '?'; printable text, including multi-byte characters, stays. */
static void test_labels_clean_replaces_control_characters(void **state)
{
	char s[] = "a\nb\x1b[31mc\x7f\xc2\x85\xc2\x9b\xc2\xa0"
		   "d\te\x01\xff\xe2\x82"
		   "f\rg\xe2\x82\xac";

	(void)state;
	labels_clean(s);
	assert_string_equal(s, "a?b?[31mc???\xc2\xa0"
			       "d?e????f?g\xe2\x82\xac");
}

/* Whatever the application sets, the service name is one clean line. */
static void test_labels_service_name_has_no_control_characters(void **state)
{
	(void)state;
	assert_string_equal(
		service_of(ENV("OTEL_SERVICE_NAME=shop\nlevel=error \x1b[2J\x9b\0"), "exe"),
		"shop?level=error ?[2J?");
	assert_string_equal(
		service_of(ENV("OTEL_RESOURCE_ATTRIBUTES=service.name=a%0Ab%1Bc%C2%85\0"), "exe"),
		"a?b?c?");
	assert_string_equal(service_of(ENV("X=1\0"), "bad\ncomm\x7f"), "bad?comm?");
}

static void test_labels_hex_and_zero(void **state)
{
	const uint8_t id[8] = { 0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef };
	const uint8_t zero[16] = { 0 };
	char hex[17];

	(void)state;
	labels_hex(id, sizeof(id), hex);
	assert_string_equal(hex, "0123456789abcdef");
	labels_hex(id, 0, hex);
	assert_string_equal(hex, "");
	assert_true(labels_is_zero(zero, sizeof(zero)));
	assert_false(labels_is_zero(id, sizeof(id)));
	assert_true(labels_is_zero(id, 0));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_labels_prefers_otel_service_name),
		cmocka_unit_test(test_labels_skips_empty_otel_service_name),
		cmocka_unit_test(test_labels_decodes_resource_attribute_service_name),
		cmocka_unit_test(test_labels_keeps_malformed_percent_escapes),
		cmocka_unit_test(test_labels_falls_back_to_exe_name),
		cmocka_unit_test(test_labels_first_occurrence_wins_and_last_entry_needs_no_nul),
		cmocka_unit_test(test_labels_truncates_at_character_boundary),
		cmocka_unit_test_setup_teardown(test_labels_reads_fake_proc_root, setup_proc,
						teardown_proc),
		cmocka_unit_test_setup_teardown(test_labels_names_a_process_after_its_executable,
						setup_proc, teardown_proc),
		cmocka_unit_test(test_labels_keeps_service_names_up_to_2048_bytes),
		cmocka_unit_test_setup_teardown(test_labels_bounds_environ_read, setup_proc,
						teardown_proc),
		cmocka_unit_test(test_labels_clean_replaces_control_characters),
		cmocka_unit_test(test_labels_service_name_has_no_control_characters),
		cmocka_unit_test(test_labels_hex_and_zero),
	};

	return cmocka_run_group_tests_name("labels", tests, NULL, NULL);
}
