// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Unit tests for preflight: kernel release parsing, and the whole check on this machine (which
 * must pass when run as root on a supported kernel with BTF). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>
#include <cmocka.h>

#include "agent/preflight.h"

static void expect_release(const char *release, int want_major, int want_minor)
{
	int major = -1, minor = -1;

	assert_int_equal(preflight_parse_release(release, &major, &minor), 0);
	assert_int_equal(major, want_major);
	assert_int_equal(minor, want_minor);
}

static void test_preflight_parses_release_with_patch_and_suffix(void **state)
{
	(void)state;
	expect_release("6.18.44-fc-v669", 6, 18);
	expect_release("5.11.0", 5, 11);
}

static void test_preflight_parses_release_without_patch(void **state)
{
	(void)state;
	expect_release("4.19", 4, 19);
}

static void test_preflight_rejects_garbage_release(void **state)
{
	const char *bad[] = { "", "garbage", "6", "6.", "v6.18", "x.18" };
	int major, minor;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(preflight_parse_release(bad[i], &major, &minor), -EINVAL);
}

static void test_preflight_check_passes_as_root(void **state)
{
	(void)state;
	if (geteuid() != 0) {
		print_message("preflight_check needs root (CAP_BPF, CAP_PERFMON): skipping\n");
		skip();
	}
	if (access("/sys/kernel/btf/vmlinux", R_OK)) {
		print_message("no /sys/kernel/btf/vmlinux on this kernel: skipping\n");
		skip();
	}
	assert_int_equal(preflight_check(), 0);
}

/* The running kernel, parsed here with uname and strtol (not with the code under test). */
static void running_kernel(int *major, int *minor)
{
	struct utsname uts;
	char *end;

	assert_int_equal(uname(&uts), 0);
	*major = (int)strtol(uts.release, &end, 10);
	assert_int_equal(*end, '.');
	*minor = (int)strtol(end + 1, NULL, 10);
}

static void test_preflight_nop5_optimization_follows_running_kernel(void **state)
{
	int major, minor, want = 0;

	(void)state;
	running_kernel(&major, &minor);
#if defined(__x86_64__)
	want = major > 6 || (major == 6 && minor >= 18);
#endif
	assert_int_equal(preflight_uprobe_nop5_optimized(), want);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_preflight_parses_release_with_patch_and_suffix),
		cmocka_unit_test(test_preflight_parses_release_without_patch),
		cmocka_unit_test(test_preflight_rejects_garbage_release),
		cmocka_unit_test(test_preflight_check_passes_as_root),
		cmocka_unit_test(test_preflight_nop5_optimization_follows_running_kernel),
	};

	return cmocka_run_group_tests_name("preflight", tests, NULL, NULL);
}
