// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Unit tests for the window encoder: a window's local file and its push requests, decoded back,
 * carry the one time and duration the window was given when it closed, for every service and
 * every pushed part; parts too big for the server are reported, not sent. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "output/window_encode.h"
#include "pprof_file.h"
#include "push_receiver.h"
#include "proto/push.pb-c.h"

#define PERIOD_NS 10000000LL
#define START_NS 1700000000123456789LL
#define DURATION_NS 15000000321LL
#define MAX_REQUESTS 16

struct pushed {
	Perftools__Profiles__Profile *prof[MAX_REQUESTS];
	char service[MAX_REQUESTS][32];
	char name[MAX_REQUESTS][32];
	size_t n;
	int errs[MAX_REQUESTS];
	size_t nerrs;
};

static const char *series_label(const Push__V1__RawProfileSeries *s, const char *name)
{
	for (size_t i = 0; i < s->n_labels; i++)
		if (!strcmp(s->labels[i]->name, name))
			return s->labels[i]->value;
	return NULL;
}

static Push__V1__PushRequest *gunzip_unpack(const uint8_t *gz, size_t len)
{
	Push__V1__PushRequest *req = push_request_gunzip(gz, len);

	assert_non_null(req);
	return req;
}

static int on_request(void *ctx, uint8_t *body, size_t len, int err)
{
	struct pushed *p = ctx;
	Push__V1__PushRequest *req;
	Push__V1__RawSample *raw;

	if (err) {
		assert_null(body);
		assert_true(p->nerrs < MAX_REQUESTS);
		p->errs[p->nerrs++] = err;
		return 0;
	}
	assert_true(p->n < MAX_REQUESTS);
	req = gunzip_unpack(body, len);
	free(body);
	assert_int_equal(req->n_series, 1);
	assert_int_equal(req->series[0]->n_samples, 1);
	raw = req->series[0]->samples[0];
	p->prof[p->n] = pprof_decode(raw->raw_profile.data, raw->raw_profile.len);
	assert_non_null(p->prof[p->n]);
	snprintf(p->service[p->n], sizeof(p->service[0]), "%s",
		 series_label(req->series[0], "service_name"));
	snprintf(p->name[p->n], sizeof(p->name[0]), "%s", series_label(req->series[0], "__name__"));
	p->n++;
	push__v1__push_request__free_unpacked(req, NULL);
	return 0;
}

static void pushed_free(struct pushed *p)
{
	for (size_t i = 0; i < p->n; i++)
		pprof_file_free(p->prof[i]);
}

/* A builder with n distinct stacks, its window set once as the aggregate sets it at close. */
static struct pprof_builder *window_builder(int n, const char *type)
{
	struct pprof_builder *b = pprof_builder_new(PERIOD_NS, 0, 0);
	struct sym_frame f = { .nlines = 1 };
	const struct pprof_label l = { "span_id", "0000000000000001" };

	assert_non_null(b);
	if (type)
		assert_int_equal(pprof_builder_set_sample_type(b, type, "nanoseconds"), 0);
	for (int i = 0; i < n; i++) {
		f.addr = 0x401000 + (uint64_t)i * 16;
		f.lines[0] = (struct sym_line){ "work", "app.c", i + 1 };
		assert_int_equal(pprof_builder_add_sample(b, &f, 1, 1 + i, &l, 1), 0);
	}
	pprof_builder_set_time(b, START_NS, DURATION_NS);
	return b;
}

static Perftools__Profiles__Profile *file_profile(struct pprof_builder *b)
{
	Perftools__Profiles__Profile *prof;
	uint8_t *gz = NULL;
	size_t len = 0;

	assert_int_equal(window_encode_file(b, &gz, &len), 0);
	assert_true(len > 2 && gz[0] == 0x1f && gz[1] == 0x8b);
	prof = pprof_decode(gz, len);
	free(gz);
	assert_non_null(prof);
	return prof;
}

/* Two services of one window: the local file and every pushed part of each carry the window's
 * one start and duration, whichever is encoded first and however long that takes. */
static void test_window_encode_file_and_push_carry_one_window_time(void **state)
{
	const char *services[] = { "checkout", "payments" };
	struct window_push wp = { .max_samples = 2 };

	(void)state;
	for (int s = 0; s < 2; s++) {
		struct pprof_builder *b = window_builder(5, NULL);
		Perftools__Profiles__Profile *file;
		struct pushed p = { 0 };
		int64_t total = 0;

		wp.service = services[s];
		assert_int_equal(window_encode_push(b, &wp, on_request, &p), 0);
		file = file_profile(b); /* after the push: the push changed nothing */
		assert_int_equal(file->time_nanos, START_NS);
		assert_int_equal(file->duration_nanos, DURATION_NS);
		assert_int_equal(p.nerrs, 0);
		assert_int_equal(p.n, 3); /* 5 samples, 2 per pushed profile */
		for (size_t i = 0; i < p.n; i++) {
			assert_int_equal(p.prof[i]->time_nanos, file->time_nanos);
			assert_int_equal(p.prof[i]->duration_nanos, file->duration_nanos);
			assert_string_equal(p.service[i], services[s]);
			assert_string_equal(p.name[i], "process_cpu");
			total += pprof_total_value(p.prof[i]);
		}
		assert_int_equal(total, pprof_total_value(file)); /* nothing lost in the split */
		pprof_file_free(file);
		pushed_free(&p);
		pprof_builder_free(b);
	}
}

/* An off-CPU window is pushed under its own __name__; the omitted label stays out. */
static void test_window_encode_push_names_the_kind_and_omits_a_label(void **state)
{
	struct pprof_builder *b = window_builder(1, "off_cpu");
	struct window_push wp = { .service = "svc", .omit_key = "span_id" };
	struct pushed p = { 0 };

	(void)state;
	assert_int_equal(window_encode_push(b, &wp, on_request, &p), 0);
	assert_int_equal(p.n, 1);
	assert_string_equal(p.name[0], "off_cpu");
	assert_null(pprof_sample_label(p.prof[0], p.prof[0]->sample[0], "span_id"));
	assert_int_equal(p.prof[0]->duration_nanos, DURATION_NS);
	pushed_free(&p);
	pprof_builder_free(b);
}

/* A part bigger than the server takes is reported as -E2BIG, not sent; an empty window gives
 * no request at all. */
static void test_window_encode_push_reports_oversized_parts_and_skips_empty(void **state)
{
	struct pprof_builder *b = window_builder(2, NULL), *empty = window_builder(0, NULL);
	struct window_push wp = { .service = "svc", .max_samples = 1, .max_bytes = 8 };
	struct pushed p = { 0 };

	(void)state;
	assert_int_equal(window_encode_push(b, &wp, on_request, &p), 0);
	assert_int_equal(p.n, 0);
	assert_int_equal(p.nerrs, 2);
	assert_int_equal(p.errs[0], -E2BIG);
	assert_int_equal(window_encode_push(empty, &wp, on_request, &p), 0);
	assert_int_equal(p.nerrs, 2);
	assert_int_equal(window_encode_push(NULL, &wp, on_request, &p), -EINVAL);
	pprof_builder_free(b);
	pprof_builder_free(empty);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_window_encode_file_and_push_carry_one_window_time),
		cmocka_unit_test(test_window_encode_push_names_the_kind_and_omits_a_label),
		cmocka_unit_test(test_window_encode_push_reports_oversized_parts_and_skips_empty),
	};

	return cmocka_run_group_tests_name("window_encode", tests, NULL, NULL);
}
