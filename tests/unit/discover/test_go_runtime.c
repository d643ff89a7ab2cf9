// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Unit tests for go_runtime: the Go version read from the workload's .go.buildinfo (also when
 * stripped), the labels layout table by version, and the table checked against the runtime's
 * own DWARF (runtime.g.labels, g.m, g.goid, runtime.m.curg) of each toolchain on this machine. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
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

/* The Go version of a built workload, or -errno. */
static int version_of(const char *rel, char *buf, size_t len)
{
	int fd = open(build_path(rel), O_RDONLY | O_CLOEXEC), err;
	Elf *elf;

	if (fd < 0)
		return -errno;
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	err = elf ? go_runtime_version(elf, buf, len) : -ENOEXEC;
	if (elf)
		elf_end(elf);
	close(fd);
	return err;
}

static void test_go_version_is_read_from_buildinfo_even_stripped(void **state)
{
	char full[64], stripped[64], tiny[4];

	(void)state;
	if (access(build_path("tests/workloads/go_spans_stripped"), R_OK))
		skip();
	assert_int_equal(version_of("tests/workloads/go_spans", full, sizeof(full)), 0);
	assert_int_equal(strncmp(full, "go1.", 4), 0);
	assert_int_equal(
		version_of("tests/workloads/go_spans_stripped", stripped, sizeof(stripped)), 0);
	assert_string_equal(full, stripped);
	assert_int_equal(version_of("tests/workloads/go_spans", tiny, sizeof(tiny)), -ENOSPC);
	/* A C program (the agent) has no Go build info. */
	assert_int_equal(version_of("spanprof", full, sizeof(full)), -ENODATA);
}

static void test_labels_layout_by_version(void **state)
{
	struct go_labels_layout l;

	(void)state;
	assert_int_equal(go_runtime_labels_layout("go1.19.8", &l), 0);
	assert_int_equal(l.offset, 360);
	assert_int_equal(l.kind, GO_LABELS_MAP);
	assert_int_equal(go_runtime_labels_layout("go1.21.0", &l), 0);
	assert_int_equal(l.offset, 344);
	assert_int_equal(go_runtime_labels_layout("go1.23rc1", &l), 0);
	assert_int_equal(l.offset, 352);
	assert_int_equal(l.kind, GO_LABELS_MAP);
	assert_int_equal(go_runtime_labels_layout("go1.24.2", &l), 0);
	assert_int_equal(l.kind, GO_LABELS_SLICE);
	assert_int_equal(l.m_offset, 48);
	assert_int_equal(l.curg_offset, 192);
	assert_int_equal(l.goid_offset, 160);
	/* 1.25 moved m.curg (184) and g.goid back to 152; 1.26 moved labels again. */
	assert_int_equal(go_runtime_labels_layout("go1.25.0", &l), 0);
	assert_int_equal(l.offset, 344);
	assert_int_equal(l.kind, GO_LABELS_SLICE);
	assert_int_equal(l.curg_offset, 184);
	assert_int_equal(l.goid_offset, 152);
	assert_int_equal(go_runtime_labels_layout("go1.26.1", &l), 0);
	assert_int_equal(l.offset, 352);
	assert_int_equal(go_runtime_labels_layout("go1.27rc1", &l), -ENOTSUP);
	assert_int_equal(l.kind, GO_LABELS_NONE);
	assert_int_equal(l.goid_offset, 0);
	assert_int_equal(go_runtime_labels_layout("go1.17.13", &l), -ENOTSUP);
	assert_int_equal(go_runtime_labels_layout("devel go1.25-abc", &l), -ENOTSUP);
	assert_int_equal(go_runtime_labels_layout("go1.", &l), -ENOTSUP);
}

/* DW_AT_data_member_location of member in struct type (e.g. runtime.g), from binutils'
 * readelf (an independent DWARF reader; Go's DWARF is compressed). -1 when not found. */
static long dwarf_member(const char *binary, const char *type, const char *member)
{
	char cmd[2048], line[256];
	long off = -1;
	FILE *p;

	snprintf(cmd, sizeof(cmd),
		 "readelf --debug-dump=info '%s' 2>/dev/null | awk '/DW_TAG_structure_type/{s=0} "
		 "/DW_AT_name *: %s$/{s=1} s' | grep -A1 -E 'DW_AT_name *: %s$' | "
		 "sed -n 's/.*DW_AT_data_member_location: *//p' | head -1",
		 binary, type, member);
	p = popen(cmd, "r");
	if (!p)
		return -1;
	if (fgets(line, sizeof(line), p))
		off = strtol(line, NULL, 10);
	pclose(p);
	return off;
}

/* The table against the runtime DWARF of one toolchain's workload (rel under build/). Returns 0
 * when checked, -1 when the workload is not built. */
static int check_dwarf(const char *rel)
{
	const char *binary = build_path(rel);
	struct go_labels_layout l;
	char version[64];

	if (access(binary, R_OK)) {
		printf("  skipped %s: not built (its toolchain is not installed or fetched)\n",
		       rel);
		return -1;
	}
	assert_int_equal(version_of(rel, version, sizeof(version)), 0);
	assert_int_equal(go_runtime_labels_layout(version, &l), 0);
	printf("  %s: labels %u, m %u, curg %u, goid %u\n", version, l.offset, l.m_offset,
	       l.curg_offset, l.goid_offset);
	assert_int_equal(dwarf_member(binary, "runtime\\.g", "labels"), l.offset);
	assert_int_equal(dwarf_member(binary, "runtime\\.g", "m"), l.m_offset);
	assert_int_equal(dwarf_member(binary, "runtime\\.m", "curg"), l.curg_offset);
	assert_int_equal(dwarf_member(binary, "runtime\\.g", "goid"), l.goid_offset);
	return 0;
}

/* Debian 12's golang-go, and the newer toolchains the Makefile built workloads with. */
static void test_table_matches_the_runtime_dwarf_of_each_toolchain(void **state)
{
	const char *workloads[] = { "tests/workloads/go_spans", "tests/workloads/go1.24/go_reuse",
				    "tests/workloads/go1.25/go_reuse",
				    "tests/workloads/go1.26/go_reuse" };
	int checked = 0;
	size_t i;

	(void)state;
	if (system("readelf --version >/dev/null 2>&1")) {
		printf("SKIP: no readelf (binutils) to read the runtime's DWARF with\n");
		skip();
	}
	for (i = 0; i < sizeof(workloads) / sizeof(workloads[0]); i++)
		checked += !check_dwarf(workloads[i]);
	if (!checked)
		skip();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_go_version_is_read_from_buildinfo_even_stripped),
		cmocka_unit_test(test_labels_layout_by_version),
		cmocka_unit_test(test_table_matches_the_runtime_dwarf_of_each_toolchain),
	};

	return cmocka_run_group_tests_name("go_runtime", tests, NULL, NULL);
}
