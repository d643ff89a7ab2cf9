// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Unit tests for aggregate, fed as the agent feeds it: drain reads real BPF maps filled from user
 * space (a hash map stands in for the stack-trace map, which only BPF programs can fill),
 * stack_resolve symbolizes through a fake proc root (service names, JIT symbols, kallsyms), and
 * the flushed profiles are decoded and checked label by label. */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include <bpf/bpf.h>

#include "discover/proc_table.h"
#include "pprof_file.h"
#include "profile/aggregate.h"
#include "profile/drain.h"
#include "symbolize/stack_resolve.h"
#include "symbolize/symcache.h"
#include "tmpdir.h"
#include "util/spanprof_types.h"

#define PERIOD_NS 10000000LL /* 100 Hz */
#define T0 1700000000000000000LL
#define T1 (T0 + 15000000000LL)
#define T2 (T1 + 15000000000LL)
#define MAX_KEYS 64
#define MAX_FLUSHED 8

#define PID_CHECKOUT 1001
#define PID_PAYMENTS 1002
#define PID_SEARCH 1003

/* Addresses the fake kallsyms and perf maps name. */
#define KADDR_ENTRY 0xffffffff81000010ull /* in kfunc_entry */
#define KADDR_LEAF 0xffffffff81000810ull /* in kfunc_leaf */
#define UADDR_LEAF 0x10000010ull /* in jit_leaf */
#define UADDR_CALLER 0x10001020ull /* return address in jit_caller */

struct flushed {
	char service[64];
	int64_t start_ns;
	Perftools__Profiles__Profile *prof;
};

struct test_state {
	char *root; /* fake proc root; also holds kallsyms and the perf maps */
	char why[256]; /* why BPF maps are unavailable, when they are */
	int counts_fd; /* struct sample_key -> __u64 */
	int stacks_fd; /* the window's stacks as BPF stores them: __u64 hash -> struct
			* spanprof_user_stack */
	int names_fd; /* span name id -> struct span_name, as the span hook fills it */
	struct symcache *sc;
	struct proc_table *procs;
	struct drain *d;
	struct stack_resolve *resolve;
	struct aggregate *a;
	struct flushed out[MAX_FLUSHED];
	size_t nout;
};

static void write_text(const char *root, const char *name, const char *text, size_t len)
{
	char path[PATH_MAX];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", root, name);
	f = fopen(path, "w");
	assert_non_null(f);
	assert_int_equal(fwrite(text, 1, len, f), len);
	fclose(f);
}

/* <root>/PID with environ (OTEL_SERVICE_NAME=svc), comm, maps (just a vdso), status (real uid
 * `uid`) and a root link to "/", plus <root>/perf-PID.map naming the JIT addresses above. */
static void fake_proc_as(const char *root, int pid, const char *svc, uid_t uid)
{
	static const char perf_map[] = "10000000 100 jit_leaf\n10001000 100 jit_caller\n";
	static const char maps[] = "7ffd00000000-7ffd00002000 r-xp 00000000 00:00 0 [vdso]\n";
	char name[64], text[256], path[PATH_MAX];
	int n;

	snprintf(path, sizeof(path), "%s/%d", root, pid);
	assert_int_equal(mkdir(path, 0755), 0);
	n = snprintf(text, sizeof(text), "OTEL_SERVICE_NAME=%s%cHOME=/", svc, 0);
	snprintf(name, sizeof(name), "%d/environ", pid);
	write_text(root, name, text, (size_t)n + 1);
	snprintf(name, sizeof(name), "%d/comm", pid);
	write_text(root, name, "worker\n", 7);
	snprintf(name, sizeof(name), "%d/maps", pid);
	write_text(root, name, maps, strlen(maps));
	n = snprintf(text, sizeof(text), "Name:\tworker\nUid:\t%d\t%d\t%d\t%d\nNSpid:\t%d\n",
		     (int)uid, (int)uid, (int)uid, (int)uid, pid);
	snprintf(name, sizeof(name), "%d/status", pid);
	write_text(root, name, text, (size_t)n);
	snprintf(path, sizeof(path), "%s/%d/root", root, pid);
	assert_int_equal(symlink("/", path), 0);
	snprintf(name, sizeof(name), "perf-%d.map", pid);
	write_text(root, name, perf_map, strlen(perf_map));
}

static void fake_proc(const char *root, int pid, const char *svc)
{
	fake_proc_as(root, pid, svc, getuid());
}

static int create_maps(struct test_state *s)
{
	s->counts_fd = bpf_map_create(BPF_MAP_TYPE_HASH, "test_counts", sizeof(struct sample_key),
				      sizeof(__u64), MAX_KEYS, NULL);
	if (s->counts_fd < 0)
		goto fail;
	s->stacks_fd = bpf_map_create(BPF_MAP_TYPE_HASH, "test_stacks", sizeof(__u64),
				      sizeof(struct spanprof_user_stack), 2 * MAX_KEYS, NULL);
	if (s->stacks_fd < 0)
		goto fail;
	s->names_fd = bpf_map_create(BPF_MAP_TYPE_HASH, "test_names", sizeof(__u64),
				     sizeof(struct span_name), MAX_KEYS, NULL);
	if (s->names_fd < 0)
		goto fail;
	return 0;
fail:
	snprintf(s->why, sizeof(s->why), "bpf_map_create: %s", strerror(errno));
	return -1;
}

static int setup(void **state)
{
	static const char kallsyms[] = "ffffffff81000000 T kfunc_entry\n"
				       "ffffffff81000800 T kfunc_leaf\n"
				       "ffffffff81001000 T kfunc_after\n";
	struct test_state *s = calloc(1, sizeof(*s));

	if (!s)
		return -1;
	s->counts_fd = s->stacks_fd = s->names_fd = -1;
	s->root = tmpdir_new("aggregate");
	if (!s->root) {
		free(s);
		return -1;
	}
	*state = s;
	if (geteuid() != 0) {
		snprintf(s->why, sizeof(s->why), "creating BPF maps needs root");
		return 0;
	}
	if (create_maps(s))
		return 0;
	write_text(s->root, "kallsyms", kallsyms, strlen(kallsyms));
	fake_proc(s->root, PID_CHECKOUT, "checkout");
	fake_proc(s->root, PID_PAYMENTS, "payments");
	fake_proc(s->root, PID_SEARCH, "search");
	return 0;
}

static int teardown(void **state)
{
	struct test_state *s = *state;
	size_t i;

	aggregate_free(s->a);
	free(s->resolve);
	drain_free(s->d);
	proc_table_free(s->procs);
	symcache_free(s->sc);
	for (i = 0; i < s->nout; i++)
		pprof_file_free(s->out[i].prof);
	if (s->counts_fd >= 0)
		close(s->counts_fd);
	if (s->stacks_fd >= 0)
		close(s->stacks_fd);
	if (s->names_fd >= 0)
		close(s->names_fd);
	tmpdir_remove(s->root);
	free(s);
	return 0;
}

/* Skips the test (after saying why) without root or BPF; else builds the aggregate. */
static struct test_state *start(void **state, enum span_scope scope, size_t max_services)
{
	struct test_state *s = *state;
	char kallsyms[PATH_MAX];
	struct aggregate_options opts = {
		.period_ns = PERIOD_NS,
		.scope = scope,
		.max_services = max_services,
	};
	struct symcache_limits lim = {
		.max_modules = 4,
		.max_pids = 8,
		.proc_root = s->root,
		.debug_root = s->root,
		.kallsyms_path = kallsyms,
		.perf_map_dir = s->root,
	};

	if (s->why[0]) {
		print_message("skipping: %s\n", s->why);
		skip();
	}
	snprintf(kallsyms, sizeof(kallsyms), "%s/kallsyms", s->root);
	s->sc = symcache_new(&lim);
	assert_non_null(s->sc);
	s->procs = proc_table_new(16, s->root);
	assert_non_null(s->procs);
	s->d = drain_new(MAX_KEYS, 2 * MAX_KEYS);
	assert_non_null(s->d);
	s->resolve = malloc(sizeof(*s->resolve));
	assert_non_null(s->resolve);
	s->a = aggregate_new(&opts, s->procs);
	assert_non_null(s->a);
	aggregate_start(s->a, T0);
	return s;
}

/* What the agent does with each drained sample: symbolize it, then aggregate it. */
static void on_sample(void *ctx, const struct sample *smp)
{
	struct test_state *s = ctx;

	stack_resolve(s->resolve, s->sc, smp->key->pid, smp->kern_ips, smp->lost_kern,
		      smp->user_ips, smp->lost_user);
	aggregate_add(s->a, smp, s->resolve->frames, s->resolve->nframes);
}

/* Drains the count map, with stacks from stacks_fd, through the pipeline. */
static int drain_into(struct test_state *s, int stacks_fd)
{
	return drain_window(s->d, s->counts_fd, stacks_fd, s->names_fd, on_sample, s);
}

/* The tests name stacks by small ids: stack id >= 0 is stored under hash id + 1 (put_stack);
 * -EFAULT is no stack (hash 0); any other negative id a stack the BPF side could not store (a
 * hash the map does not hold). */
#define LOST_STACK_HASH 0xdeadbeefull
static __u64 stack_hash_of(__s32 id)
{
	if (id >= 0)
		return (__u64)id + 1;
	return id == -EFAULT ? 0 : LOST_STACK_HASH;
}

static struct sample_key key_of(__u32 pid, __s32 user_id, __s32 kern_id)
{
	struct sample_key k;

	memset(&k, 0, sizeof(k)); /* padding too: the whole struct is the hash key */
	k.pid = pid;
	k.user_stack_hash = stack_hash_of(user_id);
	k.kern_stack_hash = stack_hash_of(kern_id);
	return k;
}

/* Gives k a span: trace 0102..10, span a1..a8, root b1..b8 (or all zero), and a name, which
 * goes into the names map as the span hook interns it (any id works: the agent only looks up). */
static void set_span(const struct test_state *s, struct sample_key *k, int with_root,
		     const char *name)
{
	struct span_name value;
	int i;

	k->has_span = 1;
	k->span.abi_version = SPANPROF_ABI_VERSION;
	for (i = 0; i < 16; i++)
		k->span.trace_id[i] = (__u8)(i + 1);
	for (i = 0; i < 8; i++) {
		k->span.span_id[i] = (__u8)(0xa1 + i);
		k->span.root_span_id[i] = with_root ? (__u8)(0xb1 + i) : 0;
	}
	memset(&value, 0, sizeof(value));
	strncpy(value.name, name, sizeof(value.name) - 1);
	k->span.name_id = 0x5a5a0000u + strlen(name);
	assert_int_equal(bpf_map_update_elem(s->names_fd, &k->span.name_id, &value, BPF_ANY), 0);
}

static void put_count(int fd, const struct sample_key *k, __u64 count)
{
	assert_int_equal(bpf_map_update_elem(fd, k, &count, BPF_ANY), 0);
}

static void put_stack(const struct test_state *s, __s32 id, __u64 ip0, __u64 ip1)
{
	struct spanprof_user_stack st = { .nframes = ip1 ? 2 : 1 };
	__u64 hash = stack_hash_of(id);

	st.ips[0] = ip0;
	st.ips[1] = ip1;
	assert_int_equal(bpf_map_update_elem(s->stacks_fd, &hash, &st, BPF_ANY), 0);
}

static int on_profile(void *ctx, const char *service, struct pprof_builder *b)
{
	struct test_state *s = ctx;
	struct flushed *f;
	uint8_t *buf = NULL;
	size_t len = 0;

	assert_true(s->nout < MAX_FLUSHED);
	f = &s->out[s->nout++];
	snprintf(f->service, sizeof(f->service), "%s", service);
	f->start_ns = pprof_builder_time(b);
	assert_int_equal(pprof_builder_encode(b, &buf, &len), 0);
	f->prof = pprof_decode(buf, len);
	free(buf);
	assert_non_null(f->prof);
	return 0;
}

static const struct flushed *flushed_for(const struct test_state *s, const char *service)
{
	size_t i;

	for (i = 0; i < s->nout; i++)
		if (!strcmp(s->out[i].service, service))
			return &s->out[i];
	fail_msg("no profile flushed for service %s", service);
	return NULL;
}

static int map_is_empty(int fd, size_t key_size)
{
	char key[sizeof(struct sample_key)];

	assert_true(key_size <= sizeof(key));
	return bpf_map_get_next_key(fd, NULL, key) && errno == ENOENT;
}

/* Innermost function name of location number i of sample smp. */
static const char *frame_name(const Perftools__Profiles__Profile *p,
			      const Perftools__Profiles__Sample *smp, size_t i)
{
	const Perftools__Profiles__Location *loc;
	const Perftools__Profiles__Function *fn;

	assert_true(i < smp->n_location_id);
	loc = pprof_location(p, smp->location_id[i]);
	assert_non_null(loc);
	assert_true(loc->n_line > 0);
	fn = pprof_function(p, loc->line[0]->function_id);
	assert_non_null(fn);
	return pprof_str(p, fn->name);
}

static void test_aggregate_flushes_one_profile_per_service_with_window_start(void **state)
{
	struct test_state *s = start(state, SPAN_SCOPE_ROOT, 4);
	struct sample_key k1 = key_of(PID_CHECKOUT, -EFAULT, -EFAULT);
	struct sample_key k2 = key_of(PID_PAYMENTS, -EFAULT, -EFAULT);
	const struct flushed *f;

	put_count(s->counts_fd, &k1, 3);
	put_count(s->counts_fd, &k2, 5);
	assert_int_equal(drain_into(s, s->stacks_fd), 0);
	assert_int_equal(aggregate_flush(s->a, T1, on_profile, s), 0);

	assert_int_equal(s->nout, 2);
	f = flushed_for(s, "checkout");
	assert_int_equal(f->start_ns, T0);
	assert_int_equal(f->prof->time_nanos, T0);
	assert_int_equal(f->prof->duration_nanos, T1 - T0);
	assert_int_equal(pprof_total_value(f->prof), 3 * PERIOD_NS);
	f = flushed_for(s, "payments");
	assert_int_equal(f->start_ns, T0);
	assert_int_equal(pprof_total_value(f->prof), 5 * PERIOD_NS);

	/* the next window starts where the flush ended, with no leftover services */
	put_count(s->counts_fd, &k2, 2);
	assert_int_equal(drain_into(s, s->stacks_fd), 0);
	assert_int_equal(aggregate_flush(s->a, T2, on_profile, s), 0);
	assert_int_equal(s->nout, 3);
	assert_string_equal(s->out[2].service, "payments");
	assert_int_equal(s->out[2].start_ns, T1);
	assert_int_equal(s->out[2].prof->duration_nanos, T2 - T1);
	assert_int_equal(pprof_total_value(s->out[2].prof), 2 * PERIOD_NS);
}

static void test_aggregate_values_are_count_times_period(void **state)
{
	struct test_state *s = start(state, SPAN_SCOPE_ROOT, 4);
	struct sample_key a = key_of(PID_CHECKOUT, -EFAULT, 0);
	struct sample_key b = key_of(PID_CHECKOUT, -EFAULT, 1);
	const Perftools__Profiles__Profile *p;
	struct aggregate_stats st;
	struct drain_stats ds;
	size_t i;

	put_stack(s, 0, KADDR_ENTRY, 0);
	put_stack(s, 1, KADDR_LEAF, 0);
	put_count(s->counts_fd, &a, 7);
	put_count(s->counts_fd, &b, 11);
	assert_int_equal(drain_into(s, s->stacks_fd), 0);
	assert_int_equal(aggregate_flush(s->a, T1, on_profile, s), 0);

	p = flushed_for(s, "checkout")->prof;
	assert_int_equal(p->n_sample, 2);
	for (i = 0; i < p->n_sample; i++) {
		const char *leaf = frame_name(p, p->sample[i], 0);

		assert_int_equal(p->sample[i]->n_value, 1);
		if (!strcmp(leaf, "kfunc_entry"))
			assert_int_equal(p->sample[i]->value[0], 7 * PERIOD_NS);
		else if (!strcmp(leaf, "kfunc_leaf"))
			assert_int_equal(p->sample[i]->value[0], 11 * PERIOD_NS);
		else
			fail_msg("unexpected leaf %s", leaf);
	}
	aggregate_get_stats(s->a, &st);
	drain_get_stats(s->d, &ds);
	assert_int_equal(st.samples, 18);
	assert_int_equal(ds.keys, 2);
	assert_int_equal(st.samples_in_spans, 0);
}

static void test_aggregate_symbolizes_kernel_then_user_frames(void **state)
{
	struct test_state *s = start(state, SPAN_SCOPE_ROOT, 4);
	struct sample_key k = key_of(PID_PAYMENTS, 4, 9);
	const Perftools__Profiles__Profile *p;
	const Perftools__Profiles__Sample *smp;

	put_stack(s, 9, KADDR_LEAF, KADDR_ENTRY);
	put_stack(s, 4, UADDR_LEAF, UADDR_CALLER);
	put_count(s->counts_fd, &k, 1);
	assert_int_equal(drain_into(s, s->stacks_fd), 0);
	assert_int_equal(aggregate_flush(s->a, T1, on_profile, s), 0);

	p = flushed_for(s, "payments")->prof;
	assert_int_equal(p->n_sample, 1);
	smp = p->sample[0];
	assert_int_equal(smp->n_location_id, 4);
	assert_string_equal(frame_name(p, smp, 0), "kfunc_leaf");
	assert_string_equal(frame_name(p, smp, 1), "kfunc_entry");
	assert_string_equal(frame_name(p, smp, 2), "jit_leaf");
	assert_string_equal(frame_name(p, smp, 3), "jit_caller");
}

/* Drains one key of checkout carrying a span (with or without a local root) and returns the
 * only sample, after checking what does not depend on the scope. */
static const Perftools__Profiles__Sample *drain_span_sample(struct test_state *s, int with_root,
							    const Perftools__Profiles__Profile **p)
{
	struct sample_key k = key_of(PID_CHECKOUT, -EFAULT, -EFAULT);

	set_span(s, &k, with_root, "GET /cart");
	put_count(s->counts_fd, &k, 4);
	assert_int_equal(drain_into(s, s->stacks_fd), 0);
	assert_int_equal(aggregate_flush(s->a, T1, on_profile, s), 0);
	*p = flushed_for(s, "checkout")->prof;
	assert_int_equal((*p)->n_sample, 1);
	assert_int_equal((*p)->sample[0]->value[0], 4 * PERIOD_NS);
	assert_string_equal(pprof_sample_label(*p, (*p)->sample[0], "trace_id"),
			    "0102030405060708090a0b0c0d0e0f10");
	assert_string_equal(pprof_sample_label(*p, (*p)->sample[0], "span_name"), "GET /cart");
	return (*p)->sample[0];
}

static void test_aggregate_labels_root_span_under_root_scope(void **state)
{
	struct test_state *s = start(state, SPAN_SCOPE_ROOT, 4);
	const Perftools__Profiles__Profile *p;
	const Perftools__Profiles__Sample *smp = drain_span_sample(s, 1, &p);
	struct aggregate_stats st;

	assert_string_equal(pprof_sample_label(p, smp, "span_id"), "b1b2b3b4b5b6b7b8");
	aggregate_get_stats(s->a, &st);
	assert_int_equal(st.samples_in_spans, 4);
}

/* A span name with a newline, ESC, DEL and a cut UTF-8 sequence reaches the profile cleaned. */
static void test_aggregate_cleans_control_characters_in_span_name(void **state)
{
	struct test_state *s = start(state, SPAN_SCOPE_ROOT, 4);
	struct sample_key k = key_of(PID_CHECKOUT, -EFAULT, -EFAULT);
	const Perftools__Profiles__Profile *p;

	set_span(s, &k, 1, "GET /\n\x1b[1mx\x7f\xe2\x82");
	put_count(s->counts_fd, &k, 1);
	assert_int_equal(drain_into(s, s->stacks_fd), 0);
	assert_int_equal(aggregate_flush(s->a, T1, on_profile, s), 0);
	p = flushed_for(s, "checkout")->prof;
	assert_int_equal(p->n_sample, 1);
	assert_string_equal(pprof_sample_label(p, p->sample[0], "span_name"), "GET /??[1mx???");
}

/* A Go span_name label alone (or an unsampled Go span): zero ids, a name id. Only the name is
 * labelled, resolved through the names map like a hook span's. */
static void test_aggregate_labels_only_the_name_of_a_span_with_zero_ids(void **state)
{
	struct test_state *s = start(state, SPAN_SCOPE_ROOT, 4);
	struct sample_key k = key_of(PID_CHECKOUT, -EFAULT, -EFAULT);
	const Perftools__Profiles__Profile *p;

	set_span(s, &k, 0, "GET /unsampled");
	memset(k.span.trace_id, 0, sizeof(k.span.trace_id));
	memset(k.span.span_id, 0, sizeof(k.span.span_id));
	put_count(s->counts_fd, &k, 2);
	assert_int_equal(drain_into(s, s->stacks_fd), 0);
	assert_int_equal(aggregate_flush(s->a, T1, on_profile, s), 0);
	p = flushed_for(s, "checkout")->prof;
	assert_int_equal(p->n_sample, 1);
	assert_string_equal(pprof_sample_label(p, p->sample[0], "span_name"), "GET /unsampled");
	assert_null(pprof_sample_label(p, p->sample[0], "span_id"));
	assert_null(pprof_sample_label(p, p->sample[0], "trace_id"));
}

static void test_aggregate_labels_active_span_under_all_scope(void **state)
{
	struct test_state *s = start(state, SPAN_SCOPE_ALL, 4);
	const Perftools__Profiles__Profile *p;
	const Perftools__Profiles__Sample *smp = drain_span_sample(s, 1, &p);

	assert_string_equal(pprof_sample_label(p, smp, "span_id"), "a1a2a3a4a5a6a7a8");
}

static void test_aggregate_labels_span_itself_when_root_is_zero(void **state)
{
	struct test_state *s = start(state, SPAN_SCOPE_ROOT, 4);
	const Perftools__Profiles__Profile *p;
	const Perftools__Profiles__Sample *smp = drain_span_sample(s, 0, &p);

	assert_string_equal(pprof_sample_label(p, smp, "span_id"), "a1a2a3a4a5a6a7a8");
}

static void test_aggregate_omits_span_labels_without_span(void **state)
{
	struct test_state *s = start(state, SPAN_SCOPE_ALL, 4);
	struct sample_key with = key_of(PID_CHECKOUT, -EFAULT, 0);
	struct sample_key without = key_of(PID_CHECKOUT, -EFAULT, 1);
	const Perftools__Profiles__Profile *p;
	const Perftools__Profiles__Sample *smp;
	struct aggregate_stats st;
	size_t i;

	set_span(s, &with, 1, "POST /pay");
	put_stack(s, 0, KADDR_ENTRY, 0);
	put_stack(s, 1, KADDR_LEAF, 0);
	put_count(s->counts_fd, &with, 2);
	put_count(s->counts_fd, &without, 3);
	assert_int_equal(drain_into(s, s->stacks_fd), 0);
	assert_int_equal(aggregate_flush(s->a, T1, on_profile, s), 0);

	p = flushed_for(s, "checkout")->prof;
	assert_int_equal(p->n_sample, 2);
	for (i = 0; i < p->n_sample; i++) {
		smp = p->sample[i];
		if (!strcmp(frame_name(p, smp, 0), "kfunc_leaf")) {
			assert_int_equal(smp->n_label, 0);
			assert_null(pprof_sample_label(p, smp, "span_id"));
			assert_null(pprof_sample_label(p, smp, "trace_id"));
			assert_null(pprof_sample_label(p, smp, "span_name"));
		} else {
			assert_string_equal(pprof_sample_label(p, smp, "span_id"),
					    "a1a2a3a4a5a6a7a8");
		}
	}
	aggregate_get_stats(s->a, &st);
	assert_int_equal(st.samples, 5);
	assert_int_equal(st.samples_in_spans, 2);
}

static void test_aggregate_drain_empties_count_and_stack_maps(void **state)
{
	struct test_state *s = start(state, SPAN_SCOPE_ROOT, 4);
	struct sample_key k1 = key_of(PID_CHECKOUT, 1, 0);
	struct sample_key k2 = key_of(PID_PAYMENTS, -EFAULT, 2);

	put_stack(s, 0, KADDR_ENTRY, 0);
	put_stack(s, 1, UADDR_LEAF, 0);
	put_stack(s, 2, KADDR_LEAF, 0);
	put_stack(s, 3, KADDR_LEAF, KADDR_ENTRY); /* no key refers to it: still cleared */
	put_count(s->counts_fd, &k1, 1);
	put_count(s->counts_fd, &k2, 1);
	assert_false(map_is_empty(s->counts_fd, sizeof(struct sample_key)));
	assert_int_equal(drain_into(s, s->stacks_fd), 0);
	assert_true(map_is_empty(s->counts_fd, sizeof(struct sample_key)));
	assert_true(map_is_empty(s->stacks_fd, sizeof(__u64)));
}

static void test_aggregate_counts_missing_stack_as_lost(void **state)
{
	struct test_state *s = start(state, SPAN_SCOPE_ROOT, 4);
	struct sample_key k = key_of(PID_SEARCH, -EFAULT, -EEXIST);
	const Perftools__Profiles__Profile *p;
	struct aggregate_stats st;
	struct drain_stats ds;

	put_count(s->counts_fd, &k, 6);
	assert_int_equal(drain_into(s, s->stacks_fd), 0);
	aggregate_get_stats(s->a, &st);
	drain_get_stats(s->d, &ds);
	assert_int_equal(ds.stacks_lost, 1);
	assert_int_equal(ds.map_errors, 0);
	assert_int_equal(st.samples, 6);
	assert_int_equal(aggregate_flush(s->a, T1, on_profile, s), 0);
	p = flushed_for(s, "search")->prof;
	assert_int_equal(p->n_sample, 1);
	assert_int_equal(p->sample[0]->n_location_id, 1);
	assert_string_equal(frame_name(p, p->sample[0], 0), "[kernel stack lost]");
}

/* The counts the overflow test gives each service. */
static uint64_t overflow_count_of(const char *service)
{
	if (!strcmp(service, "checkout"))
		return 2;
	if (!strcmp(service, "payments"))
		return 30;
	if (!strcmp(service, "search"))
		return 400;
	return 0;
}

static void test_aggregate_counts_samples_beyond_max_services(void **state)
{
	struct test_state *s = start(state, SPAN_SCOPE_ROOT, 1);
	struct sample_key k1 = key_of(PID_CHECKOUT, -EFAULT, -EFAULT);
	struct sample_key k2 = key_of(PID_PAYMENTS, -EFAULT, -EFAULT);
	struct sample_key k3 = key_of(PID_SEARCH, -EFAULT, -EFAULT);
	struct aggregate_stats st;
	uint64_t kept;

	put_count(s->counts_fd, &k1, 2);
	put_count(s->counts_fd, &k2, 30);
	put_count(s->counts_fd, &k3, 400);
	assert_int_equal(drain_into(s, s->stacks_fd), 0);
	assert_int_equal(aggregate_flush(s->a, T1, on_profile, s), 0);

	/* which service wins depends on the hash map's order: the others are what overflowed */
	assert_int_equal(s->nout, 1);
	kept = overflow_count_of(s->out[0].service);
	assert_true(kept != 0);
	assert_int_equal(pprof_total_value(s->out[0].prof), (int64_t)kept * PERIOD_NS);
	aggregate_get_stats(s->a, &st);
	assert_int_equal(st.service_overflow, 432 - kept);
	assert_int_equal(st.samples, kept);
	assert_true(map_is_empty(s->counts_fd, sizeof(struct sample_key)));
}

/* Drains one sample of `count` for each of n processes of uid, pids from pid0, each naming its own
 * service "<prefix><i>". */
static void drain_services_of(struct test_state *s, uid_t uid, int pid0, int n, const char *prefix,
			      uint64_t count)
{
	struct sample_key k;
	char svc[32];
	int i;

	for (i = 0; i < n; i++) {
		snprintf(svc, sizeof(svc), "%s%d", prefix, i);
		fake_proc_as(s->root, pid0 + i, svc, uid);
		k = key_of((__u32)(pid0 + i), -EFAULT, -EFAULT);
		put_count(s->counts_fd, &k, count);
	}
	assert_int_equal(drain_into(s, s->stacks_fd), 0);
}

/* One user's many services, drained first, cannot take every slot of the window: it gets half,
 * a second user half of what is left, and root's service, drained last, still has one. */
static void test_aggregate_services_fair_per_user(void **state)
{
	struct test_state *s = start(state, SPAN_SCOPE_ROOT, 4);
	struct sample_key root_key = key_of(PID_CHECKOUT, -EFAULT, -EFAULT);
	struct aggregate_stats st;

	drain_services_of(s, 1000, 2001, 4, "flood", 5);
	aggregate_get_stats(s->a, &st);
	assert_int_equal(st.service_fair_refused, 2 * 5); /* holds 2 of 4, 2 free */
	drain_services_of(s, 1001, 3001, 2, "second", 7);
	aggregate_get_stats(s->a, &st);
	assert_int_equal(st.service_fair_refused, 2 * 5 + 7); /* holds 1, 1 free */
	put_count(s->counts_fd, &root_key, 3);
	assert_int_equal(drain_into(s, s->stacks_fd), 0);

	assert_int_equal(aggregate_flush(s->a, T1, on_profile, s), 0);
	assert_int_equal(s->nout, 4);
	assert_int_equal(pprof_total_value(flushed_for(s, "checkout")->prof), 3 * PERIOD_NS);
	aggregate_get_stats(s->a, &st);
	assert_int_equal(st.service_fair_refused, 2 * 5 + 7);
	assert_int_equal(st.service_overflow, st.service_fair_refused);
	assert_int_equal(st.samples, 2 * 5 + 7 + 3);
}

static void test_aggregate_marks_lost_user_stack(void **state)
{
	struct test_state *s = start(state, SPAN_SCOPE_ROOT, 4);
	struct sample_key k = key_of(PID_CHECKOUT, -EEXIST, -EFAULT);
	const Perftools__Profiles__Profile *p;

	put_count(s->counts_fd, &k, 1);
	assert_int_equal(drain_into(s, s->stacks_fd), 0);
	assert_int_equal(aggregate_flush(s->a, T1, on_profile, s), 0);

	p = flushed_for(s, "checkout")->prof;
	assert_int_equal(p->n_sample, 1);
	/* -EFAULT means "no kernel stack" (a user-mode sample): no frame, no marker */
	assert_int_equal(p->sample[0]->n_location_id, 1);
	assert_string_equal(frame_name(p, p->sample[0], 0), "[user stack lost]");
}

static void test_aggregate_marks_lost_kernel_stack_above_user_frames(void **state)
{
	struct test_state *s = start(state, SPAN_SCOPE_ROOT, 4);
	struct sample_key k = key_of(PID_CHECKOUT, 3, -EEXIST);
	const Perftools__Profiles__Profile *p;

	put_stack(s, 3, UADDR_LEAF, UADDR_CALLER);
	put_count(s->counts_fd, &k, 1);
	assert_int_equal(drain_into(s, s->stacks_fd), 0);
	assert_int_equal(aggregate_flush(s->a, T1, on_profile, s), 0);

	p = flushed_for(s, "checkout")->prof;
	assert_int_equal(p->n_sample, 1);
	assert_int_equal(p->sample[0]->n_location_id, 3);
	assert_string_equal(frame_name(p, p->sample[0], 0), "[kernel stack lost]");
	assert_string_equal(frame_name(p, p->sample[0], 1), "jit_leaf");
	assert_string_equal(frame_name(p, p->sample[0], 2), "jit_caller");
}

/* Names up to 255 bytes (ABI v2) come through whole; a name the kernel map no longer holds
 * leaves the label out and is counted. */
static void test_aggregate_long_span_names_and_lost_names(void **state)
{
	struct test_state *s = start(state, SPAN_SCOPE_ROOT, 4);
	struct sample_key k = key_of(PID_CHECKOUT, -EFAULT, -EFAULT);
	struct sample_key gone = key_of(PID_PAYMENTS, -EFAULT, -EFAULT);
	const Perftools__Profiles__Profile *p;
	struct drain_stats st;
	char name[256];

	memset(name, 'n', 255);
	name[255] = '\0';
	memcpy(name, "GET /api/v1/", 12);
	set_span(s, &k, 0, name);
	put_count(s->counts_fd, &k, 2);
	set_span(s, &gone, 0, "evicted");
	assert_int_equal(bpf_map_delete_elem(s->names_fd, &gone.span.name_id), 0);
	put_count(s->counts_fd, &gone, 3);
	assert_int_equal(drain_into(s, s->stacks_fd), 0);
	assert_int_equal(aggregate_flush(s->a, T1, on_profile, s), 0);
	p = flushed_for(s, "checkout")->prof;
	assert_string_equal(pprof_sample_label(p, p->sample[0], "span_name"), name);
	p = flushed_for(s, "payments")->prof;
	assert_null(pprof_sample_label(p, p->sample[0], "span_name"));
	assert_non_null(pprof_sample_label(p, p->sample[0], "span_id"));
	drain_get_stats(s->d, &st);
	assert_int_equal(st.span_names_lost, 3);
}

#define AGG_TEST(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		AGG_TEST(test_aggregate_flushes_one_profile_per_service_with_window_start),
		AGG_TEST(test_aggregate_values_are_count_times_period),
		AGG_TEST(test_aggregate_symbolizes_kernel_then_user_frames),
		AGG_TEST(test_aggregate_labels_root_span_under_root_scope),
		AGG_TEST(test_aggregate_cleans_control_characters_in_span_name),
		AGG_TEST(test_aggregate_labels_only_the_name_of_a_span_with_zero_ids),
		AGG_TEST(test_aggregate_labels_active_span_under_all_scope),
		AGG_TEST(test_aggregate_labels_span_itself_when_root_is_zero),
		AGG_TEST(test_aggregate_omits_span_labels_without_span),
		AGG_TEST(test_aggregate_drain_empties_count_and_stack_maps),
		AGG_TEST(test_aggregate_counts_missing_stack_as_lost),
		AGG_TEST(test_aggregate_counts_samples_beyond_max_services),
		AGG_TEST(test_aggregate_services_fair_per_user),
		AGG_TEST(test_aggregate_marks_lost_user_stack),
		AGG_TEST(test_aggregate_marks_lost_kernel_stack_above_user_frames),
		AGG_TEST(test_aggregate_long_span_names_and_lost_names),
	};

	return cmocka_run_group_tests_name("aggregate", tests, NULL, NULL);
}
