// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Unit tests for percpu_sum: a real BPF per-CPU array with a distinct value on every CPU of
 * every entry reads back as the per-entry sums, through the batch read and through the
 * key-by-key fallback alike. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>
#include <cmocka.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "util/percpu_sum.h"

#define ENTRIES 24

/* Entry i on CPU c holds (i + 1) * 1000 + c; returns the map fd. */
static int make_counters(uint64_t *want)
{
	int ncpus = libbpf_num_possible_cpus(), fd, c;
	__u64 *v = calloc(ncpus, sizeof(*v));
	__u32 i;

	assert_true(ncpus > 0);
	assert_non_null(v);
	fd = bpf_map_create(BPF_MAP_TYPE_PERCPU_ARRAY, "test_counters", sizeof(__u32),
			    sizeof(__u64), ENTRIES, NULL);
	assert_true(fd >= 0);
	for (i = 0; i < ENTRIES; i++) {
		want[i] = 0;
		for (c = 0; c < ncpus; c++) {
			v[c] = (i + 1) * 1000ull + c;
			want[i] += v[c];
		}
		assert_int_equal(bpf_map_update_elem(fd, &i, v, BPF_ANY), 0);
	}
	free(v);
	return fd;
}

static void test_sums_every_entry(void **state)
{
	uint64_t want[ENTRIES], got[ENTRIES];
	int fd = make_counters(want);
	size_t i;

	(void)state;
	assert_int_equal(percpu_sum(fd, got, ENTRIES), 0);
	for (i = 0; i < ENTRIES; i++)
		assert_int_equal(got[i], want[i]);
	close(fd);
}

/* Fewer counters than the map holds: the first n, nothing written past them. */
static void test_first_n(void **state)
{
	uint64_t want[ENTRIES], got[ENTRIES + 1];
	int fd = make_counters(want);
	size_t i;

	(void)state;
	got[5] = 12345;
	assert_int_equal(percpu_sum(fd, got, 5), 0);
	for (i = 0; i < 5; i++)
		assert_int_equal(got[i], want[i]);
	assert_int_equal(got[5], 12345);
	close(fd);
}

/* A descriptor that is no map fails the batch read: the fallback reads each key, fails too,
 * and the counters read zero rather than garbage. */
static void test_unreadable_reads_zero(void **state)
{
	uint64_t got[ENTRIES];
	size_t i;

	(void)state;
	for (i = 0; i < ENTRIES; i++)
		got[i] = 77;
	assert_int_equal(percpu_sum(-1, got, ENTRIES), 0);
	for (i = 0; i < ENTRIES; i++)
		assert_int_equal(got[i], 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sums_every_entry),
		cmocka_unit_test(test_first_n),
		cmocka_unit_test(test_unreadable_reads_zero),
	};

	return cmocka_run_group_tests_name("percpu_sum", tests, NULL, NULL);
}
