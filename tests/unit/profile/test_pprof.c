// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Unit tests for the pprof builder: encode hand-made stacks, decode them with protobuf-c and
 * check every reader rule of docs/wire-format.md, merging, interning, gzip, and Go pprof's verdict. */
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
#include "util/utf8.h"

#define KERN_MAP                                                                     \
	{                                                                            \
		0xffffffff81000000, 0xffffffff82000000, 0, "[kernel.kallsyms]", NULL \
	}

/* Leaf: a helper inlined into outer_fn. */
static const struct sym_frame f_inline = {
	.addr = 0x401234,
	.has_mapping = 1,
	.mapping = APP_MAP,
	.nlines = 2,
	.lines = { { "inlined_helper", "app.c", 10 }, { "outer_fn", "app.c", 42 } },
};
static const struct sym_frame f_main = {
	.addr = 0x401100,
	.has_mapping = 1,
	.mapping = APP_MAP,
	.nlines = 1,
	.lines = { { "main", "app.c", 5 } },
};
static const struct sym_frame f_lib_unknown = {
	.addr = 0x7f0000001000,
	.has_mapping = 1,
	.mapping = LIB_MAP,
	.nlines = 0,
};
static const struct sym_frame f_no_mapping = { .addr = 0xdead0, .has_mapping = 0 };
static const struct sym_frame f_kernel = {
	.addr = 0xffffffff81001234,
	.has_mapping = 1,
	.mapping = KERN_MAP,
	.nlines = 1,
	.lines = { { "do_syscall_64", NULL, 0 } },
};

static Perftools__Profiles__Profile *encode_decode(struct pprof_builder *b)
{
	Perftools__Profiles__Profile *p;
	uint8_t *buf = NULL;
	size_t len = 0;

	assert_int_equal(pprof_builder_encode(b, &buf, &len), 0);
	p = pprof_decode(buf, len);
	free(buf);
	assert_non_null(p);
	return p;
}

static void assert_str_idx(const Perftools__Profiles__Profile *p, int64_t idx)
{
	assert_true(idx >= 0 && (uint64_t)idx < p->n_string_table);
}

static void assert_value_type(const Perftools__Profiles__Profile *p,
			      const Perftools__Profiles__ValueType *vt)
{
	assert_non_null(vt);
	assert_string_equal(pprof_str(p, vt->type), "cpu");
	assert_string_equal(pprof_str(p, vt->unit), "nanoseconds");
	assert_null(strchr(pprof_str(p, vt->type), '-'));
}

static void assert_locations_valid(const Perftools__Profiles__Profile *p)
{
	size_t i, j;

	for (i = 0; i < p->n_mapping; i++) {
		assert_int_not_equal(p->mapping[i]->id, 0);
		assert_ptr_equal(pprof_mapping(p, p->mapping[i]->id), p->mapping[i]); /* unique */
		assert_str_idx(p, p->mapping[i]->filename);
		assert_str_idx(p, p->mapping[i]->build_id);
	}
	for (i = 0; i < p->n_function; i++) {
		assert_int_not_equal(p->function[i]->id, 0);
		assert_ptr_equal(pprof_function(p, p->function[i]->id), p->function[i]);
		assert_str_idx(p, p->function[i]->name);
		assert_str_idx(p, p->function[i]->system_name);
		assert_str_idx(p, p->function[i]->filename);
	}
	for (i = 0; i < p->n_location; i++) {
		const Perftools__Profiles__Location *l = p->location[i];

		assert_int_not_equal(l->id, 0);
		assert_ptr_equal(pprof_location(p, l->id), l);
		assert_true(l->mapping_id == 0 || pprof_mapping(p, l->mapping_id));
		assert_true(l->n_line > 0);
		for (j = 0; j < l->n_line; j++)
			assert_non_null(pprof_function(p, l->line[j]->function_id));
	}
}

/* Every rule docs/wire-format.md lists for readers, plus the cpu/nanoseconds shape. */
static void assert_reader_rules(const Perftools__Profiles__Profile *p)
{
	size_t i, j;

	assert_true(p->n_string_table >= 1);
	assert_string_equal(p->string_table[0], "");
	for (i = 0; i < p->n_string_table; i++)
		assert_true(utf8_valid(p->string_table[i]));
	assert_int_equal(p->n_sample_type, 1);
	assert_value_type(p, p->sample_type[0]);
	assert_value_type(p, p->period_type);
	assert_int_equal(p->period, PERIOD_NS);
	assert_locations_valid(p);
	for (i = 0; i < p->n_sample; i++) {
		const Perftools__Profiles__Sample *s = p->sample[i];

		assert_int_equal(s->n_value, p->n_sample_type);
		assert_true(s->value[0] > 0 && s->value[0] % PERIOD_NS == 0);
		for (j = 0; j < s->n_location_id; j++)
			assert_non_null(pprof_location(p, s->location_id[j]));
		for (j = 0; j < s->n_label; j++) {
			assert_str_idx(p, s->label[j]->key);
			assert_str_idx(p, s->label[j]->str);
			assert_true(s->label[j]->key != 0 && s->label[j]->str != 0);
		}
	}
}

static struct pprof_builder *new_builder(void)
{
	struct pprof_builder *b = pprof_builder_new(PERIOD_NS, T0, DURATION);

	assert_non_null(b);
	return b;
}

static void test_pprof_encodes_profile_readers_accept(void **state)
{
	const struct sym_frame stack[] = { f_kernel, f_inline, f_main };
	const struct sym_frame odd[] = { f_no_mapping, f_lib_unknown, f_main };
	const struct pprof_label labels[] = { { "span_id", "0123456789abcdef" },
					      { "span_name", "GET /users" } };
	struct pprof_builder *b = new_builder();
	Perftools__Profiles__Profile *p;

	(void)state;
	assert_int_equal(pprof_builder_add_sample(b, stack, 3, 4, labels, 2), 0);
	assert_int_equal(pprof_builder_add_sample(b, odd, 3, 1, NULL, 0), 0);
	p = encode_decode(b);
	assert_reader_rules(p);
	assert_int_equal(p->time_nanos, T0);
	assert_int_equal(p->duration_nanos, DURATION);
	assert_int_equal(p->n_sample, 2);
	assert_int_equal(p->sample[0]->value[0], 4 * PERIOD_NS);
	assert_int_equal(p->sample[0]->n_location_id, 3);
	assert_string_equal(pprof_leaf_function(p, p->sample[0]), "do_syscall_64");
	assert_true(pprof_sample_has_function(p, p->sample[0], "outer_fn"));
	assert_false(pprof_sample_has_function(p, p->sample[1], "outer_fn"));
	assert_string_equal(pprof_sample_label(p, p->sample[0], "span_id"), "0123456789abcdef");
	assert_string_equal(pprof_sample_label(p, p->sample[0], "span_name"), "GET /users");
	assert_null(pprof_sample_label(p, p->sample[1], "span_id"));
	assert_int_equal(pprof_total_value(p), 5 * PERIOD_NS);
	pprof_file_free(p);
	pprof_builder_free(b);
}

/* Off-CPU profiles: sample and period type off_cpu/nanoseconds, one sample = 1 ns. */
static void test_pprof_names_its_sample_type(void **state)
{
	struct pprof_builder *b = pprof_builder_new(1, T0, DURATION);
	Perftools__Profiles__Profile *p;

	(void)state;
	assert_non_null(b);
	assert_string_equal(pprof_builder_sample_type(b), "cpu");
	assert_int_equal(pprof_builder_set_sample_type(b, "", "nanoseconds"), -EINVAL);
	assert_int_equal(pprof_builder_set_sample_type(b, "off_cpu", "nanoseconds"), 0);
	assert_string_equal(pprof_builder_sample_type(b), "off_cpu");
	assert_int_equal(pprof_builder_add_sample(b, &f_main, 1, 25000000, NULL, 0), 0);
	p = encode_decode(b);
	assert_int_equal(p->n_sample_type, 1);
	assert_string_equal(pprof_str(p, p->sample_type[0]->type), "off_cpu");
	assert_string_equal(pprof_str(p, p->sample_type[0]->unit), "nanoseconds");
	assert_string_equal(pprof_str(p, p->period_type->type), "off_cpu");
	assert_int_equal(p->period, 1);
	assert_int_equal(pprof_total_value(p), 25000000);
	pprof_file_free(p);
	pprof_builder_free(b);
}

static void test_pprof_merges_identical_samples(void **state)
{
	const struct sym_frame stack[] = { f_inline, f_main };
	const struct pprof_label ab[] = { { "span_id", "00000000000000aa" }, { "k", "v" } };
	const struct pprof_label ba[] = { { "k", "v" }, { "span_id", "00000000000000aa" } };
	const struct pprof_label other[] = { { "span_id", "00000000000000bb" } };
	struct pprof_builder *b = new_builder();
	Perftools__Profiles__Profile *p;
	size_t i;

	(void)state;
	assert_int_equal(pprof_builder_add_sample(b, stack, 2, 1, ab, 2), 0);
	assert_int_equal(pprof_builder_add_sample(b, stack, 2, 2, ab, 2), 0);
	assert_int_equal(pprof_builder_add_sample(b, stack, 2, 3, ba, 2), 0); /* order ignored */
	assert_int_equal(pprof_builder_sample_count(b), 1);
	assert_int_equal(pprof_builder_add_sample(b, stack, 2, 1, other, 1), 0);
	assert_int_equal(pprof_builder_add_sample(b, stack, 1, 1, ab, 2), 0); /* shorter stack */
	assert_int_equal(pprof_builder_sample_count(b), 3);
	p = encode_decode(b);
	assert_reader_rules(p);
	assert_int_equal(p->n_sample, 3);
	for (i = 0; i < p->n_sample; i++) {
		const char *span = pprof_sample_label(p, p->sample[i], "span_id");
		int merged = !strcmp(span, "00000000000000aa") && p->sample[i]->n_location_id == 2;

		assert_int_equal(p->sample[i]->value[0], merged ? 6 * PERIOD_NS : PERIOD_NS);
	}
	pprof_file_free(p);
	pprof_builder_free(b);
}

static void test_pprof_keeps_inline_frames_innermost_first(void **state)
{
	const struct sym_frame stack[] = { f_inline, f_main };
	const Perftools__Profiles__Location *loc;
	const Perftools__Profiles__Mapping *m;
	struct pprof_builder *b = new_builder();
	Perftools__Profiles__Profile *p;

	(void)state;
	assert_int_equal(pprof_builder_add_sample(b, stack, 2, 1, NULL, 0), 0);
	p = encode_decode(b);
	loc = pprof_location(p, p->sample[0]->location_id[0]);
	assert_non_null(loc);
	assert_int_equal(loc->address, 0x401234);
	assert_int_equal(loc->n_line, 2);
	assert_string_equal(pprof_str(p, pprof_function(p, loc->line[0]->function_id)->name),
			    "inlined_helper");
	assert_int_equal(loc->line[0]->line, 10);
	assert_string_equal(pprof_str(p, pprof_function(p, loc->line[1]->function_id)->name),
			    "outer_fn");
	assert_int_equal(loc->line[1]->line, 42);
	assert_string_equal(pprof_str(p, pprof_function(p, loc->line[1]->function_id)->system_name),
			    "outer_fn");
	assert_string_equal(pprof_str(p, pprof_function(p, loc->line[1]->function_id)->filename),
			    "app.c");
	assert_string_equal(pprof_leaf_function(p, p->sample[0]), "inlined_helper");
	m = pprof_mapping(p, loc->mapping_id);
	assert_non_null(m);
	assert_int_equal(m->memory_start, 0x400000);
	assert_int_equal(m->memory_limit, 0x500000);
	assert_int_equal(m->file_offset, 0x1000);
	assert_string_equal(pprof_str(p, m->filename), "/usr/bin/app");
	assert_string_equal(pprof_str(p, m->build_id), "abcdef01");
	assert_true(m->has_functions && m->has_filenames && m->has_line_numbers);
	assert_true(m->has_inline_frames);
	pprof_file_free(p);
	pprof_builder_free(b);
}

static void test_pprof_names_unknown_frames_after_their_mapping(void **state)
{
	const struct sym_frame stack[] = { f_lib_unknown, f_no_mapping, f_kernel };
	const Perftools__Profiles__Location *lib, *none;
	const Perftools__Profiles__Mapping *m;
	struct pprof_builder *b = new_builder();
	Perftools__Profiles__Profile *p;

	(void)state;
	assert_int_equal(pprof_builder_add_sample(b, stack, 3, 1, NULL, 0), 0);
	p = encode_decode(b);
	assert_reader_rules(p);
	lib = pprof_location(p, p->sample[0]->location_id[0]);
	none = pprof_location(p, p->sample[0]->location_id[1]);
	assert_int_equal(lib->address, 0x7f0000001000);
	assert_int_equal(lib->n_line, 1);
	assert_string_equal(pprof_leaf_function(p, p->sample[0]), "[unknown] (libfoo.so.1)");
	/* No system name for made-up names, so Go pprof's demangler keeps "(libfoo.so.1)". */
	assert_string_equal(pprof_str(p, pprof_function(p, lib->line[0]->function_id)->system_name),
			    "");
	m = pprof_mapping(p, lib->mapping_id);
	assert_non_null(m);
	assert_string_equal(pprof_str(p, m->filename), "/usr/lib/libfoo.so.1");
	assert_string_equal(pprof_str(p, m->build_id), "");
	/* Nothing in libfoo was symbolized: the flags must not claim otherwise. */
	assert_false(m->has_functions || m->has_filenames || m->has_line_numbers ||
		     m->has_inline_frames);
	assert_int_equal(none->mapping_id, 0);
	assert_int_equal(none->address, 0xdead0);
	assert_string_equal(pprof_str(p, pprof_function(p, none->line[0]->function_id)->name),
			    "[unknown]");
	/* The kernel mapping has names but no files or line numbers. */
	m = pprof_mapping(p, pprof_location(p, p->sample[0]->location_id[2])->mapping_id);
	assert_true(m->has_functions);
	assert_false(m->has_filenames || m->has_line_numbers || m->has_inline_frames);
	pprof_file_free(p);
	pprof_builder_free(b);
}

static void test_pprof_interns_locations_functions_and_mappings(void **state)
{
	struct sym_frame main_again = f_main;
	const struct sym_frame s1[] = { f_inline, f_main };
	const struct sym_frame s2[] = { f_kernel, f_inline, f_main };
	struct sym_frame s3[] = { f_main };
	struct pprof_builder *b = new_builder();
	Perftools__Profiles__Profile *p;
	size_t i, names = 0;

	(void)state;
	main_again.addr = 0x401108; /* another address in main: new location, same function */
	s3[0] = main_again;
	assert_int_equal(pprof_builder_add_sample(b, s1, 2, 1, NULL, 0), 0);
	assert_int_equal(pprof_builder_add_sample(b, s2, 3, 1, NULL, 0), 0);
	assert_int_equal(pprof_builder_add_sample(b, s3, 1, 1, NULL, 0), 0);
	p = encode_decode(b);
	assert_reader_rules(p);
	assert_int_equal(p->n_location, 4);
	assert_int_equal(p->n_function, 4); /* inlined_helper, outer_fn, main, do_syscall_64 */
	assert_int_equal(p->n_mapping, 2);
	for (i = 0; i < p->n_string_table; i++)
		names += !strcmp(p->string_table[i], "main");
	assert_int_equal(names, 1);
	assert_int_equal(p->sample[0]->location_id[0], p->sample[1]->location_id[1]);
	pprof_file_free(p);
	pprof_builder_free(b);
}

static void test_pprof_skips_labels_with_empty_values(void **state)
{
	const struct sym_frame stack[] = { f_main };
	const struct pprof_label labels[] = {
		{ "span_id", "" },
		{ "trace_id", NULL },
		{ "", "x" },
		{ "service", "api" },
	};
	struct pprof_builder *b = new_builder();
	Perftools__Profiles__Profile *p;

	(void)state;
	assert_int_equal(pprof_builder_add_sample(b, stack, 1, 1, labels, 4), 0);
	p = encode_decode(b);
	assert_reader_rules(p);
	assert_int_equal(p->sample[0]->n_label, 1);
	assert_null(pprof_sample_label(p, p->sample[0], "span_id"));
	assert_null(pprof_sample_label(p, p->sample[0], "trace_id"));
	assert_string_equal(pprof_sample_label(p, p->sample[0], "service"), "api");
	pprof_file_free(p);
	pprof_builder_free(b);
}

static void test_pprof_replaces_invalid_utf8(void **state)
{
	struct sym_frame f = f_main;
	const struct pprof_label label = { "span_name", "caf\xc3\xa9 \xed\xa0\x80" };
	struct pprof_builder *b = new_builder();
	Perftools__Profiles__Profile *p;

	(void)state;
	f.lines[0].function = "bad\xff name \xc0\xaf";
	assert_int_equal(pprof_builder_add_sample(b, &f, 1, 1, &label, 1), 0);
	p = encode_decode(b);
	assert_reader_rules(p);
	assert_string_equal(pprof_leaf_function(p, p->sample[0]),
			    "bad\xef\xbf\xbd name \xef\xbf\xbd\xef\xbf\xbd");
	assert_string_equal(pprof_sample_label(p, p->sample[0], "span_name"),
			    "caf\xc3\xa9 \xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd");
	pprof_file_free(p);
	pprof_builder_free(b);
}

static void test_pprof_rejects_bad_arguments(void **state)
{
	struct pprof_builder *b = new_builder();
	const struct pprof_label label = { "k", "v" };

	(void)state;
	assert_int_equal(pprof_builder_add_sample(b, &f_main, 1, 0, NULL, 0), -EINVAL);
	assert_int_equal(pprof_builder_add_sample(b, &f_main, 1, -3, NULL, 0), -EINVAL);
	assert_int_equal(pprof_builder_add_sample(b, NULL, 2, 1, NULL, 0), -EINVAL);
	assert_int_equal(pprof_builder_add_sample(b, &f_main, 1, 1, NULL, 1), -EINVAL);
	assert_int_equal(pprof_builder_add_sample(NULL, &f_main, 1, 1, &label, 1), -EINVAL);
	assert_int_equal(pprof_builder_sample_count(b), 0);
	errno = 0;
	assert_null(pprof_builder_new(0, T0, DURATION));
	assert_int_equal(errno, EINVAL);
	pprof_builder_free(b);
	pprof_builder_free(NULL);
}

static void test_pprof_empty_profile_is_valid(void **state)
{
	struct pprof_builder *b = new_builder();
	Perftools__Profiles__Profile *p;

	(void)state;
	p = encode_decode(b);
	assert_reader_rules(p);
	assert_int_equal(p->n_sample, 0);
	assert_int_equal(p->time_nanos, T0);
	pprof_file_free(p);
	pprof_builder_free(b);
}

static void test_pprof_gzip_round_trips(void **state)
{
	const struct sym_frame stack[] = { f_inline, f_main };
	struct pprof_builder *b = new_builder();
	uint8_t *raw = NULL, *gz = NULL;
	size_t raw_len = 0, gz_len = 0;
	Perftools__Profiles__Profile *p;

	(void)state;
	assert_int_equal(pprof_builder_add_sample(b, stack, 2, 7, NULL, 0), 0);
	assert_int_equal(pprof_builder_encode(b, &raw, &raw_len), 0);
	assert_int_equal(pprof_gzip(raw, raw_len, &gz, &gz_len), 0);
	assert_true(gz_len > 18);
	assert_int_equal(gz[0], 0x1f); /* RFC 1952 magic and deflate method */
	assert_int_equal(gz[1], 0x8b);
	assert_int_equal(gz[2], 8);
	p = pprof_decode(gz, gz_len);
	assert_non_null(p);
	assert_reader_rules(p);
	assert_int_equal(p->sample[0]->value[0], 7 * PERIOD_NS);
	pprof_file_free(p);
	free(gz);
	gz = NULL;
	assert_int_equal(pprof_gzip(NULL, 0, &gz, &gz_len), 0);
	assert_true(gz_len >= 20);
	free(gz);
	free(raw);
	pprof_builder_free(b);
}

/* A window can hold tens of thousands of distinct stacks; interning must stay linear. */
static void test_pprof_handles_many_distinct_samples(void **state)
{
	enum { N = 60000, DEPTH = 12 };
	struct sym_frame *stack = calloc(DEPTH, sizeof(*stack));
	struct pprof_builder *b = new_builder();
	Perftools__Profiles__Profile *p;
	int i, d;

	(void)state;
	assert_non_null(stack);
	for (d = 0; d < DEPTH; d++)
		stack[d] = f_main;
	for (i = 0; i < N; i++) {
		for (d = 0; d < DEPTH; d++)
			stack[d].addr = 0x400000 + (uint64_t)((i * 7 + d * 13) % 5000) * 4;
		assert_int_equal(pprof_builder_add_sample(b, stack, DEPTH, 1, NULL, 0), 0);
		/* Each stack again: merged, not added. */
		assert_int_equal(pprof_builder_add_sample(b, stack, DEPTH, 1, NULL, 0), 0);
	}
	assert_int_equal(pprof_builder_sample_count(b), 5000);
	p = encode_decode(b);
	assert_reader_rules(p);
	assert_int_equal(pprof_total_value(p), 2LL * N * PERIOD_NS);
	assert_int_equal(p->n_location, 5000);
	assert_int_equal(p->n_function, 1);
	pprof_file_free(p);
	pprof_builder_free(b);
	free(stack);
}

static int setup_tmpdir(void **state)
{
	*state = tmpdir_new("pprof");
	return *state ? 0 : -1;
}

static int teardown_tmpdir(void **state)
{
	tmpdir_remove(*state);
	return 0;
}

static void test_pprof_file_parses_with_go_pprof(void **state)
{
	const struct sym_frame stack[] = { f_kernel, f_inline, f_main };
	const struct sym_frame odd[] = { f_no_mapping, f_lib_unknown, f_main };
	const struct pprof_label labels[] = { { "span_id", "0123456789abcdef" } };
	struct pprof_builder *b = new_builder();
	uint8_t *raw = NULL, *gz = NULL;
	size_t raw_len = 0, gz_len = 0;
	Perftools__Profiles__Profile *p;
	char path[4096], err[2048];
	int rc;

	assert_int_equal(pprof_builder_add_sample(b, stack, 3, 3, labels, 1), 0);
	assert_int_equal(pprof_builder_add_sample(b, odd, 3, 1, NULL, 0), 0);
	assert_int_equal(pprof_builder_encode(b, &raw, &raw_len), 0);
	assert_int_equal(pprof_gzip(raw, raw_len, &gz, &gz_len), 0);
	snprintf(path, sizeof(path), "%s/test.pb.gz", (char *)*state);
	assert_int_equal(view_fixture_write(*state, "test.pb.gz", gz, gz_len), 0);
	p = pprof_file_read(path);
	assert_non_null(p);
	assert_reader_rules(p);
	assert_int_equal(pprof_total_value(p), 4 * PERIOD_NS);
	pprof_file_free(p);
	rc = pprof_file_check_with_go(path, err, sizeof(err));
	free(gz);
	free(raw);
	pprof_builder_free(b);
	if (rc == 1) {
		print_message("go not installed, skipping the go tool pprof check\n");
		skip();
	}
	if (rc != 0)
		fail_msg("go tool pprof rejected %s: %s", path, err);
}

/* Python's and Ruby's frames keep their names in readers: no system name beside them, so Go
 * pprof's demangler does not take "<module>" for C++ template arguments and cut it to "". A
 * native C++ name keeps its system name (readers may simplify it). */
static void test_pprof_interpreter_frame_names_survive_readers(void **state)
{
	static const struct sym_frame module = { .addr = 1ull << 63 | 1,
						 .interpreted = 1,
						 .nlines = 1,
						 .lines = { { "<module>", "/app/main.py", 3 } } };
	static const struct sym_frame block = { .addr = 1ull << 63 | 2,
						.interpreted = 1,
						.nlines = 1,
						.lines = { { "block in <main>", "/app/main.rb",
							     7 } } };
	static const struct sym_frame cxx = { .addr = 0x401200,
					      .has_mapping = 1,
					      .mapping = APP_MAP,
					      .nlines = 1,
					      .lines = { { "std::vector<int>::push_back", "v.h",
							   9 } } };
	const struct sym_frame stack[] = { cxx, block, module, f_main };
	const Perftools__Profiles__Function *fn;
	struct pprof_builder *b = new_builder();
	uint8_t *raw = NULL, *gz = NULL;
	size_t raw_len = 0, gz_len = 0;
	Perftools__Profiles__Profile *p;
	char path[4096], *traces;
	size_t i;
	int rc;

	assert_int_equal(pprof_builder_add_sample(b, stack, 4, 1, NULL, 0), 0);
	assert_int_equal(pprof_builder_encode(b, &raw, &raw_len), 0);
	p = pprof_decode(raw, raw_len);
	assert_non_null(p);
	for (i = 0; i < 4; i++) {
		fn = pprof_function(
			p, pprof_location(p, p->sample[0]->location_id[i])->line[0]->function_id);
		assert_string_equal(pprof_str(p, fn->name), stack[i].lines[0].function);
		assert_string_equal(pprof_str(p, fn->system_name),
				    stack[i].interpreted ? "" : stack[i].lines[0].function);
	}
	pprof_file_free(p);
	assert_int_equal(pprof_gzip(raw, raw_len, &gz, &gz_len), 0);
	snprintf(path, sizeof(path), "%s/interp.pb.gz", (char *)*state);
	assert_int_equal(view_fixture_write(*state, "interp.pb.gz", gz, gz_len), 0);
	free(gz);
	free(raw);
	pprof_builder_free(b);
	traces = calloc(1, 65536);
	assert_non_null(traces);
	rc = pprof_file_go_traces(path, traces, 65536);
	if (rc == 1) {
		free(traces);
		print_message("go not installed, skipping the go tool pprof check\n");
		skip();
	}
	assert_int_equal(rc, 0);
	/* What a user of `go tool pprof` sees: both names whole (each line is "   <name>"). */
	if (!strstr(traces, " <module>\n") || !strstr(traces, " block in <main>\n"))
		fail_msg("go tool pprof -traces lost an interpreter frame's name:\n%s", traces);
	free(traces);
}

static void test_pprof_go_check_rejects_garbage(void **state)
{
	char path[4096], err[2048];
	int rc;

	snprintf(path, sizeof(path), "%s/garbage.pb.gz", (char *)*state);
	assert_int_equal(view_fixture_write(*state, "garbage.pb.gz", "\x1f\x8bnope", 6), 0);
	assert_null(pprof_file_read(path));
	rc = pprof_file_check_with_go(path, err, sizeof(err));
	if (rc == 1) {
		print_message("go not installed, skipping the go tool pprof check\n");
		skip();
	}
	assert_int_equal(rc, -1);
	assert_true(strlen(err) > 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pprof_encodes_profile_readers_accept),
		cmocka_unit_test(test_pprof_names_its_sample_type),
		cmocka_unit_test(test_pprof_merges_identical_samples),
		cmocka_unit_test(test_pprof_keeps_inline_frames_innermost_first),
		cmocka_unit_test(test_pprof_names_unknown_frames_after_their_mapping),
		cmocka_unit_test(test_pprof_interns_locations_functions_and_mappings),
		cmocka_unit_test(test_pprof_skips_labels_with_empty_values),
		cmocka_unit_test(test_pprof_replaces_invalid_utf8),
		cmocka_unit_test(test_pprof_rejects_bad_arguments),
		cmocka_unit_test(test_pprof_empty_profile_is_valid),
		cmocka_unit_test(test_pprof_gzip_round_trips),
		cmocka_unit_test(test_pprof_handles_many_distinct_samples),
		cmocka_unit_test_setup_teardown(test_pprof_file_parses_with_go_pprof, setup_tmpdir,
						teardown_tmpdir),
		cmocka_unit_test_setup_teardown(test_pprof_go_check_rejects_garbage, setup_tmpdir,
						teardown_tmpdir),
		cmocka_unit_test_setup_teardown(test_pprof_interpreter_frame_names_survive_readers,
						setup_tmpdir, teardown_tmpdir),
	};

	return cmocka_run_group_tests_name("pprof", tests, NULL, NULL);
}
