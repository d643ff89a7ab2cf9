// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Unit tests for hook_elf on Go executables: the Go hook found by its symbols, and without them
 * (stripped, stripped PIE) through .gopclntab and the hook's own semaphore load; a Go program
 * without the hook reported for its pprof labels only; one of an unknown Go version refused. */
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

static int have(const char *rel)
{
	if (!access(build_path(rel), R_OK))
		return 1;
	printf("SKIP: %s missing (is golang-go installed?)\n", rel);
	return 0;
}

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
	if (!have("tests/workloads/go_spans"))
		skip();
	check_go_hook("tests/workloads/go_spans", &site);
}

static void test_go_hook_found_without_symbols_at_the_same_place(void **state)
{
	struct hook_site full, stripped;

	(void)state;
	if (!have("tests/workloads/go_spans") || !have("tests/workloads/go_spans_stripped"))
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
	if (!have("tests/workloads/go_spans_pie"))
		skip();
	check_go_hook("tests/workloads/go_spans_pie", &site);
}

static void test_go_program_without_hook_is_reported_for_its_labels(void **state)
{
	struct hook_site site;

	(void)state;
	if (!have("tests/workloads/go_pprof_labels"))
		skip();
	assert_int_equal(hook_elf_find(build_path("tests/workloads/go_pprof_labels"), &site), 0);
	assert_true(site.is_go);
	assert_int_equal(site.site_offset, 0);
	assert_int_equal(site.semaphore_offset, 0);
	assert_int_equal(site.go_labels_offset, 360);
	assert_int_equal(site.go_labels_kind, GO_LABELS_MAP);
}

/* A copy of rel whose .go.buildinfo names Go version 1.99 instead (same length), at path. */
static int copy_as_go_1_99(const char *rel, const char *path)
{
	FILE *in = fopen(build_path(rel), "rb"), *out = fopen(path, "wb");
	static char buf[1 << 16];
	int ret = -1, patched = 0;
	size_t n, i;

	while (in && out && (n = fread(buf, 1, sizeof(buf), in)) > 0) {
		/* The version follows the 32-byte header as "\x08go1.19.8": a varint length, text. */
		for (i = 0; !patched && i + 6 < n; i++)
			if (!memcmp(buf + i, "go1.", 4) && i > 0 && buf[i - 1] >= 6 &&
			    buf[i - 1] < 12 && buf[i + 4] >= '1' && buf[i + 4] <= '9' &&
			    buf[i + 5] >= '0' && buf[i + 5] <= '9' && i >= 32 &&
			    !memcmp(buf + i - 33, "\xff Go buildinf:", 14)) {
				buf[i + 4] = '9';
				buf[i + 5] = '9';
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

/* A Go version the layout table does not hold: refused, with the version for the log, both with
 * the hook linked and without (its labels would be read at guessed offsets). */
static void test_go_program_of_unknown_version_is_refused(void **state)
{
	const char *rels[] = { "tests/workloads/go_spans", "tests/workloads/go_pprof_labels" };
	char path[] = "/tmp/spanprof-go199-XXXXXX";
	struct hook_site site;
	size_t i;
	int fd;

	(void)state;
	if (!have(rels[0]) || !have(rels[1]))
		skip();
	for (i = 0; i < 2; i++) {
		fd = mkstemp(path);
		assert_true(fd >= 0);
		close(fd);
		assert_int_equal(copy_as_go_1_99(rels[i], path), 0);
		memset(&site, 0, sizeof(site));
		assert_int_equal(hook_elf_find(path, &site), -EPROTONOSUPPORT);
		assert_int_equal(strncmp(site.go_version, "go1.99", 6), 0);
		assert_int_equal(site.site_offset != 0, i == 0); /* the hook was found, not used */
		unlink(path);
		memcpy(path + sizeof(path) - 7, "XXXXXX", 6);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_go_hook_found_by_symbols),
		cmocka_unit_test(test_go_hook_found_without_symbols_at_the_same_place),
		cmocka_unit_test(test_go_hook_found_in_stripped_pie),
		cmocka_unit_test(test_go_program_without_hook_is_reported_for_its_labels),
		cmocka_unit_test(test_go_program_of_unknown_version_is_refused),
	};

	return cmocka_run_group_tests_name("hook_elf_go", tests, NULL, NULL);
}
