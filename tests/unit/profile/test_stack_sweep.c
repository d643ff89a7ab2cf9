// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Unit tests for stack_sweep: in a real BPF hash of stacks stamped as the off-CPU program stamps
 * them, the stacks not taken for longer than the age are deleted and the others kept. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include <bpf/bpf.h>

#include "profile/stack_sweep.h"
#include "util/spanprof_types.h"

#define S (1ull << SPANPROF_STACK_TAKEN_SHIFT) /* one unit of the stamp, about a second */
#define NOW (1000000 * S)

static void put(int fd, __u64 hash, uint64_t taken_ns)
{
	struct spanprof_user_stack st = { .nframes = 1 };

	st.ips[0] = 0x401000 + hash;
	st.taken = (__u32)(taken_ns >> SPANPROF_STACK_TAKEN_SHIFT);
	assert_int_equal(bpf_map_update_elem(fd, &hash, &st, BPF_ANY), 0);
}

static int held(int fd, __u64 hash)
{
	struct spanprof_user_stack st;

	return !bpf_map_lookup_elem(fd, &hash, &st);
}

static void test_sweep_deletes_only_stacks_not_taken_for_long(void **state)
{
	uint32_t deleted = 0;
	__u64 h;
	int fd;

	(void)state;
	fd = bpf_map_create(BPF_MAP_TYPE_HASH, "sweep_stacks", sizeof(__u64),
			    sizeof(struct spanprof_user_stack), 64, NULL);
	if (fd < 0) {
		print_message("skipping: bpf_map_create: %s (needs root and BPF)\n",
			      strerror(errno));
		skip();
	}
	for (h = 1; h <= 20; h++) /* 20 old stacks, 5 recent ones */
		put(fd, h, NOW - 400 * S);
	for (h = 21; h <= 25; h++)
		put(fd, h, NOW - 10 * S);
	assert_int_equal(stack_sweep(fd, NOW, 300 * S, &deleted), 0);
	assert_int_equal(deleted, 20);
	for (h = 1; h <= 20; h++)
		assert_false(held(fd, h));
	for (h = 21; h <= 25; h++)
		assert_true(held(fd, h));
	/* nothing old left: a second sweep deletes nothing */
	assert_int_equal(stack_sweep(fd, NOW, 300 * S, &deleted), 0);
	assert_int_equal(deleted, 0);
	close(fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sweep_deletes_only_stacks_not_taken_for_long),
	};

	return cmocka_run_group_tests_name("stack_sweep", tests, NULL, NULL);
}
