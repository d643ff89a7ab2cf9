// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Unit tests for pprof_builder_encode_chunks(): splitting by sample count and encoded size, each
 * chunk a complete profile with only the tables its samples use, nothing lost or reordered. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "pprof_file.h"
#include "pprof_test_maps.h"
#include "profile/pprof.h"
#include "tmpdir.h"
#include "view_fixture.h"

#define MAX_CHUNKS 256

struct chunks {
	Perftools__Profiles__Profile *p[MAX_CHUNKS];
	size_t len[MAX_CHUNKS], nsamples[MAX_CHUNKS];
	size_t n;
	int fail_at; /* 1-based call that returns -EIO; 0: never */
};

static int collect(void *ctx, const uint8_t *buf, size_t len, size_t nsamples)
{
	struct chunks *c = ctx;

	if (c->fail_at && (int)c->n + 1 == c->fail_at)
		return -EIO;
	assert_true(c->n < MAX_CHUNKS);
	c->p[c->n] = pprof_decode(buf, len);
	assert_non_null(c->p[c->n]);
	c->len[c->n] = len;
	c->nsamples[c->n] = nsamples;
	c->n++;
	return 0;
}

static void chunks_release(struct chunks *c)
{
	size_t i;

	for (i = 0; i < c->n; i++)
		pprof_file_free(c->p[i]);
}

/* Sample i: leaf "fn_<i>" (app or lib mapping), then main; labelled with a span id. */
static void add_numbered_sample(struct pprof_builder *b, int i, int use_lib)
{
	static const struct sym_mapping app = APP_MAP, lib = LIB_MAP;
	struct sym_frame stack[2] = { 0 };
	struct pprof_label labels[2];
	char name[32], span[17];

	snprintf(name, sizeof(name), "fn_%d", i);
	snprintf(span, sizeof(span), "%016x", i % 5);
	stack[0].has_mapping = 1;
	stack[0].mapping = use_lib ? lib : app;
	stack[0].addr = stack[0].mapping.start + 0x100 + (uint64_t)i * 16;
	stack[0].nlines = 1;
	stack[0].lines[0] = (struct sym_line){ name, use_lib ? "lib.c" : "app.c", 10 + i };
	stack[1].has_mapping = 1;
	stack[1].mapping = app;
	stack[1].addr = 0x400010;
	stack[1].nlines = 1;
	stack[1].lines[0] = (struct sym_line){ "main", "app.c", 3 };
	labels[0] = (struct pprof_label){ "span_id", span };
	labels[1] = (struct pprof_label){ "span_name", use_lib ? "lib_work" : "app_work" };
	assert_int_equal(pprof_builder_add_sample(b, stack, 2, 1 + i % 3, labels, 2), 0);
}

static struct pprof_builder *numbered_builder(int n, int lib_from)
{
	struct pprof_builder *b = pprof_builder_new(PERIOD_NS, T0, DURATION);
	int i;

	assert_non_null(b);
	for (i = 0; i < n; i++)
		add_numbered_sample(b, i, lib_from >= 0 && i >= lib_from);
	return b;
}

/* Sets bit i of used (n entries) and checks it is in range. */
static void mark_used(uint8_t *used, size_t n, uint64_t i)
{
	assert_true(i < n);
	used[i] = 1;
}

static void assert_all_used(const uint8_t *used, size_t n, const char *what)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!used[i])
			fail_msg("%s %zu is not used by any sample", what, i);
}

/* Reader rules plus "only what the samples use": dense ids, every id and string index resolves,
 * and every table entry and string is referenced. */
static void assert_complete_and_minimal(const Perftools__Profiles__Profile *p)
{
	uint8_t *str = calloc(p->n_string_table, 1), *loc = calloc(p->n_location + 1, 1);
	uint8_t *fn = calloc(p->n_function + 1, 1), *map = calloc(p->n_mapping + 1, 1);
	size_t i, j, nstr = p->n_string_table;

	assert_true(str && loc && fn && map);
	assert_true(nstr >= 3);
	assert_string_equal(p->string_table[0], "");
	str[0] = 1;
	assert_int_equal(p->n_sample_type, 1);
	mark_used(str, nstr, p->sample_type[0]->type);
	mark_used(str, nstr, p->sample_type[0]->unit);
	assert_string_equal(pprof_str(p, p->period_type->type), "cpu");
	assert_string_equal(pprof_str(p, p->period_type->unit), "nanoseconds");
	assert_int_equal(p->period, PERIOD_NS);
	assert_int_equal(p->time_nanos, T0);
	assert_int_equal(p->duration_nanos, DURATION);
	for (i = 0; i < p->n_sample; i++) {
		const Perftools__Profiles__Sample *s = p->sample[i];

		assert_int_equal(s->n_value, 1);
		for (j = 0; j < s->n_location_id; j++)
			mark_used(loc, p->n_location + 1, s->location_id[j]);
		for (j = 0; j < s->n_label; j++) {
			mark_used(str, nstr, s->label[j]->key);
			mark_used(str, nstr, s->label[j]->str);
		}
	}
	for (i = 0; i < p->n_location; i++) {
		const Perftools__Profiles__Location *l = p->location[i];

		assert_int_equal(l->id, i + 1);
		if (l->mapping_id)
			mark_used(map, p->n_mapping + 1, l->mapping_id);
		for (j = 0; j < l->n_line; j++)
			mark_used(fn, p->n_function + 1, l->line[j]->function_id);
	}
	for (i = 0; i < p->n_function; i++) {
		assert_int_equal(p->function[i]->id, i + 1);
		mark_used(str, nstr, p->function[i]->name);
		mark_used(str, nstr, p->function[i]->system_name);
		mark_used(str, nstr, p->function[i]->filename);
	}
	for (i = 0; i < p->n_mapping; i++) {
		assert_int_equal(p->mapping[i]->id, i + 1);
		mark_used(str, nstr, p->mapping[i]->filename);
		mark_used(str, nstr, p->mapping[i]->build_id);
	}
	assert_all_used(loc + 1, p->n_location, "location");
	assert_all_used(fn + 1, p->n_function, "function");
	assert_all_used(map + 1, p->n_mapping, "mapping");
	assert_all_used(str, nstr, "string");
	free(str);
	free(loc);
	free(fn);
	free(map);
}

/* Every chunk valid and minimal, and together they hold samples 0..n-1 in order, with their
 * values and span ids. */
static void assert_chunks_hold_all(const struct chunks *c, int n)
{
	char name[32], span[17];
	size_t k, i;
	int next = 0;

	for (k = 0; k < c->n; k++) {
		const Perftools__Profiles__Profile *p = c->p[k];

		assert_complete_and_minimal(p);
		assert_int_equal(p->n_sample, c->nsamples[k]);
		for (i = 0; i < p->n_sample; i++, next++) {
			snprintf(name, sizeof(name), "fn_%d", next);
			snprintf(span, sizeof(span), "%016x", next % 5);
			assert_string_equal(pprof_leaf_function(p, p->sample[i]), name);
			assert_true(pprof_sample_has_function(p, p->sample[i], "main"));
			assert_string_equal(pprof_sample_label(p, p->sample[i], "span_id"), span);
			assert_int_equal(p->sample[i]->value[0], (1 + next % 3) * PERIOD_NS);
		}
	}
	assert_int_equal(next, n);
}

static size_t full_encoded_len(struct pprof_builder *b)
{
	uint8_t *buf = NULL;
	size_t len = 0;

	assert_int_equal(pprof_builder_encode(b, &buf, &len), 0);
	free(buf);
	return len;
}

static void test_pprof_chunks_one_chunk_when_within_limits(void **state)
{
	struct pprof_builder *b = numbered_builder(10, -1);
	struct chunks c = { 0 };

	(void)state;
	assert_int_equal(pprof_builder_encode_chunks(b, 16000, 4 << 20, collect, &c), 0);
	assert_int_equal(c.n, 1);
	assert_chunks_hold_all(&c, 10);
	/* Every table entry is used, so the chunk is exactly the whole profile. */
	assert_int_equal(c.len[0], full_encoded_len(b));
	chunks_release(&c);
	pprof_builder_free(b);
}

static void test_pprof_chunks_split_by_sample_count(void **state)
{
	struct pprof_builder *b = numbered_builder(50, -1);
	struct chunks c = { 0 };

	(void)state;
	assert_int_equal(pprof_builder_encode_chunks(b, 20, 0, collect, &c), 0);
	assert_int_equal(c.n, 3);
	assert_int_equal(c.nsamples[0], 20);
	assert_int_equal(c.nsamples[1], 20);
	assert_int_equal(c.nsamples[2], 10);
	assert_chunks_hold_all(&c, 50);
	chunks_release(&c);
	pprof_builder_free(b);
}

static void test_pprof_chunks_split_by_encoded_size(void **state)
{
	struct pprof_builder *b = numbered_builder(300, 150);
	size_t full = full_encoded_len(b), max = full / 4, k;
	struct chunks c = { 0 };

	(void)state;
	assert_int_equal(pprof_builder_encode_chunks(b, 0, max, collect, &c), 0);
	/* Per-chunk headers and shared frames repeat, but smaller ids and indices save bytes. */
	assert_true(c.n >= 4);
	for (k = 0; k < c.n; k++) {
		assert_true(c.len[k] <= max);
		/* Filled greedily: no chunk but the last is less than half full. */
		if (k + 1 < c.n)
			assert_true(c.len[k] > max / 2);
	}
	assert_chunks_hold_all(&c, 300);
	chunks_release(&c);
	pprof_builder_free(b);
}

/* The size accounting is exact: a limit of the whole profile's size keeps it whole, one byte
 * less splits it. */
static void test_pprof_chunks_size_limit_is_exact(void **state)
{
	struct pprof_builder *b = numbered_builder(20, 10);
	size_t full = full_encoded_len(b);
	struct chunks c = { 0 }, d = { 0 };

	(void)state;
	assert_int_equal(pprof_builder_encode_chunks(b, 0, full, collect, &c), 0);
	assert_int_equal(c.n, 1);
	assert_int_equal(c.len[0], full);
	assert_int_equal(pprof_builder_encode_chunks(b, 0, full - 1, collect, &d), 0);
	assert_int_equal(d.n, 2);
	assert_true(d.len[0] <= full - 1 && d.len[1] <= full - 1);
	assert_chunks_hold_all(&d, 20);
	chunks_release(&c);
	chunks_release(&d);
	pprof_builder_free(b);
}

static int has_string(const Perftools__Profiles__Profile *p, const char *s)
{
	size_t i;

	for (i = 0; i < p->n_string_table; i++)
		if (!strcmp(p->string_table[i], s))
			return 1;
	return 0;
}

static void test_pprof_chunks_carry_only_their_tables(void **state)
{
	struct pprof_builder *b = numbered_builder(20, 10);
	struct chunks c = { 0 };

	(void)state;
	assert_int_equal(pprof_builder_encode_chunks(b, 10, 0, collect, &c), 0);
	assert_int_equal(c.n, 2);
	assert_chunks_hold_all(&c, 20);
	/* First chunk: app frames only; second: lib leaves plus main from the app. */
	assert_int_equal(c.p[0]->n_mapping, 1);
	assert_true(has_string(c.p[0], "/usr/bin/app"));
	assert_false(has_string(c.p[0], "/usr/lib/libfoo.so.1"));
	assert_false(has_string(c.p[0], "fn_10"));
	assert_false(has_string(c.p[0], "lib_work"));
	assert_int_equal(c.p[0]->n_function, 11);
	assert_int_equal(c.p[1]->n_mapping, 2);
	assert_false(has_string(c.p[1], "fn_9"));
	assert_false(has_string(c.p[1], "app_work"));
	assert_int_equal(c.p[1]->n_function, 11);
	chunks_release(&c);
	pprof_builder_free(b);
}

/* The uploader leaves trace_id out of pushes: the key goes from every sample and the string
 * table, the other labels and the sizes stay exact. */
static void test_pprof_chunks_omit_one_label_key(void **state)
{
	struct pprof_builder *b = numbered_builder(20, 10);
	const char *keys[8];
	struct chunks c = { 0 };
	size_t i, j, n;

	(void)state;
	n = pprof_builder_label_keys(b, keys, 8);
	assert_int_equal(n, 2);
	assert_string_equal(keys[0], "span_id");
	assert_string_equal(keys[1], "span_name");
	assert_int_equal(pprof_builder_label_keys(b, keys, 1), 1);
	assert_int_equal(pprof_builder_encode_chunks_omit(b, "span_name", 8, 0, collect, &c), 0);
	assert_int_equal(c.n, 3);
	assert_chunks_hold_all(&c, 20); /* span_id still on every sample */
	for (i = 0; i < c.n; i++) {
		assert_false(has_string(c.p[i], "span_name"));
		assert_false(has_string(c.p[i], "app_work")); /* its values go too */
		assert_false(has_string(c.p[i], "lib_work"));
		for (j = 0; j < c.p[i]->n_sample; j++)
			assert_int_equal(c.p[i]->sample[j]->n_label, 1);
	}
	chunks_release(&c);
	memset(&c, 0, sizeof(c));
	/* A key no sample has changes nothing. */
	assert_int_equal(pprof_builder_encode_chunks_omit(b, "trace_id", 0, 0, collect, &c), 0);
	assert_int_equal(c.n, 1);
	assert_int_equal(c.p[0]->sample[0]->n_label, 2);
	assert_int_equal(c.len[0], full_encoded_len(b));
	chunks_release(&c);
	pprof_builder_free(b);
}

static void test_pprof_chunks_oversized_sample_goes_alone(void **state)
{
	struct pprof_builder *b = numbered_builder(4, -1);
	struct chunks c = { 0 };
	size_t k;

	(void)state;
	assert_int_equal(pprof_builder_encode_chunks(b, 0, 16, collect, &c), 0);
	assert_int_equal(c.n, 4);
	for (k = 0; k < c.n; k++) {
		assert_int_equal(c.nsamples[k], 1);
		assert_true(c.len[k] > 16);
	}
	assert_chunks_hold_all(&c, 4);
	chunks_release(&c);
	pprof_builder_free(b);
}

static void test_pprof_chunks_stop_at_callback_error(void **state)
{
	struct pprof_builder *b = numbered_builder(30, -1);
	struct chunks c = { .fail_at = 2 };

	(void)state;
	assert_int_equal(pprof_builder_encode_chunks(b, 10, 0, collect, &c), -EIO);
	assert_int_equal(c.n, 1);
	assert_int_equal(pprof_builder_encode_chunks(NULL, 10, 0, collect, &c), -EINVAL);
	assert_int_equal(pprof_builder_encode_chunks(b, 10, 0, NULL, NULL), -EINVAL);
	chunks_release(&c);
	pprof_builder_free(b);
}

static void test_pprof_chunks_empty_builder_gives_one_empty_profile(void **state)
{
	struct pprof_builder *b = numbered_builder(0, -1);
	struct chunks c = { 0 };

	(void)state;
	assert_int_equal(pprof_builder_encode_chunks(b, 10, 100, collect, &c), 0);
	assert_int_equal(c.n, 1);
	assert_int_equal(c.nsamples[0], 0);
	assert_int_equal(c.p[0]->n_sample, 0);
	assert_complete_and_minimal(c.p[0]);
	chunks_release(&c);
	pprof_builder_free(b);
}

/* Chunking must not disturb the builder: a full encode afterwards is unchanged. */
static void test_pprof_chunks_leave_the_builder_unchanged(void **state)
{
	struct pprof_builder *b = numbered_builder(40, 20);
	uint8_t *before = NULL, *after = NULL;
	size_t lb = 0, la = 0;
	struct chunks c = { 0 };

	(void)state;
	assert_int_equal(pprof_builder_encode(b, &before, &lb), 0);
	assert_int_equal(pprof_builder_encode_chunks(b, 7, 0, collect, &c), 0);
	assert_int_equal(c.n, 6);
	assert_int_equal(pprof_builder_encode(b, &after, &la), 0);
	assert_int_equal(la, lb);
	assert_memory_equal(after, before, lb);
	free(before);
	free(after);
	chunks_release(&c);
	pprof_builder_free(b);
}

struct go_ctx {
	const char *dir;
	int seq, rc;
	char err[2048];
};

static int write_and_check_with_go(void *ctx, const uint8_t *buf, size_t len, size_t nsamples)
{
	struct go_ctx *g = ctx;
	uint8_t *gz = NULL;
	size_t gz_len = 0;
	char path[4096], name[64];

	(void)nsamples;
	assert_int_equal(pprof_gzip(buf, len, &gz, &gz_len), 0);
	snprintf(name, sizeof(name), "chunk-%d.pb.gz", g->seq++);
	snprintf(path, sizeof(path), "%s/%s", g->dir, name);
	assert_int_equal(view_fixture_write(g->dir, name, gz, gz_len), 0);
	free(gz);
	if (g->rc == 0)
		g->rc = pprof_file_check_with_go(path, g->err, sizeof(g->err));
	return 0;
}

static void test_pprof_chunks_parse_with_go_pprof(void **state)
{
	struct pprof_builder *b = numbered_builder(30, 15);
	struct go_ctx g = { .dir = *state };

	assert_int_equal(pprof_builder_encode_chunks(b, 8, 0, write_and_check_with_go, &g), 0);
	pprof_builder_free(b);
	if (g.rc == 1) {
		print_message("go not installed, skipping the go tool pprof check\n");
		skip();
	}
	if (g.rc != 0)
		fail_msg("go tool pprof rejected a chunk: %s", g.err);
}

static int setup_tmpdir(void **state)
{
	*state = tmpdir_new("pprof-chunks");
	return *state ? 0 : -1;
}

static int teardown_tmpdir(void **state)
{
	tmpdir_remove(*state);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pprof_chunks_one_chunk_when_within_limits),
		cmocka_unit_test(test_pprof_chunks_split_by_sample_count),
		cmocka_unit_test(test_pprof_chunks_split_by_encoded_size),
		cmocka_unit_test(test_pprof_chunks_size_limit_is_exact),
		cmocka_unit_test(test_pprof_chunks_carry_only_their_tables),
		cmocka_unit_test(test_pprof_chunks_omit_one_label_key),
		cmocka_unit_test(test_pprof_chunks_oversized_sample_goes_alone),
		cmocka_unit_test(test_pprof_chunks_stop_at_callback_error),
		cmocka_unit_test(test_pprof_chunks_empty_builder_gives_one_empty_profile),
		cmocka_unit_test(test_pprof_chunks_leave_the_builder_unchanged),
		cmocka_unit_test_setup_teardown(test_pprof_chunks_parse_with_go_pprof, setup_tmpdir,
						teardown_tmpdir),
	};

	return cmocka_run_group_tests_name("pprof_chunks", tests, NULL, NULL);
}
