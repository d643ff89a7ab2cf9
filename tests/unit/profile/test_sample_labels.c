// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Unit tests for sample_labels: a sample's span and process labels, the span id by scope, a
 * thread context's attributes, cleaned values, and what a push leaves out. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "profile/sample_labels.h"

/* The value of label key, or NULL when the sample has none. */
static const char *value_of(const struct sample_labels *l, const char *key)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		if (!strcmp(l->labels[i].key, key))
			return l->labels[i].value;
	return NULL;
}

static void fill_span(struct sample_key *k)
{
	memset(k, 0, sizeof(*k));
	k->has_span = 1;
	memset(k->span.trace_id, 0xab, sizeof(k->span.trace_id));
	memcpy(k->span.span_id, "\x01\x02\x03\x04\x05\x06\x07\x08", 8);
	memcpy(k->span.root_span_id, "\x11\x12\x13\x14\x15\x16\x17\x18", 8);
}

static void test_span_and_process_labels(void **state)
{
	struct sample_label_options o = { .scope = SPAN_SCOPE_ROOT };
	struct proc_info proc = { 0 };
	struct sample_labels l;
	struct sample_key k;
	struct sample s = { .key = &k, .count = 1, .span_name = "GET /x" };

	(void)state;
	fill_span(&k);
	strcpy(proc.k8s_pod, "web-1");
	strcpy(proc.service_namespace, "shop");
	assert_int_equal(sample_labels_build(&l, &o, &s, &proc), 5);
	assert_string_equal(value_of(&l, "span_id"), "1112131415161718");
	assert_string_equal(value_of(&l, "trace_id"), "abababababababababababababababab");
	assert_string_equal(value_of(&l, "span_name"), "GET /x");
	assert_string_equal(value_of(&l, "pod"), "web-1");
	assert_string_equal(value_of(&l, "service_namespace"), "shop");
	assert_null(value_of(&l, "namespace"));
	/* The span's own id when the scope says so. */
	o.scope = SPAN_SCOPE_ALL;
	sample_labels_build(&l, &o, &s, &proc);
	assert_string_equal(value_of(&l, "span_id"), "0102030405060708");
}

/* An unsampled span (zero ids) keeps its name only; a sample with no span has process labels
 * only, and no process gives none. */
static void test_zero_ids_and_no_span(void **state)
{
	struct sample_label_options o = { .scope = SPAN_SCOPE_ROOT };
	struct proc_info proc = { 0 };
	struct sample_labels l;
	struct sample_key k = { .has_span = 1 };
	struct sample s = { .key = &k, .count = 1, .span_name = "job" };

	(void)state;
	assert_int_equal(sample_labels_build(&l, &o, &s, &proc), 1);
	assert_string_equal(value_of(&l, "span_name"), "job");
	k.has_span = 0;
	strcpy(proc.k8s_container, "app");
	assert_int_equal(sample_labels_build(&l, &o, &s, &proc), 1);
	assert_string_equal(value_of(&l, "container"), "app");
	assert_int_equal(sample_labels_build(&l, &o, &s, NULL), 0);
	/* A name the drain lost leaves the label out. */
	fill_span(&k);
	s.span_name = NULL;
	assert_int_equal(sample_labels_build(&l, &o, &s, NULL), 2);
	assert_null(value_of(&l, "span_name"));
}

/* A thread context span: the name is cut at the first separator, each non-empty value is
 * labelled under its configured name ('.' and '-' as '_'), and values are cleaned. */
static void test_thread_context_attributes(void **state)
{
	static const char *const names[] = { "http.route", "user-tier", "region" };
	struct sample_label_options o = { SPAN_SCOPE_ALL, names, 3 };
	struct sample_labels l;
	struct sample_key k;
	struct sample s = { .key = &k,
			    .count = 1,
			    .span_name = "handle\x1f/a\nb\x1f\x1f"
					 "eu" };

	(void)state;
	fill_span(&k);
	k.span.abi_version = SPANPROF_SPAN_FROM_TCTX;
	assert_int_equal(sample_labels_build(&l, &o, &s, NULL), 5);
	assert_string_equal(value_of(&l, "span_name"), "handle");
	assert_non_null(value_of(&l, "http_route"));
	assert_null(strchr(value_of(&l, "http_route"), '\n'));
	assert_null(value_of(&l, "user_tier")); /* empty value */
	assert_string_equal(value_of(&l, "region"), "eu");
	/* The same bytes from a hook span are one name, cleaned. */
	k.span.abi_version = 0;
	assert_int_equal(sample_labels_build(&l, &o, &s, NULL), 3);
	assert_null(strchr(value_of(&l, "span_name"), '\n'));
}

static void test_push_omit(void **state)
{
	(void)state;
	assert_string_equal(sample_labels_push_omit(0), "trace_id");
	assert_null(sample_labels_push_omit(1));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_span_and_process_labels),
		cmocka_unit_test(test_zero_ids_and_no_span),
		cmocka_unit_test(test_thread_context_attributes),
		cmocka_unit_test(test_push_omit),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
