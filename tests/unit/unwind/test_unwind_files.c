// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Unit tests for unwind_files with real BPF maps, the worker thread and fixtures built at test
 * time: a miss is built off-thread and stored, a copy of a file (another inode, the same build
 * id, as in another container) shares its table, a file without CFI is marked for frame
 * pointers, the mapping's bias follows the program headers, and the least recently mapped table
 * is evicted when the budget is full. */
#define _GNU_SOURCE
#include <errno.h>
#include <gelf.h>
#include <fcntl.h>
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

#include "fixture_build.h"
#include "unwind/unwind_files.h"
#include "unwind_fixture.h"

struct ctx {
	struct unwind_fixture uf;
	char *copy; /* a copy of uf.lib: same build id, other inode */
	struct unwind_store_fds fds;
	struct unwind_store *store;
	struct unwind_worker *worker;
	struct unwind_files *files;
	int nchunks;
};

static int group_setup(void **state)
{
	static struct ctx c;

	*state = &c;
	if (geteuid() != 0)
		return 0;
	if (unwind_fixture_build(&c.uf) || asprintf(&c.copy, "%s/copy.so", c.uf.dir) < 0 ||
	    fixture_sh("cp %s %s", c.uf.lib, c.copy))
		return -1;
	return 0;
}

static int group_teardown(void **state)
{
	struct ctx *c = *state;

	free(c->copy);
	unwind_fixture_release(&c->uf);
	return 0;
}

/* A cache over fresh maps with room for nchunks chunks. */
static void open_cache(struct ctx *c, int nchunks)
{
	struct unwind_files_options o = { 0 };

	if (geteuid() != 0 || !c->uf.dir)
		skip();
	c->fds.rules = bpf_map_create(BPF_MAP_TYPE_ARRAY, "t_rules", 4,
				      sizeof(struct spanprof_unwind_rule),
				      SPANPROF_UNWIND_MAX_RULES, NULL);
	c->fds.chunks = bpf_map_create(BPF_MAP_TYPE_ARRAY, "t_chunks", 4,
				       sizeof(struct spanprof_unwind_chunk), nchunks, NULL);
	c->fds.tables = bpf_map_create(BPF_MAP_TYPE_ARRAY, "t_tables", 4,
				       sizeof(struct spanprof_unwind_table),
				       SPANPROF_UNWIND_MAX_TABLES, NULL);
	assert_true(c->fds.rules >= 0 && c->fds.chunks >= 0 && c->fds.tables >= 0);
	c->store = unwind_store_new(&c->fds, nchunks);
	c->worker = unwind_worker_new();
	o.store = c->store;
	o.worker = c->worker;
	o.proc_root = "/proc";
	o.max_files = 16;
	c->files = unwind_files_new(&o);
	assert_non_null(c->files);
}

static void close_cache(struct ctx *c)
{
	unwind_worker_free(c->worker);
	unwind_files_free(c->files);
	unwind_store_free(c->store);
	close(c->fds.rules);
	close(c->fds.chunks);
	close(c->fds.tables);
}

/* Polls the cache until `done` builds finished (at most 10 s). */
static void wait_builds(struct ctx *c, size_t done)
{
	struct timespec ts = { 0, 5 * 1000 * 1000 };
	size_t got = 0;
	int i;

	for (i = 0; i < 2000 && got < done; i++) {
		got += unwind_files_poll(c->files);
		if (got < done)
			nanosleep(&ts, NULL);
	}
	assert_int_equal(got, done);
}

static void test_miss_is_built_then_shared_by_build_id(void **state)
{
	struct ctx *c = *state;
	struct unwind_files_stats st;
	struct unwind_file_ref ref, ref2;
	struct proc_map m, copy;
	uint64_t vaddr;

	open_cache(c, 8);
	m = unwind_fixture_map(c->uf.lib, 0x7f0000000000ull, &vaddr);
	assert_int_equal(unwind_files_resolve(c->files, getpid(), &m, &ref), 0);
	assert_int_equal(ref.state, UNWIND_FILE_PENDING);
	assert_int_equal(ref.bias, 0x7f0000000000ull); /* start - vaddr of the segment */
	/* A process waiting for it asks by key, with no /proc read, until the build is done. */
	assert_int_equal(unwind_files_pending(c->files, ref.key), 1);
	wait_builds(c, 1);
	assert_int_equal(unwind_files_pending(c->files, ref.key), 0);
	assert_int_equal(unwind_files_resolve(c->files, getpid(), &m, &ref), 0);
	assert_int_equal(ref.state, UNWIND_FILE_READY);
	assert_true(ref.gen != 0);

	/* Another inode with the same build id (a container's copy) shares the table. */
	copy = unwind_fixture_map(c->copy, 0x7f1000000000ull, &vaddr);
	assert_true(copy.inode != m.inode);
	assert_int_equal(unwind_files_resolve(c->files, getpid(), &copy, &ref2), 0);
	assert_int_equal(ref2.state, UNWIND_FILE_READY);
	assert_int_equal(ref2.table, ref.table);
	assert_int_equal(ref2.gen, ref.gen);
	assert_int_equal(ref2.bias, 0x7f1000000000ull);
	unwind_files_get_stats(c->files, &st);
	assert_int_equal(st.built, 1);
	assert_int_equal(st.files[UNWIND_FILE_READY], 1);
	assert_true(st.text_bytes > 0 && st.rows > 0);
	close_cache(c);
}

static void test_file_without_cfi_is_marked_for_frame_pointers(void **state)
{
	struct ctx *c = *state;
	struct unwind_file_ref ref;
	struct proc_map m;
	uint64_t vaddr;

	open_cache(c, 8);
	m = unwind_fixture_map(c->uf.nocfi, 0x7f2000000000ull, &vaddr);
	assert_int_equal(unwind_files_resolve(c->files, getpid(), &m, &ref), 0);
	wait_builds(c, 1);
	assert_int_equal(unwind_files_resolve(c->files, getpid(), &m, &ref), 0);
	assert_int_equal(ref.state, UNWIND_FILE_NOCFI);
	close_cache(c);
}

/* Room for one table: the second file's table evicts the first (least recently mapped). */
static void test_least_recently_mapped_table_is_evicted(void **state)
{
	struct ctx *c = *state;
	struct unwind_file_ref ref;
	struct unwind_files_stats st;
	struct proc_map exe, lib;
	uint64_t vaddr;

	open_cache(c, 1);
	exe = unwind_fixture_map(c->uf.exe, 0x5500000000ull, &vaddr);
	lib = unwind_fixture_map(c->uf.lib, 0x7f0000000000ull, &vaddr);
	assert_int_equal(unwind_files_resolve(c->files, getpid(), &exe, &ref), 0);
	wait_builds(c, 1);
	assert_int_equal(unwind_files_resolve(c->files, getpid(), &lib, &ref), 0);
	wait_builds(c, 1);
	assert_int_equal(unwind_files_resolve(c->files, getpid(), &lib, &ref), 0);
	assert_int_equal(ref.state, UNWIND_FILE_READY);
	unwind_files_get_stats(c->files, &st);
	assert_int_equal(st.evicted, 1);
	/* The executable's table is gone; it is not rebuilt at once (no rebuild loop when the
	 * budget is too small), its frames are walked by frame pointer meanwhile. */
	assert_int_equal(unwind_files_resolve(c->files, getpid(), &exe, &ref), 0);
	assert_int_equal(ref.state, UNWIND_FILE_EVICTED);
	assert_int_equal(unwind_files_poll(c->files), 0);
	assert_int_equal(st.files[UNWIND_FILE_EVICTED], 1);
	assert_int_equal(st.files[UNWIND_FILE_READY], 1);
	close_cache(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_miss_is_built_then_shared_by_build_id),
		cmocka_unit_test(test_file_without_cfi_is_marked_for_frame_pointers),
		cmocka_unit_test(test_least_recently_mapped_table_is_evicted),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
