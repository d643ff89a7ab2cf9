// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Unit tests for proc_maps: parsing maps text (executable mappings only) and reading a real
 * process's maps. */
#define _GNU_SOURCE
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include <cmocka.h>

#include "discover/proc_maps.h"
#include "tmpdir.h"

static const char maps_text[] =
	"7f0000002000-7f0000003000 r-xp 00002000 fd:01 1234                       /usr/lib/libz.so\n"
	"55550000-55551000 r--p 00000000 fd:01 99 /usr/bin/app\n"
	"55551000-55559000 r-xp 00001000 fd:01 99 /usr/bin/app\n"
	"7f0000009000-7f000000a000 rwxp 00000000 00:00 0 \n"
	"7ffd1000-7ffd3000 r-xp 00000000 00:00 0                          [vdso]\n"
	"7f1000000000-7f1000001000 r-xp 00000000 08:02 77 /tmp/my lib.so (deleted)\n";

static void test_proc_maps_keeps_only_executable_mappings_sorted(void **state)
{
	struct proc_maps maps;

	(void)state;
	assert_int_equal(proc_maps_parse(maps_text, &maps), 0);
	assert_int_equal(maps.count, 4);
	assert_int_equal(maps.maps[0].start, 0x55551000);
	assert_int_equal(maps.maps[0].end, 0x55559000);
	assert_int_equal(maps.maps[0].offset, 0x1000);
	assert_int_equal(maps.maps[0].dev, makedev(0xfd, 1));
	assert_int_equal(maps.maps[0].inode, 99);
	assert_string_equal(maps.maps[0].path, "/usr/bin/app");
	assert_string_equal(maps.maps[1].path, "[vdso]");
	assert_int_equal(maps.maps[1].dev, 0);
	assert_int_equal(maps.maps[1].inode, 0);
	assert_string_equal(maps.maps[2].path, "/usr/lib/libz.so");
	assert_string_equal(maps.maps[3].path, "/tmp/my lib.so (deleted)");
	proc_maps_release(&maps);
	assert_int_equal(maps.count, 0);
	assert_null(maps.maps);
}

/* Anonymous executable memory (no path) is kept apart, adjacent ranges merged; a named one
 * ([anon:NAME]) is a pseudo file like [vdso]; non-executable memory is left out. */
static void test_proc_maps_keeps_anonymous_code_apart_merged(void **state)
{
	const char *text = "7f0000000000-7f0000001000 r-xp 00000000 00:00 0 \n"
			   "7f0000001000-7f0000003000 r-xp 00000000 00:00 0\n"
			   "7f0000003000-7f0000004000 rw-p 00000000 00:00 0 \n"
			   "7f0000004000-7f0000005000 rwxp 00000000 00:00 0 \n"
			   "7f0000006000-7f0000007000 r-xp 00000000 00:00 0 [anon:jit]\n"
			   "7f0000007000-7f0000008000 r-xp 00000000 fd:01 9 /usr/lib/x.so\n"
			   "7f0000008000-7f0000009000 --xp 00000000 00:00 0 \n";
	struct proc_maps maps;

	(void)state;
	assert_int_equal(proc_maps_parse(text, &maps), 0);
	assert_int_equal(maps.count, 2);
	assert_string_equal(maps.maps[0].path, "[anon:jit]");
	assert_string_equal(maps.maps[1].path, "/usr/lib/x.so");
	assert_int_equal(maps.anon_count, 3);
	assert_int_equal(maps.anon[0].start, 0x7f0000000000ull);
	assert_int_equal(maps.anon[0].end, 0x7f0000003000ull); /* two lines, one range */
	assert_int_equal(maps.anon[1].start, 0x7f0000004000ull);
	assert_int_equal(maps.anon[1].end, 0x7f0000005000ull);
	assert_int_equal(maps.anon[2].start, 0x7f0000008000ull);
	assert_null(proc_maps_find(&maps, 0x7f0000000800ull)); /* found through perf maps */
	proc_maps_release(&maps);
	assert_int_equal(maps.anon_count, 0);
	assert_null(maps.anon);
}

/* The kernel escapes a newline in a path as \012 (and nothing else): it is decoded. */
static void test_proc_maps_decodes_escaped_newline_in_path(void **state)
{
	const char *text =
		"7f0000000000-7f0000001000 r-xp 00000000 08:01 42 /tmp/new\\012line/x.so\n"
		"7f0000002000-7f0000003000 r-xp 00000000 08:01 43 /tmp/a\\01b.so\n";
	struct proc_maps maps;

	(void)state;
	assert_int_equal(proc_maps_parse(text, &maps), 0);
	assert_int_equal(maps.count, 2);
	assert_string_equal(maps.maps[0].path, "/tmp/new\nline/x.so");
	assert_string_equal(maps.maps[1].path, "/tmp/a\\01b.so");
	proc_maps_release(&maps);
}

static void test_proc_maps_find_uses_half_open_ranges(void **state)
{
	struct proc_maps maps;

	(void)state;
	assert_int_equal(proc_maps_parse(maps_text, &maps), 0);
	assert_string_equal(proc_maps_find(&maps, 0x55551000)->path, "/usr/bin/app");
	assert_string_equal(proc_maps_find(&maps, 0x55558fff)->path, "/usr/bin/app");
	assert_null(proc_maps_find(&maps, 0x55559000));
	assert_null(proc_maps_find(&maps, 0x1000));
	assert_string_equal(proc_maps_find(&maps, 0x7ffd2000)->path, "[vdso]");
	proc_maps_release(&maps);
}

static void test_proc_maps_rejects_malformed_lines(void **state)
{
	const char *bad[] = {
		"garbage\n",
		"1000-2000 r-xp\n",
		"2000-1000 r-xp 00000000 fd:01 1 /x\n",
		"55551000-55559000 r-xp 00001000 fd:01 99 /ok\nzz-yy r-xp 0 0:0 0 /bad\n",
	};
	struct proc_maps maps;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(proc_maps_parse(bad[i], &maps), -EINVAL);
		assert_int_equal(maps.count, 0);
		assert_null(maps.maps);
	}
	assert_int_equal(proc_maps_parse("", &maps), 0);
	assert_int_equal(maps.count, 0);
}

static void test_proc_maps_reads_own_process(void **state)
{
	const struct proc_map *m;
	struct proc_maps maps;

	(void)state;
	assert_int_equal(proc_maps_read(getpid(), &maps), 0);
	m = proc_maps_find(&maps, (uint64_t)(uintptr_t)test_proc_maps_reads_own_process);
	assert_non_null(m);
	assert_non_null(strstr(m->path, "test_proc_maps"));
	assert_true(m->inode != 0);
	proc_maps_release(&maps);
}

static void test_proc_maps_reports_vanished_pid(void **state)
{
	char *root = tmpdir_new("procroot");
	struct proc_maps maps;

	(void)state;
	assert_non_null(root);
	assert_int_equal(proc_maps_read_at(root, 4242, &maps), -ENOENT);
	assert_int_equal(maps.count, 0);
	tmpdir_remove(root);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_proc_maps_keeps_only_executable_mappings_sorted),
		cmocka_unit_test(test_proc_maps_decodes_escaped_newline_in_path),
		cmocka_unit_test(test_proc_maps_find_uses_half_open_ranges),
		cmocka_unit_test(test_proc_maps_rejects_malformed_lines),
		cmocka_unit_test(test_proc_maps_keeps_anonymous_code_apart_merged),
		cmocka_unit_test(test_proc_maps_reads_own_process),
		cmocka_unit_test(test_proc_maps_reports_vanished_pid),
	};

	return cmocka_run_group_tests_name("proc_maps", tests, NULL, NULL);
}
