// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Unit tests for map_grow with real BPF maps (a plain hash, which never evicts, so the counts are
 * exact; the agent grows an LRU hash the same way): a map in slot 0 of an array of maps is
 * replaced by one twice as big once three quarters full, keeps every entry, the slot names the
 * new map, and growth stops at the limit. */
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

#include "agent/map_grow.h"

struct test_state {
	int outer_fd;
	struct map_grow g;
};

static int setup(void **state)
{
	static struct test_state s;
	LIBBPF_OPTS(bpf_map_create_opts, opts);
	int inner = bpf_map_create(BPF_MAP_TYPE_HASH, "grow_tmpl", 8, 8, 4, NULL);

	memset(&s, 0, sizeof(s));
	s.outer_fd = -1;
	s.g.fd = -1;
	*state = &s;
	if (inner < 0)
		return 0;
	opts.inner_map_fd = inner;
	s.outer_fd = bpf_map_create(BPF_MAP_TYPE_ARRAY_OF_MAPS, "grow_slot", 4, 4, 1, &opts);
	close(inner);
	return 0;
}

static int teardown(void **state)
{
	struct test_state *s = *state;

	map_grow_close(&s->g);
	if (s->outer_fd >= 0)
		close(s->outer_fd);
	return 0;
}

static void put(const struct test_state *s, uint64_t from, uint64_t to)
{
	uint64_t k, v;

	for (k = from; k < to; k++) {
		v = k * 10;
		assert_int_equal(bpf_map_update_elem(s->g.fd, &k, &v, BPF_ANY), 0);
	}
}

/* The id of the map in slot 0, and of the map map_grow holds: the same. */
static void assert_slot_holds_current(const struct test_state *s)
{
	struct bpf_map_info info;
	__u32 len = sizeof(info), zero = 0, id = 0;

	memset(&info, 0, sizeof(info));
	assert_int_equal(bpf_map_lookup_elem(s->outer_fd, &zero, &id), 0);
	assert_int_equal(bpf_obj_get_info_by_fd(s->g.fd, &info, &len), 0);
	assert_int_equal(id, info.id);
	assert_int_equal(info.max_entries, s->g.max_entries);
}

static void test_map_grows_when_three_quarters_full_and_keeps_entries(void **state)
{
	struct test_state *s = *state;
	uint64_t k, v;

	if (s->outer_fd < 0) {
		print_message("skipping: bpf_map_create: %s (needs root and BPF)\n",
			      strerror(errno));
		skip();
	}
	assert_int_equal(
		map_grow_open(&s->g, s->outer_fd, "grow_test", BPF_MAP_TYPE_HASH, 8, 8, 64, 256),
		0);
	assert_int_equal(s->g.max_entries, 64);
	assert_slot_holds_current(s);
	put(s, 0, 48); /* exactly three quarters: not more */
	assert_int_equal(map_grow_check(&s->g), 0);
	assert_int_equal(s->g.entries, 48);
	put(s, 48, 49);
	assert_int_equal(map_grow_check(&s->g), 1);
	assert_int_equal(s->g.max_entries, 128);
	assert_int_equal(s->g.grown, 1);
	assert_slot_holds_current(s);
	for (k = 0; k < 49; k++) {
		assert_int_equal(bpf_map_lookup_elem(s->g.fd, &k, &v), 0);
		assert_int_equal(v, k * 10);
	}
	put(s, 49, 97);
	assert_int_equal(map_grow_check(&s->g), 1);
	assert_int_equal(s->g.max_entries, 256);
	/* at the limit, not three quarters full: not counted full */
	assert_int_equal(map_grow_check(&s->g), 0);
	assert_int_equal(s->g.full, 0);
	/* at the limit it stays, however full, and each check counts it full */
	put(s, 97, 250);
	assert_int_equal(map_grow_check(&s->g), 0);
	assert_int_equal(s->g.max_entries, 256);
	assert_int_equal(s->g.grown, 2);
	assert_int_equal(s->g.full, 1);
	assert_int_equal(map_grow_check(&s->g), 0);
	assert_int_equal(s->g.full, 2);
	assert_slot_holds_current(s);
}

/* A limit that is not a power-of-two step away is reached exactly. */
static void test_map_grow_stops_at_a_limit_between_steps(void **state)
{
	struct test_state *s = *state;

	if (s->outer_fd < 0)
		skip();
	assert_int_equal(
		map_grow_open(&s->g, s->outer_fd, "grow_test", BPF_MAP_TYPE_HASH, 8, 8, 64, 100),
		0);
	put(s, 0, 60);
	assert_int_equal(map_grow_check(&s->g), 1);
	assert_int_equal(s->g.max_entries, 100);
	assert_slot_holds_current(s);
}

/* A limit below the first size (--go-span-map-entries 16, the smallest) is the first size: the
 * map never grows, and is counted full once three quarters full. */
static void test_map_below_its_first_size_starts_at_its_limit(void **state)
{
	struct test_state *s = *state;

	if (s->outer_fd < 0)
		skip();
	assert_int_equal(
		map_grow_open(&s->g, s->outer_fd, "grow_test", BPF_MAP_TYPE_HASH, 8, 8, 1024, 16),
		0);
	assert_int_equal(s->g.max_entries, 16);
	put(s, 0, 12);
	assert_int_equal(map_grow_check(&s->g), 0);
	assert_int_equal(s->g.full, 0);
	put(s, 12, 13);
	assert_int_equal(map_grow_check(&s->g), 0);
	assert_int_equal(s->g.max_entries, 16);
	assert_int_equal(s->g.grown, 0);
	assert_int_equal(s->g.full, 1);
	assert_slot_holds_current(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_map_below_its_first_size_starts_at_its_limit,
						setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_map_grows_when_three_quarters_full_and_keeps_entries, setup, teardown),
		cmocka_unit_test_setup_teardown(test_map_grow_stops_at_a_limit_between_steps, setup,
						teardown),
	};

	return cmocka_run_group_tests_name("map_grow", tests, NULL, NULL);
}
