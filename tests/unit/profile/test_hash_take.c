// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Unit tests for hash_take: real BPF hash maps of stack-sized values, taken whole (every entry
 * found by its key with its own value, the map left empty), stopped at max (the rest left in
 * the map, the take marked incomplete), and buffers given back after a big window. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include <bpf/bpf.h>

#include "profile/hash_take.h"

#define VALUE_SIZE 1016 /* a CFI user stack */
#define MAP_SIZE 4096

struct value {
	uint64_t words[VALUE_SIZE / 8];
};

static uint64_t key_of(uint32_t i)
{
	return 0x9e3779b97f4a7c15ull * (i + 1); /* spread like stack hashes */
}

static int make_map(uint32_t n)
{
	struct value v;
	uint64_t key;
	uint32_t i;
	int fd = bpf_map_create(BPF_MAP_TYPE_HASH, "test_take", sizeof(uint64_t), VALUE_SIZE,
				MAP_SIZE, NULL);

	assert_true(fd >= 0);
	for (i = 0; i < n; i++) {
		key = key_of(i);
		memset(&v, 0, sizeof(v));
		v.words[0] = i;
		v.words[VALUE_SIZE / 8 - 1] = ~key;
		assert_int_equal(bpf_map_update_elem(fd, &key, &v, BPF_NOEXIST), 0);
	}
	return fd;
}

static uint32_t map_count(int fd)
{
	uint64_t k, next;
	uint32_t n = 0;
	void *prev = NULL;

	while (!bpf_map_get_next_key(fd, prev, &next)) {
		k = next;
		prev = &k;
		n++;
	}
	return n;
}

static void check_all(const struct hash_take *t, uint32_t n)
{
	const struct value *v;
	uint32_t i;

	for (i = 0; i < n; i++) {
		v = hash_take_find(t, key_of(i));
		assert_non_null(v);
		assert_int_equal(v->words[0], i);
		assert_int_equal(v->words[VALUE_SIZE / 8 - 1], ~key_of(i));
	}
}

static void test_takes_everything(void **state)
{
	struct hash_take t;
	int fd = make_map(3000);

	(void)state;
	hash_take_init(&t, VALUE_SIZE, MAP_SIZE);
	assert_int_equal(hash_take_map(&t, fd), 0);
	assert_int_equal(t.n, 3000);
	assert_true(t.complete);
	check_all(&t, 3000);
	assert_null(hash_take_find(&t, 12345));
	assert_int_equal(map_count(fd), 0);
	hash_take_release(&t);
	close(fd);
}

static void test_empty_map(void **state)
{
	struct hash_take t;
	int fd = make_map(0);

	(void)state;
	hash_take_init(&t, VALUE_SIZE, MAP_SIZE);
	assert_int_equal(hash_take_map(&t, fd), 0);
	assert_int_equal(t.n, 0);
	assert_true(t.complete);
	assert_null(hash_take_find(&t, key_of(0)));
	hash_take_release(&t);
	close(fd);
}

/* The kernel hands over a hash bucket whole or not at all, and seeds its hash at random: near
 * max, a bucket of two keys may not fit in the room left, and the take stops one or a few
 * entries short. Keys spread over 4096 buckets make such buckets small. */
#define MAX_SHORT 8

/* max reached: what was taken is found, the rest stays in the map for the caller to clear. */
static void test_stops_at_max(void **state)
{
	struct hash_take t;
	int fd = make_map(1000);
	uint32_t i, found = 0;

	(void)state;
	hash_take_init(&t, VALUE_SIZE, 300);
	assert_int_equal(hash_take_map(&t, fd), 0);
	assert_true(t.n <= 300 && t.n > 300 - MAX_SHORT);
	assert_false(t.complete);
	assert_int_equal(t.truncated, 1);
	for (i = 0; i < 1000; i++)
		found += hash_take_find(&t, key_of(i)) != NULL;
	assert_int_equal(found, t.n);
	assert_int_equal(map_count(fd), 1000 - t.n);
	hash_take_release(&t);
	close(fd);
}

/* Exactly max entries: complete and nothing left, unless the last bucket did not fit (above):
 * then what was taken is found and the rest is still in the map. */
static void test_exactly_max(void **state)
{
	struct hash_take t;
	int fd = make_map(256);

	(void)state;
	hash_take_init(&t, VALUE_SIZE, 256);
	assert_int_equal(hash_take_map(&t, fd), 0);
	if (t.complete) {
		assert_int_equal(t.n, 256);
		assert_int_equal(t.truncated, 0);
		assert_int_equal(map_count(fd), 0);
		check_all(&t, 256);
	} else {
		print_message("  the last bucket did not fit: %u of 256 taken\n", t.n);
		assert_true(t.n < 256 && t.n > 256 - MAX_SHORT);
		assert_int_equal(t.truncated, 1);
		assert_int_equal(map_count(fd), 256 - t.n);
	}
	hash_take_release(&t);
	close(fd);
}

/* A big window, then small ones: the buffers shrink back instead of staying at the peak. */
static void test_memory_follows_need(void **state)
{
	struct hash_take t;
	int big = make_map(3000), small;

	(void)state;
	hash_take_init(&t, VALUE_SIZE, MAP_SIZE);
	assert_int_equal(hash_take_map(&t, big), 0);
	assert_true(t.cap >= 3000);
	small = make_map(10);
	assert_int_equal(hash_take_map(&t, small), 0);
	check_all(&t, 10);
	small = (close(small), make_map(10));
	assert_int_equal(hash_take_map(&t, small), 0);
	check_all(&t, 10);
	assert_true(t.cap <= 64);
	hash_take_release(&t);
	close(small);
	close(big);
}

/* A descriptor that is no map: an error, nothing held, nothing found. */
static void test_bad_fd(void **state)
{
	struct hash_take t;

	(void)state;
	hash_take_init(&t, VALUE_SIZE, MAP_SIZE);
	assert_true(hash_take_map(&t, -1) < 0);
	assert_int_equal(t.n, 0);
	assert_false(t.complete);
	assert_null(hash_take_find(&t, key_of(0)));
	hash_take_release(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_takes_everything),    cmocka_unit_test(test_empty_map),
		cmocka_unit_test(test_stops_at_max),	    cmocka_unit_test(test_exactly_max),
		cmocka_unit_test(test_memory_follows_need), cmocka_unit_test(test_bad_fd),
	};

	return cmocka_run_group_tests_name("hash_take", tests, NULL, NULL);
}
