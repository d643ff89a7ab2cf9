// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Unit tests for self_memory's kept-open /proc files: read again, a file shows the figures of
 * that moment (not those of its first read), and a map's fdinfo file follows the fd it is asked
 * for. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include <bpf/bpf.h>

#include "util/self_memory.h"

#define GROWTH (16u << 20)

/* RSS read twice through one open status file sees memory touched between the reads. */
static void test_rss_reread_sees_growth(void **state)
{
	struct self_memory_file f = SELF_MEMORY_FILE_INIT;
	uint64_t before, after, once;
	char *block;

	(void)state;
	assert_int_equal(self_memory_rss_in(&f, &before), 0);
	assert_true(f.fd >= 0);
	block = malloc(GROWTH);
	assert_non_null(block);
	memset(block, 1, GROWTH);
	assert_int_equal(self_memory_rss_in(&f, &after), 0);
	assert_int_equal(self_memory_rss(&once), 0);
	free(block);
	self_memory_file_close(&f);
	assert_int_equal(f.fd, -1);
	assert_true(after >= before + GROWTH / 2);
	/* what a fresh open reads: the same figure, within what the few calls between allocate */
	assert_true(once >= after && once - after < (1u << 20));
}

/* One fdinfo file, asked for two maps in turn, gives each map's own memlock, as a fresh open
 * of each map's fdinfo does; a fd that is no map is an error, not the last map's figure. */
static void test_map_file_follows_the_fd(void **state)
{
	struct self_memory_file f = SELF_MEMORY_FILE_INIT;
	int small = bpf_map_create(BPF_MAP_TYPE_ARRAY, "mem_small", 4, 8, 16, NULL);
	int big = bpf_map_create(BPF_MAP_TYPE_ARRAY, "mem_big", 4, 8, 65536, NULL);
	uint64_t s1, b1, s2, want_s, want_b, none;

	(void)state;
	if (small < 0 || big < 0) {
		if (small >= 0)
			close(small);
		if (big >= 0)
			close(big);
		skip(); /* needs CAP_BPF */
	}
	assert_int_equal(self_memory_bpf_map_in(&f, small, &s1), 0);
	assert_int_equal(self_memory_bpf_map_in(&f, big, &b1), 0);
	assert_int_equal(self_memory_bpf_map_in(&f, small, &s2), 0);
	assert_int_equal(self_memory_bpf_map(small, &want_s), 0);
	assert_int_equal(self_memory_bpf_map(big, &want_b), 0);
	assert_int_equal(self_memory_bpf_map_in(&f, STDIN_FILENO, &none), -ENOENT);
	self_memory_file_close(&f);
	close(small);
	close(big);
	assert_int_equal(s1, want_s);
	assert_int_equal(s2, want_s);
	assert_int_equal(b1, want_b);
	assert_true(want_b > want_s + 65536 * 8 / 2);
}

/* A map allocated whole is read once per map: a new map given the old one's fd number is read
 * again (its own figure, not the old one's); a hash without preallocation is read each time and
 * shows its elements. */
static void test_fixed_figures_follow_the_map(void **state)
{
	struct self_memory_file f = SELF_MEMORY_FILE_INIT;
	int small = bpf_map_create(BPF_MAP_TYPE_ARRAY, "mem_small", 4, 8, 16, NULL);
	LIBBPF_OPTS(bpf_map_create_opts, opts, .map_flags = BPF_F_NO_PREALLOC);
	uint64_t s, b, want_b, h0, h1, k, v = 0;
	int big, hash;

	(void)state;
	if (small < 0)
		skip(); /* needs CAP_BPF */
	assert_int_equal(self_memory_bpf_map_in(&f, small, &s), 0);
	assert_int_equal(self_memory_bpf_map_in(&f, small, &s), 0);
	close(small);
	big = bpf_map_create(BPF_MAP_TYPE_ARRAY, "mem_big", 4, 8, 65536, NULL);
	assert_true(big >= 0);
	assert_int_equal(self_memory_bpf_map_in(&f, big, &b), 0);
	assert_int_equal(self_memory_bpf_map(big, &want_b), 0);
	close(big);
	assert_int_equal(b, want_b);
	assert_true(b > s);
	hash = bpf_map_create(BPF_MAP_TYPE_HASH, "mem_hash", 8, 8, 4096, &opts);
	assert_true(hash >= 0);
	assert_int_equal(self_memory_bpf_map_in(&f, hash, &h0), 0);
	for (k = 0; k < 2048; k++)
		assert_int_equal(bpf_map_update_elem(hash, &k, &v, BPF_ANY), 0);
	assert_int_equal(self_memory_bpf_map_in(&f, hash, &h1), 0);
	self_memory_file_close(&f);
	close(hash);
	assert_true(h1 >= h0 + 2048 * 16);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rss_reread_sees_growth),
		cmocka_unit_test(test_map_file_follows_the_fd),
		cmocka_unit_test(test_fixed_figures_follow_the_map),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
