// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* view_profile: a pprof file's span samples kept, root first; empty, truncated, corrupt and
 * oversized input refused with a reason, never a crash. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "view/view_profile.h"
#include "view_fixture.h"

#define MAX_BYTES (16u << 20)

/* The names along sample s, root first, joined by ';'. */
static void stack_names(const struct view_profile *p, const struct view_sample *s, char *out,
			size_t size)
{
	size_t len = 0;
	uint32_t i, f;

	out[0] = '\0';
	for (i = 0; i < s->n; i++) {
		const struct view_loc *loc = &p->locs[p->stack[s->first + i]];

		for (f = 0; f < loc->n; f++)
			len += snprintf(out + len, size - len, "%s%s", len ? ";" : "",
					view_profile_str(p, p->frames[loc->first + f].name));
	}
}

static void test_view_profile_keeps_span_samples_root_first(void **state)
{
	char why[160], names[256];
	struct view_profile *p;
	size_t len;
	uint8_t *buf = view_fixture_profile("off_cpu", 1, &len);

	(void)state;
	assert_non_null(buf);
	p = view_profile_decode(buf, len, MAX_BYTES, why, sizeof(why));
	free(buf);
	assert_non_null(p);
	assert_int_equal(p->kind, VIEW_KIND_OFF_CPU);
	/* The sample without span labels is not kept. */
	assert_int_equal(p->nsamples, 2);
	assert_true(p->samples[0].span_id == 0xa1);
	assert_string_equal(view_profile_str(p, p->samples[0].span_name), "GET /a");
	assert_int_equal(p->samples[0].value, 30000000);
	/* The inlined parse comes after handle, its caller in the same location. */
	stack_names(p, &p->samples[0], names, sizeof(names));
	assert_string_equal(names, "main;handle;handle;parse");
	assert_true(p->samples[1].span_id == 0xb2);
	stack_names(p, &p->samples[1], names, sizeof(names));
	assert_string_equal(names, "main;other");
	assert_string_equal(view_profile_str(p, p->frames[p->locs[2].first + 1].file), "parse.c");
	assert_int_equal(p->frames[p->locs[2].first + 1].line, 5);
	assert_true(p->bytes > sizeof(*p));
	view_profile_free(p);
}

static void test_view_profile_reads_plain_protobuf_too(void **state)
{
	char why[160];
	struct view_profile *p;
	size_t len;
	uint8_t *buf = view_fixture_profile("cpu", 0, &len);

	(void)state;
	p = view_profile_decode(buf, len, MAX_BYTES, why, sizeof(why));
	free(buf);
	assert_non_null(p);
	assert_int_equal(p->kind, VIEW_KIND_CPU);
	assert_int_equal(p->nsamples, 2);
	view_profile_free(p);
}

static void test_view_profile_refuses_empty_input(void **state)
{
	char why[160];

	(void)state;
	errno = 0;
	assert_null(view_profile_decode((const uint8_t *)"", 0, MAX_BYTES, why, sizeof(why)));
	assert_int_equal(errno, EBADMSG);
	assert_string_equal(why, "no sample type");
}

/* Every cut of a gzipped profile, as a file still being written or cut short would be. */
static void test_view_profile_refuses_every_truncation(void **state)
{
	char why[160];
	size_t len, cut;
	uint8_t *buf = view_fixture_profile("cpu", 1, &len);

	(void)state;
	assert_non_null(buf);
	for (cut = 2; cut < len; cut++) {
		errno = 0;
		assert_null(view_profile_decode(buf, cut, MAX_BYTES, why, sizeof(why)));
		assert_true(errno == ENODATA || errno == EBADMSG);
	}
	assert_null(view_profile_decode(buf, len / 2, MAX_BYTES, why, sizeof(why)));
	assert_int_equal(errno, ENODATA);
	assert_non_null(strstr(why, "truncated"));
	free(buf);
}

/* Every cut of the plain protobuf: refused, or decoded with its references intact. */
static void test_view_profile_survives_every_protobuf_cut(void **state)
{
	struct view_profile *p;
	char why[160];
	size_t len, cut;
	uint8_t *buf = view_fixture_profile("cpu", 0, &len);

	(void)state;
	for (cut = 0; cut < len; cut++) {
		p = view_profile_decode(buf, cut, MAX_BYTES, why, sizeof(why));
		if (p)
			assert_true(p->nstack <= 7 && p->nsamples <= 2);
		view_profile_free(p);
	}
	free(buf);
}

static void test_view_profile_refuses_corrupt_bytes(void **state)
{
	uint8_t junk[512], *buf;
	char why[160];
	size_t len, i;

	(void)state;
	for (i = 0; i < sizeof(junk); i++)
		junk[i] = (uint8_t)(i * 167 + 13);
	assert_null(view_profile_decode(junk, sizeof(junk), MAX_BYTES, why, sizeof(why)));
	assert_int_equal(errno, EBADMSG);
	/* A gzip header over junk. */
	junk[0] = 0x1f, junk[1] = 0x8b;
	assert_null(view_profile_decode(junk, sizeof(junk), MAX_BYTES, why, sizeof(why)));
	assert_true(errno == EBADMSG || errno == ENODATA);
	/* A flipped byte inside a gzip stream fails its check. */
	buf = view_fixture_profile("cpu", 1, &len);
	buf[len / 2] ^= 0x55;
	assert_null(view_profile_decode(buf, len, MAX_BYTES, why, sizeof(why)));
	free(buf);
}

static void test_view_profile_refuses_other_sample_types(void **state)
{
	char why[160];
	size_t len;
	uint8_t *buf = view_fixture_profile("alloc_space", 1, &len);

	(void)state;
	assert_null(view_profile_decode(buf, len, MAX_BYTES, why, sizeof(why)));
	assert_int_equal(errno, ENOTSUP);
	assert_non_null(strstr(why, "alloc_space"));
	free(buf);
}

static void test_view_profile_refuses_past_its_size_cap(void **state)
{
	char why[160];
	size_t len;
	uint8_t *buf = view_fixture_profile("cpu", 1, &len);

	(void)state;
	assert_null(view_profile_decode(buf, len, 64, why, sizeof(why)));
	assert_int_equal(errno, EFBIG);
	free(buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_view_profile_keeps_span_samples_root_first),
		cmocka_unit_test(test_view_profile_reads_plain_protobuf_too),
		cmocka_unit_test(test_view_profile_refuses_empty_input),
		cmocka_unit_test(test_view_profile_refuses_every_truncation),
		cmocka_unit_test(test_view_profile_survives_every_protobuf_cut),
		cmocka_unit_test(test_view_profile_refuses_corrupt_bytes),
		cmocka_unit_test(test_view_profile_refuses_other_sample_types),
		cmocka_unit_test(test_view_profile_refuses_past_its_size_cap),
	};

	return cmocka_run_group_tests_name("view_profile", tests, NULL, NULL);
}
