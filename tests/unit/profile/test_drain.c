// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Unit tests for drain: real BPF maps filled from user space (counts, and stacks by hash as the
 * BPF programs store them), read back as sample records, lost stacks marked, and the maps
 * emptied. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include <bpf/bpf.h>

#include "profile/drain.h"

#define MAX_KEYS 16
#define MAX_STACKS (2 * MAX_KEYS)

struct seen {
	__u32 pid;
	uint64_t count;
	uint64_t kern_leaf, user_leaf; /* 0: no stack */
	uint64_t user_third; /* the user stack's third frame */
	int lost_kern, lost_user;
};

struct test_state {
	char why[128];
	int counts_fd;
	int stacks_fd; /* __u64 hash -> struct spanprof_user_stack */
	struct drain *d;
	struct seen seen[MAX_KEYS];
	size_t nseen;
	__u32 key_pids[MAX_KEYS]; /* what the keys function was handed */
	size_t nkey_calls, nkeys, seen_at_keys; /* nseen when it was called */
};

static int setup(void **state)
{
	struct test_state *s = calloc(1, sizeof(*s));

	if (!s)
		return -1;
	*state = s;
	s->counts_fd = bpf_map_create(BPF_MAP_TYPE_HASH, "drain_counts", sizeof(struct sample_key),
				      sizeof(__u64), MAX_KEYS, NULL);
	s->stacks_fd = bpf_map_create(BPF_MAP_TYPE_HASH, "drain_stacks", sizeof(__u64),
				      sizeof(struct spanprof_user_stack), MAX_STACKS, NULL);
	if (s->counts_fd < 0 || s->stacks_fd < 0)
		snprintf(s->why, sizeof(s->why), "bpf_map_create: %s (needs root and BPF)",
			 strerror(errno));
	s->d = drain_new(MAX_KEYS, MAX_STACKS);
	return s->d ? 0 : -1;
}

static int teardown(void **state)
{
	struct test_state *s = *state;

	drain_free(s->d);
	if (s->counts_fd >= 0)
		close(s->counts_fd);
	if (s->stacks_fd >= 0)
		close(s->stacks_fd);
	free(s);
	return 0;
}

static struct test_state *start(void **state)
{
	struct test_state *s = *state;

	if (s->why[0]) {
		print_message("skipping: %s\n", s->why);
		skip();
	}
	return s;
}

/* A count under (pid, kernel stack hash, user stack hash); 0: no such stack. */
static void put(struct test_state *s, __u32 pid, __u64 kern_hash, __u64 user_hash, __u64 count)
{
	struct sample_key k;

	memset(&k, 0, sizeof(k)); /* padding too: the whole struct is the hash key */
	k.pid = pid;
	k.kern_stack_hash = kern_hash;
	k.user_stack_hash = user_hash;
	assert_int_equal(bpf_map_update_elem(s->counts_fd, &k, &count, BPF_ANY), 0);
}

/* A two-frame stack (leaf, leaf + 0x100) under hash. */
static void put_stack(struct test_state *s, __u64 hash, __u64 leaf)
{
	struct spanprof_user_stack st = { .nframes = 2 };

	st.ips[0] = leaf;
	st.ips[1] = leaf + 0x100;
	assert_int_equal(bpf_map_update_elem(s->stacks_fd, &hash, &st, BPF_ANY), 0);
}

static void on_sample(void *ctx, const struct sample *smp)
{
	struct test_state *s = ctx;
	struct seen *v;

	assert_true(s->nseen < MAX_KEYS);
	v = &s->seen[s->nseen++];
	v->pid = smp->key->pid;
	v->count = smp->count;
	v->kern_leaf = smp->kern_ips ? smp->kern_ips[0] : 0;
	v->user_leaf = smp->user_ips ? smp->user_ips[0] : 0;
	v->user_third = smp->user_ips ? smp->user_ips[2] : 0;
	v->lost_kern = smp->lost_kern;
	v->lost_user = smp->lost_user;
}

static const struct seen *seen_for(const struct test_state *s, __u32 pid)
{
	size_t i;

	for (i = 0; i < s->nseen; i++)
		if (s->seen[i].pid == pid)
			return &s->seen[i];
	fail_msg("no sample for pid %u", pid);
	return NULL;
}

static int is_empty(int fd)
{
	char key[sizeof(struct sample_key)];

	return bpf_map_get_next_key(fd, NULL, key) && errno == ENOENT;
}

static void test_drain_reads_counts_with_their_stacks(void **state)
{
	struct test_state *s = start(state);
	const struct seen *v;

	put_stack(s, 0x11, 0xffffffff81000010ull);
	put_stack(s, 0x22, 0x401000);
	put(s, 100, 0x11, 0x22, 7);
	put(s, 200, 0x11, 0, 3);
	assert_int_equal(drain_window(s->d, s->counts_fd, s->stacks_fd, -1, on_sample, s), 0);
	assert_int_equal(s->nseen, 2);
	v = seen_for(s, 100);
	assert_int_equal(v->count, 7);
	assert_int_equal(v->kern_leaf, 0xffffffff81000010ull);
	assert_int_equal(v->user_leaf, 0x401000);
	assert_false(v->lost_kern || v->lost_user);
	v = seen_for(s, 200);
	assert_int_equal(v->count, 3);
	assert_int_equal(v->kern_leaf, 0xffffffff81000010ull);
	assert_int_equal(v->user_leaf, 0); /* hash 0: no user stack, and none lost */
	assert_false(v->lost_user);
}

/* A hash the stack map does not hold is a stack the BPF side could not store (its map was
 * full): the sample is kept without it, marked lost and counted, not taken for a read error. */
static void test_drain_marks_stacks_the_kernel_could_not_keep(void **state)
{
	struct test_state *s = start(state);
	struct drain_stats st;
	const struct seen *v;

	put(s, 300, 0x33, 0x44, 1);
	assert_int_equal(drain_window(s->d, s->counts_fd, s->stacks_fd, -1, on_sample, s), 0);
	v = seen_for(s, 300);
	assert_int_equal(v->count, 1);
	assert_true(v->lost_kern);
	assert_true(v->lost_user);
	assert_int_equal(v->kern_leaf, 0);
	assert_int_equal(v->user_leaf, 0);
	drain_get_stats(s->d, &st);
	assert_int_equal(st.stacks_lost, 2);
	assert_int_equal(st.map_errors, 0);
}

static void test_drain_empties_both_maps(void **state)
{
	struct test_state *s = start(state);
	struct drain_stats st;

	put_stack(s, 0x55, 0x401000);
	put_stack(s, 0x66, 0x402000); /* named by no sample */
	put(s, 100, 0, 0x55, 2);
	put(s, 101, 0, 0x55, 4);
	assert_int_equal(drain_window(s->d, s->counts_fd, s->stacks_fd, -1, on_sample, s), 0);
	assert_true(is_empty(s->counts_fd));
	assert_true(is_empty(s->stacks_fd));
	/* the next window starts empty: nothing is handed out twice */
	s->nseen = 0;
	assert_int_equal(drain_window(s->d, s->counts_fd, s->stacks_fd, -1, on_sample, s), 0);
	assert_int_equal(s->nseen, 0);
	drain_get_stats(s->d, &st);
	assert_int_equal(st.keys, 2);
	assert_int_equal(st.map_errors, 0);
	assert_int_equal(st.last_stacks, 0);
}

/* A window holding every key the drain can take at once, read in several kernel batches: each
 * key handed out once with its count, and the map left empty. */
static void test_drain_reads_a_full_window_in_batches(void **state)
{
	struct test_state *s = start(state);
	uint64_t total = 0;
	__u32 pid;
	size_t i;

	put_stack(s, 0x77, 0x401000);
	for (pid = 1000; pid < 1000 + MAX_KEYS; pid++)
		put(s, pid, 0, 0x77, pid);
	s->nseen = 0;
	assert_int_equal(drain_window(s->d, s->counts_fd, s->stacks_fd, -1, on_sample, s), 0);
	assert_int_equal(s->nseen, MAX_KEYS);
	for (i = 0; i < s->nseen; i++) {
		assert_int_equal(s->seen[i].count, s->seen[i].pid);
		assert_int_equal(s->seen[i].user_leaf, 0x401000);
		total += s->seen[i].count;
	}
	assert_int_equal(total,
			 (uint64_t)MAX_KEYS * 1000 + (uint64_t)MAX_KEYS * (MAX_KEYS - 1) / 2);
	assert_true(is_empty(s->counts_fd));
}

/* Off-CPU windows of frame-pointer mode share one stack map: draining one keeps the stacks for
 * threads still blocked, and a later window still finds them. */
static void test_drain_shared_stacks_keeps_the_stack_map(void **state)
{
	struct test_state *s = start(state);

	put_stack(s, 0x88, 0x401000);
	put_stack(s, 0x99, 0xffffffff81000000ull);
	put(s, 100, 0x99, 0x88, 20000000);
	assert_int_equal(
		drain_window_shared_stacks(s->d, s->counts_fd, s->stacks_fd, -1, on_sample, s), 0);
	assert_int_equal(seen_for(s, 100)->count, 20000000);
	assert_int_equal(seen_for(s, 100)->kern_leaf, 0xffffffff81000000ull);
	assert_true(is_empty(s->counts_fd));
	assert_false(is_empty(s->stacks_fd));
	put(s, 101, 0, 0x88, 3000000);
	assert_int_equal(
		drain_window_shared_stacks(s->d, s->counts_fd, s->stacks_fd, -1, on_sample, s), 0);
	assert_int_equal(seen_for(s, 101)->user_leaf, 0x401000);
	assert_false(is_empty(s->stacks_fd));
}

/* Only a stack's nframes frames are kept (zero after them). */
static void test_drain_keeps_only_the_frames_a_stack_has(void **state)
{
	struct test_state *s = start(state);
	struct spanprof_user_stack st = { .nframes = 2 };
	__u64 hash = 0x1234567890abcdefull;

	st.ips[0] = 0x401000;
	st.ips[1] = 0x402000;
	st.ips[2] = 0x403000; /* beyond nframes */
	assert_int_equal(bpf_map_update_elem(s->stacks_fd, &hash, &st, BPF_ANY), 0);
	put(s, 500, 0, hash, 3);
	assert_int_equal(drain_window(s->d, s->counts_fd, s->stacks_fd, -1, on_sample, s), 0);
	assert_int_equal(seen_for(s, 500)->user_leaf, 0x401000);
	assert_int_equal(seen_for(s, 500)->user_third, 0);
	assert_int_equal(seen_for(s, 500)->lost_user, 0);
	assert_true(is_empty(s->stacks_fd));
}

/* Many stacks and Python stacks, each named by two sample keys, plus a few no sample names
 * (their count did not fit): every sample reads its stacks, and the drain empties both maps. */
static void test_drain_clears_many_stacks_and_python_stacks(void **state)
{
	struct test_state *s = start(state);
	static struct interp_stack py = { .nframes = 1 };
	__u64 hash, count = 1;
	struct sample_key k;
	__u32 i;
	int py_fd;

	py_fd = bpf_map_create(BPF_MAP_TYPE_HASH, "drain_pystacks", sizeof(__u64), sizeof(py), 512,
			       NULL);
	assert_true(py_fd >= 0);
	drain_set_interp_stacks(s->d, py_fd);
	for (i = 0; i < MAX_KEYS / 2 + 3; i++) {
		hash = 0x5000 + i;
		put_stack(s, hash, 0x400000 + i);
		put_stack(s, hash + 0x1000, 0xffffffff81000000ull + i);
		assert_int_equal(bpf_map_update_elem(py_fd, &hash, &py, BPF_ANY), 0);
	}
	memset(&k, 0, sizeof(k));
	for (i = 0; i < MAX_KEYS; i++) { /* the last 3 stacks: named by no sample */
		k.pid = 1000 + i;
		k.user_stack_hash = 0x5000 + i / 2;
		k.kern_stack_hash = 0x6000 + i / 2;
		k.interp_stack_hash = 0x5000 + i / 2;
		assert_int_equal(bpf_map_update_elem(s->counts_fd, &k, &count, BPF_ANY), 0);
	}
	assert_int_equal(drain_window(s->d, s->counts_fd, s->stacks_fd, -1, on_sample, s), 0);
	assert_int_equal(s->nseen, MAX_KEYS);
	for (i = 0; i < MAX_KEYS; i++) {
		assert_int_equal(seen_for(s, 1000 + i)->user_leaf, 0x400000 + i / 2);
		assert_int_equal(seen_for(s, 1000 + i)->kern_leaf, 0xffffffff81000000ull + i / 2);
		assert_int_equal(seen_for(s, 1000 + i)->lost_user, 0);
	}
	assert_true(is_empty(s->stacks_fd));
	assert_true(is_empty(py_fd));
	drain_set_interp_stacks(s->d, -1);
	close(py_fd);
}

static void on_keys(void *ctx, const struct sample_key *keys, uint32_t n)
{
	struct test_state *s = ctx;
	uint32_t i;

	s->nkey_calls++;
	s->seen_at_keys = s->nseen;
	for (i = 0; i < n && s->nkeys < MAX_KEYS; i++)
		s->key_pids[s->nkeys++] = keys[i].pid;
}

/* The keys function sees every key of the window once, before the first sample is handed on:
 * the agent reads the processes' files there, never with a sample in hand. */
static void test_drain_hands_the_keys_over_before_the_samples(void **state)
{
	struct test_state *s = start(state);
	int found100 = 0, found200 = 0;
	size_t i;

	put_stack(s, 0x11, 0x401000);
	put(s, 100, 0x11, 0x11, 7);
	put(s, 200, 0x11, 0x11, 3);
	drain_set_keys_fn(s->d, on_keys, s);
	assert_int_equal(drain_window(s->d, s->counts_fd, s->stacks_fd, -1, on_sample, s), 0);
	assert_int_equal(s->nkey_calls, 1);
	assert_int_equal(s->seen_at_keys, 0);
	assert_int_equal(s->nseen, 2);
	assert_int_equal(s->nkeys, 2);
	for (i = 0; i < s->nkeys; i++) {
		found100 += s->key_pids[i] == 100;
		found200 += s->key_pids[i] == 200;
	}
	assert_int_equal(found100, 1);
	assert_int_equal(found200, 1);
	/* An empty window calls nothing. */
	assert_int_equal(drain_window(s->d, s->counts_fd, s->stacks_fd, -1, on_sample, s), 0);
	assert_int_equal(s->nkey_calls, 1);
}

#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_drain_reads_counts_with_their_stacks),
		T(test_drain_marks_stacks_the_kernel_could_not_keep),
		T(test_drain_empties_both_maps),
		T(test_drain_reads_a_full_window_in_batches),
		T(test_drain_shared_stacks_keeps_the_stack_map),
		T(test_drain_keeps_only_the_frames_a_stack_has),
		T(test_drain_clears_many_stacks_and_python_stacks),
		T(test_drain_hands_the_keys_over_before_the_samples),
	};

	return cmocka_run_group_tests_name("drain", tests, NULL, NULL);
}
