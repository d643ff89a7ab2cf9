// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Unit tests for push requests: decoded back with protobuf-c they carry the series labels
 * (sorted), the profile byte for byte and a fresh UUID; label checks follow the server's rules. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "output/push_encode.h"
#include "pprof_file.h"
#include "push_receiver.h"
#include "proto/push.pb-c.h"
#include "util/utf8.h"

static Push__V1__PushRequest *gunzip_unpack(const uint8_t *gz, size_t len)
{
	Push__V1__PushRequest *req = push_request_gunzip(gz, len);

	assert_non_null(req);
	return req;
}

static Push__V1__PushRequest *encode(const char *service, const struct pprof_label *labels,
				     size_t n, const uint8_t *profile, size_t len)
{
	Push__V1__PushRequest *req;
	uint8_t *out = NULL;
	size_t out_len = 0;

	assert_int_equal(push_encode(service, labels, n, profile, len, &out, &out_len), 0);
	req = gunzip_unpack(out, out_len);
	free(out);
	return req;
}

static const char *label(const Push__V1__PushRequest *req, const char *name)
{
	const Push__V1__RawProfileSeries *s = req->series[0];
	size_t i;

	for (i = 0; i < s->n_labels; i++)
		if (!strcmp(s->labels[i]->name, name))
			return s->labels[i]->value;
	return NULL;
}

static void test_push_encode_decodes_back(void **state)
{
	static const struct pprof_label statics[] = { { "region", "eu" }, { "env", "prod" } };
	struct pprof_builder *b = pprof_builder_new(10000000, 1700000000000000000LL, 10);
	const struct sym_frame f = { .addr = 0x1000,
				     .nlines = 1,
				     .lines = { { "main", "a.c", 1 } } };
	const struct pprof_label span = { "span_id", "00000000000000ab" };
	const Push__V1__RawProfileSeries *s;
	Perftools__Profiles__Profile *p;
	Push__V1__PushRequest *req;
	uint8_t *prof = NULL;
	size_t len = 0, i;

	(void)state;
	assert_non_null(b);
	assert_int_equal(pprof_builder_add_sample(b, &f, 1, 3, &span, 1), 0);
	assert_int_equal(pprof_builder_encode(b, &prof, &len), 0);
	req = encode("api", statics, 2, prof, len);
	assert_int_equal(req->n_series, 1);
	s = req->series[0];
	assert_int_equal(s->n_labels, 4);
	assert_string_equal(s->labels[0]->name, "__name__");
	assert_string_equal(s->labels[1]->name, "env");
	assert_string_equal(s->labels[2]->name, "region");
	assert_string_equal(s->labels[3]->name, "service_name");
	assert_string_equal(label(req, "__name__"), "process_cpu");
	assert_string_equal(label(req, "service_name"), "api");
	assert_string_equal(label(req, "env"), "prod");
	assert_int_equal(s->n_samples, 1);
	/* The profile rides uncompressed (the body as a whole is gzipped once). */
	assert_int_equal(s->samples[0]->raw_profile.len, len);
	assert_memory_equal(s->samples[0]->raw_profile.data, prof, len);
	p = pprof_decode(s->samples[0]->raw_profile.data, s->samples[0]->raw_profile.len);
	assert_non_null(p);
	assert_string_equal(pprof_sample_label(p, p->sample[0], "span_id"), "00000000000000ab");
	pprof_file_free(p);
	assert_int_equal(strlen(s->samples[0]->id), 36);
	for (i = 0; i < 36; i++)
		assert_true(strchr("0123456789abcdef-", s->samples[0]->id[i]) != NULL);
	push__v1__push_request__free_unpacked(req, NULL);
	free(prof);
	pprof_builder_free(b);
}

/* Off-CPU profiles are their own series: __name__ is the sample type, CPU keeps process_cpu. */
static void test_push_encode_named_labels_the_series(void **state)
{
	Push__V1__PushRequest *req;
	uint8_t *out = NULL;
	size_t out_len = 0;

	(void)state;
	assert_string_equal(push_profile_name("cpu"), "process_cpu");
	assert_string_equal(push_profile_name(NULL), "process_cpu");
	assert_string_equal(push_profile_name("off_cpu"), "off_cpu");
	assert_int_equal(push_encode_named("off_cpu", "api", NULL, 0, NULL, 0, &out, &out_len), 0);
	req = gunzip_unpack(out, out_len);
	assert_string_equal(label(req, "__name__"), "off_cpu");
	assert_string_equal(label(req, "service_name"), "api");
	push__v1__push_request__free_unpacked(req, NULL);
	free(out);
	assert_int_equal(push_encode_named("", "api", NULL, 0, NULL, 0, &out, &out_len), -EINVAL);
	assert_int_equal(push_encode_named(NULL, "api", NULL, 0, NULL, 0, &out, &out_len), -EINVAL);
}

static void test_push_encode_gives_each_profile_a_new_uuid(void **state)
{
	Push__V1__PushRequest *a, *b;

	(void)state;
	a = encode("svc", NULL, 0, (const uint8_t *)"x", 1);
	b = encode("svc", NULL, 0, (const uint8_t *)"x", 1);
	assert_string_not_equal(a->series[0]->samples[0]->id, b->series[0]->samples[0]->id);
	push__v1__push_request__free_unpacked(a, NULL);
	push__v1__push_request__free_unpacked(b, NULL);
}

static void test_push_encode_names_missing_service_unknown(void **state)
{
	Push__V1__PushRequest *req;

	(void)state;
	req = encode(NULL, NULL, 0, NULL, 0);
	assert_string_equal(label(req, "service_name"), "unknown_service");
	push__v1__push_request__free_unpacked(req, NULL);
	req = encode("", NULL, 0, NULL, 0);
	assert_string_equal(label(req, "service_name"), "unknown_service");
	push__v1__push_request__free_unpacked(req, NULL);
}

static void test_push_encode_repairs_and_cuts_service_name(void **state)
{
	char *longname = malloc(3001);
	Push__V1__PushRequest *req;

	(void)state;
	req = encode("caf\xc3\xa9\xff", NULL, 0, NULL, 0);
	assert_true(utf8_valid(label(req, "service_name")));
	assert_non_null(strstr(label(req, "service_name"), "caf\xc3\xa9"));
	push__v1__push_request__free_unpacked(req, NULL);
	assert_non_null(longname);
	memset(longname, 'a', 2999);
	memcpy(longname + 2047, "\xc3\xa9", 2); /* a two-byte character across the cut */
	longname[3000] = '\0';
	longname[2999] = 'b';
	req = encode(longname, NULL, 0, NULL, 0);
	assert_int_equal(strlen(label(req, "service_name")), 2047);
	assert_true(utf8_valid(label(req, "service_name")));
	push__v1__push_request__free_unpacked(req, NULL);
	free(longname);
}

static void test_push_encode_rejects_bad_arguments(void **state)
{
	uint8_t *out = NULL;
	size_t len = 0;

	(void)state;
	assert_int_equal(push_encode("s", NULL, 0, NULL, 5, &out, &len), -EINVAL);
	assert_int_equal(push_encode("s", NULL, 1, NULL, 0, &out, &len), -EINVAL);
	assert_int_equal(push_encode("s", NULL, 0, NULL, 0, NULL, &len), -EINVAL);
	assert_null(out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_push_encode_decodes_back),
		cmocka_unit_test(test_push_encode_named_labels_the_series),
		cmocka_unit_test(test_push_encode_gives_each_profile_a_new_uuid),
		cmocka_unit_test(test_push_encode_names_missing_service_unknown),
		cmocka_unit_test(test_push_encode_repairs_and_cuts_service_name),
		cmocka_unit_test(test_push_encode_rejects_bad_arguments),
	};

	return cmocka_run_group_tests_name("push_encode", tests, NULL, NULL);
}
