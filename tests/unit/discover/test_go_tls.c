// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Unit tests for go_tls: the g pointer's offset from FS base of the built Go workloads, checked
 * against readelf's PT_TLS and runtime.tlsg and against objdump's %fs displacement (internally
 * linked: -8; cgo: inside the TLS block; cgo stripped: the same offset, from the runtime's code;
 * a stripped cgo PIE refused),
 * and the TLS block size rule on crafted values. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
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
#include <elf.h>

#include "agent_proc.h"
#include "discover/go_tls.h"
#include "discover/hook_elf.h"
#include "util/elf_guard.h"

/* go_tls_g_offset() on a built file: its return value, the offset in *off. */
static int offset_in(const char *rel, int32_t *off)
{
	int fd = open(build_path(rel), O_RDONLY | O_CLOEXEC);
	Elf *elf;
	int err;

	assert_true(fd >= 0);
	elf_version(EV_CURRENT);
	elf = elf_guard_begin(fd);
	assert_non_null(elf);
	err = go_tls_g_offset(elf, fd, off);
	elf_end(elf);
	close(fd);
	return err;
}

/* The offset of a built file; asserts it is found. */
static int32_t offset_of(const char *rel)
{
	int32_t off = 0;

	assert_int_equal(offset_in(rel, &off), 0);
	return off;
}

/* First line of `cmd`'s output (through popen) that contains `needle`, or 0 when none. */
static int line_with(const char *cmd, const char *needle, char *line, size_t len)
{
	FILE *f = popen(cmd, "r");
	char rest[512];
	int found = 0;

	assert_non_null(f);
	while (!found && fgets(line, (int)len, f))
		found = strstr(line, needle) != NULL;
	while (fgets(rest, sizeof(rest), f))
		; /* read to the end: the command must not die of SIGPIPE */
	pclose(f);
	return found;
}

/* What readelf says the offset is: runtime.tlsg's value minus the TLS block size (variant II).
 * Returns 0 when the file has no PT_TLS. */
static int64_t offset_by_readelf(const char *path)
{
	char cmd[512], line[512], type[16];
	unsigned long long off, vaddr, paddr, filesz, memsz, align, value;
	uint64_t block;

	snprintf(cmd, sizeof(cmd), "readelf -lW '%s'", path);
	if (!line_with(cmd, " TLS ", line, sizeof(line)))
		return 0;
	assert_int_equal(sscanf(line, " %15s %llx %llx %llx %llx %llx %*s %llx", type, &off, &vaddr,
				&paddr, &filesz, &memsz, &align),
			 7);
	snprintf(cmd, sizeof(cmd), "readelf -sW '%s'", path);
	assert_true(line_with(cmd, " runtime.tlsg", line, sizeof(line)));
	assert_int_equal(sscanf(line, " %*s %llx", &value), 1);
	assert_int_equal(go_tls_block_size(memsz, vaddr, align, &block), 0);
	return (int64_t)value - (int64_t)block;
}

/* The displacement of the first `mov %fs:0x...,%r14` objdump shows (the compiler's g load). */
static int64_t offset_by_objdump(const char *path)
{
	char cmd[512], line[512];
	unsigned long long disp;
	char *p;

	snprintf(cmd, sizeof(cmd), "objdump -d --no-show-raw-insn '%s'", path);
	assert_true(line_with(cmd, "%fs:0xfff", line, sizeof(line)));
	p = strstr(line, "%fs:0x");
	assert_int_equal(sscanf(p, "%%fs:0x%llx", &disp), 1);
	return (int64_t)disp;
}

static void test_internally_linked_go_keeps_g_at_minus_8(void **state)
{
	(void)state;
	if (!go_workload_built("tests/workloads/go_spans") ||
	    !go_workload_built("tests/workloads/go_spans_pie"))
		skip();
	assert_int_equal(offset_by_readelf(build_path("tests/workloads/go_spans")), 0); /* none */
	assert_int_equal(offset_by_objdump(build_path("tests/workloads/go_spans")), -8);
	assert_int_equal(offset_of("tests/workloads/go_spans"), GO_TLS_G_INTERNAL);
	assert_int_equal(offset_of("tests/workloads/go_spans_stripped"), GO_TLS_G_INTERNAL);
	/* The PIE has a PT_TLS of runtime.tlsg alone and reads the offset through the GOT. */
	assert_int_equal(offset_of("tests/workloads/go_spans_pie"), GO_TLS_G_INTERNAL);
}

static void test_cgo_offset_is_runtime_tlsg_in_the_tls_block(void **state)
{
	const char *path;
	int64_t want;

	(void)state;
	if (!go_workload_built("tests/workloads/go_spans_cgo"))
		skip();
	path = build_path("tests/workloads/go_spans_cgo");
	want = offset_by_readelf(path);
	/* The workload's C thread-locals move runtime.tlsg: the test would prove nothing at -8. */
	assert_true(want < -8);
	assert_int_equal(offset_by_objdump(path), want);
	assert_int_equal(offset_of("tests/workloads/go_spans_cgo"), want);
}

static void test_stripped_cgo_offset_comes_from_the_runtime_code(void **state)
{
	const char *path;
	char cmd[512], line[512];

	(void)state;
	if (!go_workload_built("tests/workloads/go_spans_cgo") ||
	    !go_workload_built("tests/workloads/go_spans_cgo_stripped"))
		skip();
	path = build_path("tests/workloads/go_spans_cgo_stripped");
	snprintf(cmd, sizeof(cmd), "readelf -sW '%s'", path);
	assert_false(line_with(cmd, "runtime.tlsg", line, sizeof(line))); /* really stripped */
	assert_int_equal(offset_of("tests/workloads/go_spans_cgo_stripped"),
			 offset_of("tests/workloads/go_spans_cgo"));
	assert_int_equal(offset_by_objdump(path), offset_of("tests/workloads/go_spans_cgo"));
}

/* The cgo PIE reads g's offset from the GOT: the agent takes it from runtime.tlsg. */
static void test_cgo_pie_offset_is_runtime_tlsg_in_the_tls_block(void **state)
{
	(void)state;
	if (!go_workload_built("tests/workloads/go_spans_cgo_pie"))
		skip();
	assert_int_equal(offset_of("tests/workloads/go_spans_cgo_pie"),
			 offset_by_readelf(build_path("tests/workloads/go_spans_cgo_pie")));
	assert_true(offset_of("tests/workloads/go_spans_cgo_pie") < -8);
}

static void test_hook_site_carries_the_offset(void **state)
{
	struct hook_site site;

	(void)state;
	if (!go_workload_built("tests/workloads/go_spans_cgo"))
		skip();
	assert_int_equal(hook_elf_find(build_path("tests/workloads/go_spans_cgo"), &site), 0);
	assert_true(site.is_go);
	assert_true(site.site_offset != 0);
	assert_int_equal(site.go_g_offset, offset_of("tests/workloads/go_spans_cgo"));
	assert_int_equal(hook_elf_find(build_path("tests/workloads/go_spans"), &site), 0);
	assert_int_equal(site.go_g_offset, -8);
}

/* A stripped cgo PIE keeps neither symbols nor a .gopclntab section: refused, not guessed. */
static void test_stripped_cgo_pie_is_refused(void **state)
{
	struct hook_site site;
	int32_t off;

	(void)state;
	if (!go_workload_built("tests/workloads/go_spans_cgo_pie_stripped"))
		skip();
	assert_int_equal(offset_in("tests/workloads/go_spans_cgo_pie_stripped", &off), -ENOTSUP);
	assert_int_equal(
		hook_elf_find(build_path("tests/workloads/go_spans_cgo_pie_stripped"), &site),
		-ENOTSUP);
}

/* A copy of go_spans_cgo in a temporary file with its PT_TLS p_memsz or p_align replaced;
 * returns go_tls_g_offset()'s result on it. */
static int offset_with_tls(uint64_t memsz, uint64_t align)
{
	char tmp[] = "/tmp/go_tls_crafted.XXXXXX", cmd[PATH_MAX + 64];
	Elf64_Ehdr eh;
	Elf64_Phdr ph;
	int32_t off;
	Elf *elf;
	int fd, err;
	size_t i;

	fd = mkstemp(tmp);
	assert_true(fd >= 0);
	close(fd);
	snprintf(cmd, sizeof(cmd), "cp '%s' '%s'", build_path("tests/workloads/go_spans_cgo"), tmp);
	assert_int_equal(system(cmd), 0);
	fd = open(tmp, O_RDWR | O_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(pread(fd, &eh, sizeof(eh), 0), (ssize_t)sizeof(eh));
	for (i = 0; i < eh.e_phnum; i++) {
		off_t at = (off_t)(eh.e_phoff + i * eh.e_phentsize);

		assert_int_equal(pread(fd, &ph, sizeof(ph), at), (ssize_t)sizeof(ph));
		if (ph.p_type != PT_TLS)
			continue;
		ph.p_memsz = memsz;
		ph.p_align = align;
		assert_int_equal(pwrite(fd, &ph, sizeof(ph), at), (ssize_t)sizeof(ph));
	}
	close(fd);
	fd = open(tmp, O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	elf = elf_guard_begin(fd);
	assert_non_null(elf);
	err = go_tls_g_offset(elf, fd, &off);
	elf_end(elf);
	close(fd);
	unlink(tmp);
	return err;
}

/* PT_TLS values that cannot hold runtime.tlsg where .symtab puts it are refused. */
static void test_crafted_tls_segment_is_refused(void **state)
{
	(void)state;
	if (!go_workload_built("tests/workloads/go_spans_cgo"))
		skip();
	assert_int_equal(offset_with_tls(0x148, 0x40), 0); /* the real values: the copy works */
	assert_int_equal(offset_with_tls(0x40, 0x40), -ENOEXEC); /* tlsg at 0x40 past the end */
	assert_int_equal(offset_with_tls(4, 8), -ENOEXEC); /* no room for a pointer */
	assert_int_equal(offset_with_tls(0x148, 24), -ENOEXEC); /* align not a power of 2 */
	assert_int_equal(offset_with_tls(UINT64_MAX, 0x40), -ENOEXEC);
	assert_int_equal(offset_with_tls(0x148, 1ull << 63), -ENOEXEC);
}

static void test_block_size_rule_and_caps(void **state)
{
	uint64_t block = 0;

	(void)state;
	assert_int_equal(go_tls_block_size(0x148, 0x531d80, 0x40, &block), 0);
	assert_int_equal(block, 0x180);
	assert_int_equal(go_tls_block_size(8, 0, 8, &block), 0);
	assert_int_equal(block, 8);
	assert_int_equal(go_tls_block_size(8, 0, 0, &block), 0); /* align 0: none */
	assert_int_equal(block, 8);
	/* A start not aligned (vaddr 0x10 mod 0x40): the block keeps the same residue. */
	assert_int_equal(go_tls_block_size(0x20, 0x10, 0x40, &block), 0);
	assert_int_equal(block, 0x30);
	assert_int_equal((0 - block) & 0x3f, 0x10);
	assert_int_equal(go_tls_block_size(8, 0, 24, &block), -ENOEXEC); /* not a power of 2 */
	assert_int_equal(go_tls_block_size(8, 0, 1ull << 40, &block), -ENOEXEC);
	assert_int_equal(go_tls_block_size(UINT64_MAX, 0, 8, &block), -ENOEXEC);
	assert_int_equal(go_tls_block_size(GO_TLS_MAX_BLOCK + 1, 0, 8, &block), -ENOEXEC);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_internally_linked_go_keeps_g_at_minus_8),
		cmocka_unit_test(test_cgo_offset_is_runtime_tlsg_in_the_tls_block),
		cmocka_unit_test(test_stripped_cgo_offset_comes_from_the_runtime_code),
		cmocka_unit_test(test_cgo_pie_offset_is_runtime_tlsg_in_the_tls_block),
		cmocka_unit_test(test_hook_site_carries_the_offset),
		cmocka_unit_test(test_stripped_cgo_pie_is_refused),
		cmocka_unit_test(test_crafted_tls_segment_is_refused),
		cmocka_unit_test(test_block_size_rule_and_caps),
	};

	return cmocka_run_group_tests_name("go_tls", tests, NULL, NULL);
}
