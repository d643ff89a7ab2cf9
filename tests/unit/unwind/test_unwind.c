// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Unit tests for unwind (the per-process side) with real BPF maps and a fixture library: what a
 * process's published mapping array holds (sorted, padded for the branch-free BPF search,
 * [vsyscall] left out, a file still being built marked pending, then its table and load bias),
 * anonymous code ranges published for frame-pointer walking, and the entry leaving the map when
 * the process is forgotten. */
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
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include <bpf/bpf.h>

#include "unwind/unwind.h"
#include "unwind_fixture.h"

#define LIB_BASE 0x7f0000000000ull

struct ctx {
	struct unwind_fixture uf;
	struct unwind_options o;
	struct unwind *u;
};

static int group_setup(void **state)
{
	static struct ctx c;

	*state = &c;
	if (geteuid() != 0)
		return 0;
	return unwind_fixture_build(&c.uf);
}

static int group_teardown(void **state)
{
	struct ctx *c = *state;

	unwind_fixture_release(&c->uf);
	return 0;
}

static void open_unwind(struct ctx *c)
{
	if (geteuid() != 0 || !c->uf.dir)
		skip();
	c->o.fds.rules = bpf_map_create(BPF_MAP_TYPE_ARRAY, "t_rules", 4,
					sizeof(struct spanprof_unwind_rule),
					SPANPROF_UNWIND_MAX_RULES, NULL);
	c->o.fds.chunks = bpf_map_create(BPF_MAP_TYPE_ARRAY, "t_chunks", 4,
					 sizeof(struct spanprof_unwind_chunk), 64, NULL);
	c->o.fds.tables = bpf_map_create(BPF_MAP_TYPE_ARRAY, "t_tables", 4,
					 sizeof(struct spanprof_unwind_table),
					 SPANPROF_UNWIND_MAX_TABLES, NULL);
	c->o.procs_fd = bpf_map_create(BPF_MAP_TYPE_HASH, "t_procs", 4,
				       sizeof(struct spanprof_unwind_proc), 16, NULL);
	assert_true(c->o.fds.rules >= 0 && c->o.fds.chunks >= 0 && c->o.fds.tables >= 0 &&
		    c->o.procs_fd >= 0);
	/* Room for every file this test process maps (a poll may publish its real maps; under
	 * ASan they include the sanitizer runtimes), so no table the test looks at is evicted. */
	c->o.nchunks = 64;
	c->o.max_pids = 16;
	c->o.max_files = 64;
	c->o.proc_root = "/proc";
	c->u = unwind_new(&c->o);
	assert_non_null(c->u);
}

static void close_unwind(struct ctx *c)
{
	unwind_free(c->u);
	close(c->o.fds.rules);
	close(c->o.fds.chunks);
	close(c->o.fds.tables);
	close(c->o.procs_fd);
}

/* Publishes maps as the mappings of this process (its files open through /proc/self's view). */
static void scan(struct ctx *c, const struct proc_maps *maps)
{
	unwind_scan_pid(c->u, getpid(), maps);
}

static void test_published_mappings_are_sorted_padded_and_skip_vsyscall(void **state)
{
	static struct spanprof_unwind_proc v;
	struct ctx *c = *state;
	struct proc_map m[3];
	struct proc_maps maps = { .maps = m, .count = 3 };
	struct timespec ts = { 0, 10 * 1000 * 1000 };
	__u32 key;
	int i;

	open_unwind(c);
	m[0] = unwind_fixture_map(c->uf.lib, LIB_BASE, NULL);
	m[1] = (struct proc_map){ 0x7ffd00000000ull, 0x7ffd00002000ull, 0, 0, 0, "[vdso]" };
	m[2] = (struct proc_map){ 0xffffffffff600000ull, 0xffffffffff601000ull, 0, 0, 0,
				  "[vsyscall]" };
	scan(c, &maps);
	key = getpid();
	assert_int_equal(bpf_map_lookup_elem(c->o.procs_fd, &key, &v), 0);
	assert_int_equal(v.nmaps, 2); /* [vsyscall] is not published */
	assert_int_equal(v.maps[0].start, m[0].start);
	assert_int_equal(v.maps[0].table, SPANPROF_UNWIND_TABLE_PENDING);
	assert_int_equal(v.maps[1].start, m[1].start);
	for (i = 2; i < SPANPROF_UNWIND_MAX_MAPPINGS; i++)
		assert_int_equal(v.maps[i].start, SPANPROF_UNWIND_ADDR_END);

	/* Once both tables are built (the worker's job, slower under ASan and load: up to 90 s),
	 * a scan publishes them. (A poll may republish this process from its real /proc maps
	 * meanwhile: scan again each time.) */
	for (i = 0; i < 9000; i++) {
		unwind_poll(c->u);
		scan(c, &maps);
		assert_int_equal(bpf_map_lookup_elem(c->o.procs_fd, &key, &v), 0);
		if (v.maps[0].table != SPANPROF_UNWIND_TABLE_PENDING &&
		    v.maps[1].table != SPANPROF_UNWIND_TABLE_PENDING)
			break;
		nanosleep(&ts, NULL);
	}
	printf("  tables after %d polls: %u (library), %u (vDSO)\n", i, v.maps[0].table,
	       v.maps[1].table);
	assert_int_equal(v.nmaps, 2);
	assert_true(v.maps[0].table < SPANPROF_UNWIND_MAX_TABLES);
	assert_true(v.maps[0].gen != 0);
	assert_int_equal(v.maps[0].bias, LIB_BASE);
	assert_true(v.maps[1].table < SPANPROF_UNWIND_MAX_TABLES); /* the vDSO has CFI too */
	assert_int_equal(v.maps[1].bias, m[1].start); /* its image starts at vaddr 0 */

	unwind_forget_pid(c->u, getpid());
	assert_int_equal(bpf_map_lookup_elem(c->o.procs_fd, &key, &v), -ENOENT);
	close_unwind(c);
}

/* Whole-node mode: a scanned process is not published until its first sample, then it is, with
 * the mappings the scan found; forgetting it leaves nothing. */
static void test_mappings_are_published_at_the_first_sample(void **state)
{
	static struct spanprof_unwind_proc v;
	struct ctx *c = *state;
	struct proc_map m[2];
	struct proc_maps maps = { .maps = m, .count = 2 };
	struct unwind_stats st;
	__u32 key = getpid();

	c->o.publish_on_sample = 1;
	open_unwind(c);
	c->o.publish_on_sample = 0;
	m[0] = unwind_fixture_map(c->uf.lib, LIB_BASE, NULL);
	m[1] = (struct proc_map){ 0x7ffd00000000ull, 0x7ffd00002000ull, 0, 0, 0, "[vdso]" };
	scan(c, &maps);
	assert_int_equal(bpf_map_lookup_elem(c->o.procs_fd, &key, &v), -ENOENT);
	unwind_new_round(c->u);
	unwind_note_sampled(c->u, getpid());
	assert_int_equal(bpf_map_lookup_elem(c->o.procs_fd, &key, &v), 0);
	assert_int_equal(v.nmaps, 2);
	assert_int_equal(v.maps[0].start, m[0].start);
	assert_int_equal(v.maps[1].start, m[1].start);
	assert_int_equal(v.maps[2].start, SPANPROF_UNWIND_ADDR_END);
	unwind_get_stats(c->u, &st);
	assert_int_equal(st.publish_errors, 0);
	/* published from now on: a later scan writes at once */
	maps.count = 1;
	scan(c, &maps);
	assert_int_equal(bpf_map_lookup_elem(c->o.procs_fd, &key, &v), 0);
	assert_int_equal(v.nmaps, 1);
	unwind_forget_pid(c->u, getpid());
	assert_int_equal(bpf_map_lookup_elem(c->o.procs_fd, &key, &v), -ENOENT);
	close_unwind(c);
}

/* Anonymous executable memory (JIT code) is published for frame-pointer walking, in address
 * order among the files; past SPANPROF_UNWIND_MAX_MAPPINGS files keep their slots and the
 * anonymous ranges left out are counted. */
static void test_anonymous_code_is_walked_by_frame_pointer_files_first(void **state)
{
	enum { NFILES = SPANPROF_UNWIND_MAX_MAPPINGS - 6, NANON = 10 };
	static struct spanprof_unwind_proc v;
	static struct proc_map m[NFILES];
	static struct proc_range anon[NANON];
	struct proc_maps maps = { .maps = m, .count = NFILES, .anon = anon, .anon_count = NANON };
	struct ctx *c = *state;
	struct unwind_stats st;
	unsigned int i, nanon = 0;
	__u32 key = getpid();

	open_unwind(c);
	/* Pseudo files (no inode: no table, nothing opened), 64 KiB apart. */
	for (i = 0; i < NFILES; i++)
		m[i] = (struct proc_map){
			LIB_BASE + i * 0x10000ull, LIB_BASE + i * 0x10000ull + 0x1000, 0, 0, 0,
			"[anon:fixture]"
		};
	anon[0] = (struct proc_range){ 0x1000, 0x3000 }; /* below every file */
	for (i = 1; i < NANON; i++) /* between files i - 1 and i */
		anon[i] = (struct proc_range){ LIB_BASE + (i - 1) * 0x10000ull + 0x2000,
					       LIB_BASE + (i - 1) * 0x10000ull + 0x3000 };
	scan(c, &maps);
	assert_int_equal(bpf_map_lookup_elem(c->o.procs_fd, &key, &v), 0);
	assert_int_equal(v.nmaps, SPANPROF_UNWIND_MAX_MAPPINGS);
	assert_int_equal(v.maps[0].start, 0x1000);
	assert_int_equal(v.maps[0].end, 0x3000);
	for (i = 0; i < SPANPROF_UNWIND_MAX_MAPPINGS; i++) {
		assert_int_equal(v.maps[i].table, SPANPROF_UNWIND_TABLE_FP);
		if (i)
			assert_true(v.maps[i - 1].end <= v.maps[i].start);
		nanon += v.maps[i].start < LIB_BASE || (v.maps[i].start & 0xffff) == 0x2000;
	}
	assert_int_equal(nanon, 6); /* the slots the files left: the lowest six ranges */
	assert_int_equal(v.maps[2].start, anon[1].start);
	unwind_get_stats(c->u, &st);
	assert_int_equal(st.anon_dropped, NANON - 6);
	assert_int_equal(st.mappings_dropped, 0);
	close_unwind(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_published_mappings_are_sorted_padded_and_skip_vsyscall),
		cmocka_unit_test(test_mappings_are_published_at_the_first_sample),
		cmocka_unit_test(test_anonymous_code_is_walked_by_frame_pointer_files_first),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
