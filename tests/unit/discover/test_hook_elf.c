// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Unit tests for hook_elf: the span hook compiled at run time into a PIE, a non-PIE executable, a
 * shared library and stripped copies, checked against the file's bytes and readelf; plus files
 * that must be refused (no hook, another provider, not ELF, truncated, missing). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <libgen.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "discover/hook_elf.h"
#include "fixture_build.h"
#include "tmpdir.h"

#define HOOK_CFLAGS "-O1 -g -Wl,--build-id"

struct hook_fixtures {
	char *root; /* the source tree (holds hooks/c and tests/fixtures) */
	char *dir; /* temp dir with everything built */
};

/* The source tree: from $SPANPROF_FIXTURES (tests/fixtures), the cwd (make runs tests from the
 * top), or the binary's place under build/tests/unit. */
static char *find_root(void)
{
	char exe[PATH_MAX], buf[PATH_MAX + 32];
	const char *env = getenv("SPANPROF_FIXTURES");
	ssize_t n;

	if (env) {
		snprintf(buf, sizeof(buf), "%s/../..", env);
		return realpath(buf, NULL);
	}
	if (!access("hooks/c/span_hook.c", R_OK))
		return realpath(".", NULL);
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n < 0)
		return NULL;
	exe[n] = '\0';
	snprintf(buf, sizeof(buf), "%s/../../..", dirname(exe));
	return realpath(buf, NULL);
}

static int build_all(const struct hook_fixtures *hf)
{
	const char *d = hf->dir, *r = hf->root;

	if (fixture_sh(
		    "cd %s && cc " HOOK_CFLAGS " -I%s/include -fPIE -pie %s/hooks/c/span_hook.c "
		    "%s/hooks/c/thread_record.c %s/hooks/c/process_ctx.c %s/hooks/c/hook_owner.c "
		    "%s/tests/fixtures/hookfix_main.c -o hook_pie",
		    d, r, r, r, r, r, r))
		return -1;
	if (fixture_sh("cd %s && cc " HOOK_CFLAGS " -I%s/include -fno-pie -no-pie "
		       "%s/hooks/c/span_hook.c %s/hooks/c/thread_record.c %s/hooks/c/process_ctx.c "
		       "%s/hooks/c/hook_owner.c %s/tests/fixtures/hookfix_main.c -o hook_nopie",
		       d, r, r, r, r, r, r))
		return -1;
	if (fixture_sh("cd %s && cc " HOOK_CFLAGS " -I%s/include -fPIC -shared "
		       "%s/hooks/c/span_hook.c %s/hooks/c/thread_record.c %s/hooks/c/process_ctx.c "
		       "%s/hooks/c/hook_owner.c -o libhook.so",
		       d, r, r, r, r, r))
		return -1;
	if (fixture_sh("cd %s && cp libhook.so libhook_stripped.so && strip libhook_stripped.so && "
		       "cp hook_pie hook_pie_stripped && strip hook_pie_stripped",
		       d))
		return -1;
	if (fixture_sh("cd %s && cc " HOOK_CFLAGS
		       " -DHOOKFIX_NO_HOOK %s/tests/fixtures/hookfix_main.c "
		       "-o plain && cc " HOOK_CFLAGS " %s/tests/fixtures/hookfix_other.c -o other",
		       d, r, r))
		return -1;
	return fixture_sh("cd %s && printf 'not an ELF file\\n' > notes.txt && : > empty && "
			  "head -c 300 libhook.so > trunc300.so && "
			  "head -c $(( $(stat -c %%s libhook.so) / 2 )) libhook.so > trunc_half.so",
			  d);
}

static int group_setup(void **state)
{
	struct hook_fixtures *hf = calloc(1, sizeof(*hf));

	if (!hf)
		return -1;
	hf->root = find_root();
	hf->dir = tmpdir_new("hookelf");
	if (!hf->root || !hf->dir || build_all(hf)) {
		tmpdir_remove(hf->dir);
		free(hf->root);
		free(hf);
		return -1;
	}
	*state = hf;
	return 0;
}

static int group_teardown(void **state)
{
	struct hook_fixtures *hf = *state;

	tmpdir_remove(hf->dir);
	free(hf->root);
	free(hf);
	return 0;
}

static char *fixture_path(const struct hook_fixtures *hf, const char *name, char *buf, size_t len)
{
	snprintf(buf, len, "%s/%s", hf->dir, name);
	return buf;
}

/* File offset of section `name` as readelf prints it (independent of libelf). */
static uint64_t readelf_section_offset(const char *file, const char *name)
{
	char cmd[PATH_MAX + 32], line[1024], sname[128], stype[64];
	uint64_t addr, off, found = UINT64_MAX;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "readelf -SW %s", file);
	p = popen(cmd, "r");
	assert_non_null(p);
	while (fgets(line, sizeof(line), p)) {
		const char *close = strchr(line, ']');

		if (close &&
		    sscanf(close + 1, "%127s %63s %" SCNx64 " %" SCNx64, sname, stype, &addr,
			   &off) == 4 &&
		    !strcmp(sname, name))
			found = off;
	}
	pclose(p);
	assert_true(found != UINT64_MAX);
	return found;
}

static void read_bytes(const char *file, uint64_t offset, unsigned char *buf, size_t len)
{
	int fd = open(file, O_RDONLY);

	assert_true(fd >= 0);
	assert_int_equal(pread(fd, buf, len, (off_t)offset), (ssize_t)len);
	close(fd);
}

/* Every successful lookup must land on the hook's `nop; nop5` and its semaphore in .probes. */
static void check_hook_found(const struct hook_fixtures *hf, const char *name)
{
	static const unsigned char want[6] = { 0x90, 0x0f, 0x1f, 0x44, 0x00, 0x00 };
	struct hook_site site;
	unsigned char got[6];
	char path[PATH_MAX];

	fixture_path(hf, name, path, sizeof(path));
	memset(&site, 0xff, sizeof(site));
	assert_int_equal(hook_elf_find(path, &site), 0);
#if defined(__x86_64__)
	read_bytes(path, site.site_offset, got, sizeof(got));
	assert_memory_equal(got, want, sizeof(want));
	assert_int_equal(site.nop5_offset, site.site_offset + 1);
#else
	(void)want;
	(void)got;
	assert_int_equal(site.nop5_offset, 0);
#endif
	assert_true(site.semaphore_offset != 0);
	assert_int_equal(site.semaphore_offset, readelf_section_offset(path, ".probes"));
}

static void test_hook_elf_finds_nop5_site_in_pie_executable(void **state)
{
	check_hook_found(*state, "hook_pie");
}

static void test_hook_elf_finds_nop5_site_in_nopie_executable(void **state)
{
	check_hook_found(*state, "hook_nopie");
}

static void test_hook_elf_finds_nop5_site_in_shared_library(void **state)
{
	check_hook_found(*state, "libhook.so");
}

static void test_hook_elf_finds_nop5_site_in_stripped_shared_library(void **state)
{
	check_hook_found(*state, "libhook_stripped.so");
}

static void test_hook_elf_finds_nop5_site_in_stripped_executable(void **state)
{
	check_hook_found(*state, "hook_pie_stripped");
}

static void test_hook_elf_stripped_copy_gives_same_offsets(void **state)
{
	const struct hook_fixtures *hf = *state;
	struct hook_site full, stripped;
	char path[PATH_MAX];

	assert_int_equal(hook_elf_find(fixture_path(hf, "libhook.so", path, sizeof(path)), &full),
			 0);
	assert_int_equal(hook_elf_find(fixture_path(hf, "libhook_stripped.so", path, sizeof(path)),
				       &stripped),
			 0);
	/* strip drops non-loaded sections but never moves loaded code or data */
	assert_int_equal(stripped.site_offset, full.site_offset);
	assert_int_equal(stripped.semaphore_offset, full.semaphore_offset);
}

static void expect_error(const struct hook_fixtures *hf, const char *name, int want)
{
	struct hook_site site;
	char path[PATH_MAX];

	assert_int_equal(hook_elf_find(fixture_path(hf, name, path, sizeof(path)), &site), want);
}

static void test_hook_elf_reports_enodata_for_elf_without_hook(void **state)
{
	expect_error(*state, "plain", -ENODATA);
}

static void test_hook_elf_ignores_note_of_other_provider(void **state)
{
	const struct hook_fixtures *hf = *state;
	char path[PATH_MAX], cmd[PATH_MAX + 64];

	/* the fixture really carries a stapsdt note (else the test would prove nothing) */
	snprintf(cmd, sizeof(cmd), "readelf -n %s | grep -q 'Provider: other'",
		 fixture_path(hf, "other", path, sizeof(path)));
	assert_int_equal(fixture_sh("%s", cmd), 0);
	expect_error(hf, "other", -ENODATA);
}

static void test_hook_elf_reports_enoexec_for_text_and_empty_files(void **state)
{
	expect_error(*state, "notes.txt", -ENOEXEC);
	expect_error(*state, "empty", -ENOEXEC);
}

static void test_hook_elf_reports_enoent_for_missing_file(void **state)
{
	expect_error(*state, "no-such-file.so", -ENOENT);
}

static void check_truncated(const struct hook_fixtures *hf, const char *name)
{
	struct hook_site site;
	char path[PATH_MAX];
	int err;

	err = hook_elf_find(fixture_path(hf, name, path, sizeof(path)), &site);
	assert_true(err == -ENOEXEC || err == -ENODATA);
}

static void test_hook_elf_rejects_truncated_shared_library(void **state)
{
	check_truncated(*state, "trunc300.so");
	check_truncated(*state, "trunc_half.so");
}

static void test_hook_elf_find_fd_matches_find_by_path(void **state)
{
	const char *names[] = { "hook_pie", "hook_nopie", "libhook.so" };
	const struct hook_fixtures *hf = *state;
	struct hook_site by_path, by_fd;
	char path[PATH_MAX];
	size_t i;
	int fd;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		fixture_path(hf, names[i], path, sizeof(path));
		assert_int_equal(hook_elf_find(path, &by_path), 0);
		fd = open(path, O_RDONLY);
		assert_true(fd >= 0);
		memset(&by_fd, 0xff, sizeof(by_fd));
		assert_int_equal(hook_elf_find_fd(fd, &by_fd), 0);
		assert_int_equal(by_fd.site_offset, by_path.site_offset);
		assert_int_equal(by_fd.nop5_offset, by_path.nop5_offset);
		assert_int_equal(by_fd.semaphore_offset, by_path.semaphore_offset);
		/* the fd is the caller's: still open afterwards */
		assert_true(fcntl(fd, F_GETFD) >= 0);
		close(fd);
	}
}

static void test_hook_elf_find_fd_reports_same_errors_as_path(void **state)
{
	const struct hook_fixtures *hf = *state;
	struct hook_site site;
	char path[PATH_MAX];
	int fd;

	fd = open(fixture_path(hf, "notes.txt", path, sizeof(path)), O_RDONLY);
	assert_true(fd >= 0);
	assert_int_equal(hook_elf_find_fd(fd, &site), -ENOEXEC);
	close(fd);
	fd = open(fixture_path(hf, "plain", path, sizeof(path)), O_RDONLY);
	assert_true(fd >= 0);
	assert_int_equal(hook_elf_find_fd(fd, &site), -ENODATA);
	close(fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hook_elf_finds_nop5_site_in_pie_executable),
		cmocka_unit_test(test_hook_elf_finds_nop5_site_in_nopie_executable),
		cmocka_unit_test(test_hook_elf_finds_nop5_site_in_shared_library),
		cmocka_unit_test(test_hook_elf_finds_nop5_site_in_stripped_shared_library),
		cmocka_unit_test(test_hook_elf_finds_nop5_site_in_stripped_executable),
		cmocka_unit_test(test_hook_elf_stripped_copy_gives_same_offsets),
		cmocka_unit_test(test_hook_elf_reports_enodata_for_elf_without_hook),
		cmocka_unit_test(test_hook_elf_ignores_note_of_other_provider),
		cmocka_unit_test(test_hook_elf_reports_enoexec_for_text_and_empty_files),
		cmocka_unit_test(test_hook_elf_reports_enoent_for_missing_file),
		cmocka_unit_test(test_hook_elf_rejects_truncated_shared_library),
		cmocka_unit_test(test_hook_elf_find_fd_matches_find_by_path),
		cmocka_unit_test(test_hook_elf_find_fd_reports_same_errors_as_path),
	};

	return cmocka_run_group_tests_name("hook_elf", tests, group_setup, group_teardown);
}
