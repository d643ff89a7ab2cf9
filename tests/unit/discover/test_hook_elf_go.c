// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Unit tests for hook_elf on Go executables: the Go hook found by its symbols, and without them
 * (stripped, stripped PIE) through .gopclntab and the hook's own semaphore load; a Go program
 * without the hook reported for its pprof labels only; one of an unknown Go version ("devel") read
 * from its DWARF, or refused when stripped. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "agent_proc.h"
#include "discover/go_runtime.h"
#include "discover/hook_elf.h"

static void read_bytes(const char *path, uint64_t off, unsigned char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	assert_true(fd >= 0);
	assert_int_equal(pread(fd, buf, len, (off_t)off), (ssize_t)len);
	close(fd);
}

/* The site must be the hook's `nop; nop5` and the semaphore the Go variable: count 0 (no agent
 * attached in this test... or another agent's count) followed by the tag. */
static void check_go_hook(const char *rel, struct hook_site *site)
{
	static const unsigned char pair[6] = { 0x90, 0x0f, 0x1f, 0x44, 0x00, 0x00 };
	const char *path = build_path(rel);
	unsigned char got[6], sem[4];

	memset(site, 0xff, sizeof(*site));
	assert_int_equal(hook_elf_find(path, site), 0);
	assert_true(site->is_go);
	read_bytes(path, site->site_offset, got, sizeof(got));
	assert_memory_equal(got, pair, sizeof(pair));
	assert_int_equal(site->nop5_offset, site->site_offset + 1);
	read_bytes(path, site->semaphore_offset, sem, sizeof(sem));
	assert_int_equal(sem[2] | sem[3] << 8, HOOK_GO_SEMAPHORE_TAG);
	assert_int_equal(site->go_labels_kind, GO_LABELS_MAP); /* go1.19 here */
	assert_int_equal(site->go_labels_offset, 360);
	assert_int_equal(site->go_m_offset, 48);
	assert_int_equal(site->go_curg_offset, 192);
}

static void test_go_hook_found_by_symbols(void **state)
{
	struct hook_site site;

	(void)state;
	if (!go_workload_built("tests/workloads/go_spans"))
		skip();
	check_go_hook("tests/workloads/go_spans", &site);
}

static void test_go_hook_found_without_symbols_at_the_same_place(void **state)
{
	struct hook_site full, stripped;

	(void)state;
	if (!go_workload_built("tests/workloads/go_spans") ||
	    !go_workload_built("tests/workloads/go_spans_stripped"))
		skip();
	check_go_hook("tests/workloads/go_spans", &full);
	check_go_hook("tests/workloads/go_spans_stripped", &stripped);
	/* -s -w drops symbols and DWARF: the code does not move (the data may, by the build
	 * flags recorded in .go.buildinfo; each semaphore was checked by its tag above). */
	assert_int_equal(stripped.site_offset, full.site_offset);
}

static void test_go_hook_found_in_stripped_pie(void **state)
{
	struct hook_site site;

	(void)state;
	if (!go_workload_built("tests/workloads/go_spans_pie"))
		skip();
	check_go_hook("tests/workloads/go_spans_pie", &site);
}

static void test_go_program_without_hook_is_reported_for_its_labels(void **state)
{
	struct hook_site site;

	(void)state;
	if (!go_workload_built("tests/workloads/go_pprof_labels"))
		skip();
	assert_int_equal(hook_elf_find(build_path("tests/workloads/go_pprof_labels"), &site), 0);
	assert_true(site.is_go);
	assert_int_equal(site.site_offset, 0);
	assert_int_equal(site.semaphore_offset, 0);
	assert_int_equal(site.go_labels_offset, 360);
	assert_int_equal(site.go_labels_kind, GO_LABELS_MAP);
}

/* A copy of rel at path whose .go.buildinfo names Go version "devel" (shorter than any release
 * string, so it fits in place: the length byte before the version is rewritten). */
static int copy_as_devel(const char *rel, const char *path)
{
	FILE *in = fopen(build_path(rel), "rb"), *out = fopen(path, "wb");
	static char buf[1 << 16];
	int ret = -1, patched = 0;
	size_t n, i;

	while (in && out && (n = fread(buf, 1, sizeof(buf), in)) > 0) {
		/* The header is 32 bytes ("\xff Go buildinf:", sizes, flags); then "\x08go1.19.8". */
		for (i = 33; !patched && i + 5 < n; i++)
			if (!memcmp(buf + i, "go1.", 4) && buf[i - 1] >= 6 && buf[i - 1] < 16 &&
			    !memcmp(buf + i - 33, "\xff Go buildinf:", 14)) {
				buf[i - 1] = 5;
				memcpy(buf + i, "devel", 5);
				patched = 1;
			}
		if (fwrite(buf, 1, n, out) != n)
			break;
	}
	if (in && out && patched && !ferror(in))
		ret = 0;
	if (in)
		fclose(in);
	if (out && fclose(out))
		ret = -1;
	return ret;
}

/* hook_elf_find() on a "devel" copy of rel. */
static int find_as_devel(const char *rel, struct hook_site *site)
{
	char path[] = "/tmp/spanprof-godevel-XXXXXX";
	int fd = mkstemp(path), err;

	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(copy_as_devel(rel, path), 0);
	memset(site, 0, sizeof(*site));
	err = hook_elf_find(path, site);
	unlink(path);
	return err;
}

/* A Go version the table does not hold: the layout is read from the executable's DWARF when it
 * has some (and must then be the one the table gives that toolchain), and without DWARF
 * (stripped) the file is refused, with its version for the log. */
static void test_go_program_of_unknown_version_uses_its_dwarf_or_is_refused(void **state)
{
	const char *newer = "tests/workloads/go1.26/go_reuse";
	struct hook_site site;

	(void)state;
	if (!go_workload_built("tests/workloads/go_spans") ||
	    !go_workload_built("tests/workloads/go_spans_stripped"))
		skip();
	/* Go 1.19: its labels are a map, not read from DWARF-only layouts; the rest is. */
	assert_int_equal(find_as_devel("tests/workloads/go_spans", &site), 0);
	assert_true(site.go_layout_from_dwarf);
	assert_string_equal(site.go_version, "devel");
	assert_true(site.site_offset != 0);
	assert_int_equal(site.go_labels_kind, GO_LABELS_NONE);
	assert_int_equal(site.go_m_offset, 48);
	assert_int_equal(site.go_curg_offset, 192);
	assert_int_equal(site.go_goid_offset, 152);
	/* Stripped: no DWARF, nothing to go by. */
	assert_int_equal(find_as_devel("tests/workloads/go_spans_stripped", &site),
			 -EPROTONOSUPPORT);
	assert_string_equal(site.go_version, "devel");
	assert_true(site.site_offset != 0); /* the hook was found, and is not used */
	if (access(build_path(newer), R_OK)) {
		printf("  skipped %s: not built (no Go 1.26 toolchain fetched)\n", newer);
		return;
	}
	assert_int_equal(find_as_devel(newer, &site), 0);
	assert_true(site.go_layout_from_dwarf);
	assert_int_equal(site.go_labels_kind, GO_LABELS_SLICE);
	assert_int_equal(site.go_labels_offset, 352);
	assert_int_equal(site.go_curg_offset, 184);
	assert_int_equal(site.go_goid_offset, 152);
}

/* A copy of rel whose .go.buildinfo magic is broken, so no Go version can be read from it. */
static int find_without_buildinfo(const char *rel, struct hook_site *site)
{
	char path[] = "/tmp/spanprof-gonoinfo-XXXXXX", buf[1 << 16];
	int fd = mkstemp(path), err, broken = 0;
	FILE *in = fopen(build_path(rel), "rb"), *out;
	size_t n, i;

	assert_true(fd >= 0);
	out = fdopen(fd, "wb");
	assert_non_null(in);
	assert_non_null(out);
	/* The magic is 16-byte aligned in the file, so it never straddles two reads. */
	while ((n = fread(buf, 1, sizeof(buf), in)) > 0) {
		for (i = 0; i + 14 <= n; i += 16)
			if (!memcmp(buf + i, "\xff Go buildinf:", 14)) {
				memcpy(buf + i, "\xff No buildinf:", 14);
				broken++;
			}
		assert_int_equal(fwrite(buf, 1, n, out), n);
	}
	fclose(in);
	assert_int_equal(fclose(out), 0);
	assert_true(broken > 0);
	memset(site, 0, sizeof(*site));
	err = hook_elf_find(path, site);
	unlink(path);
	return err;
}

/* A Go file with the hook but no readable version is refused (its goroutines could not be told
 * apart), and the log has something to say for the version. */
static void test_go_hook_without_a_readable_version_is_refused(void **state)
{
	struct hook_site site;

	(void)state;
	if (!go_workload_built("tests/workloads/go_spans"))
		skip();
	assert_int_equal(find_without_buildinfo("tests/workloads/go_spans", &site),
			 -EPROTONOSUPPORT);
	assert_true(site.site_offset != 0); /* the hook was found, and is not used */
	assert_string_equal(site.go_version, "version unreadable");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_go_hook_found_by_symbols),
		cmocka_unit_test(test_go_hook_found_without_symbols_at_the_same_place),
		cmocka_unit_test(test_go_hook_found_in_stripped_pie),
		cmocka_unit_test(test_go_program_without_hook_is_reported_for_its_labels),
		cmocka_unit_test(test_go_program_of_unknown_version_uses_its_dwarf_or_is_refused),
		cmocka_unit_test(test_go_hook_without_a_readable_version_is_refused),
	};

	return cmocka_run_group_tests_name("hook_elf_go", tests, NULL, NULL);
}
