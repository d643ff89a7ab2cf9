// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Unit tests for the JSON string escaper: each rule, pieces never cut, and json-c reading back
 * exactly the text that was escaped (or U+FFFD where the input was not UTF-8). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>
#include <json-c/json.h>

#include "util/json_escape.h"

struct sink {
	char buf[512];
	size_t len, pieces;
};

static void put(void *ctx, const char *s, size_t n)
{
	struct sink *k = ctx;

	assert_true(k->len + n < sizeof(k->buf));
	memcpy(k->buf + k->len, s, n);
	k->len += n;
	k->buf[k->len] = '\0';
	k->pieces++;
}

static const char *escaped(struct sink *k, const char *s)
{
	memset(k, 0, sizeof(*k));
	json_escape(s, put, k);
	return k->buf;
}

static void test_json_escape_each_rule(void **state)
{
	struct sink k;

	(void)state;
	assert_string_equal(escaped(&k, "plain"), "plain");
	assert_string_equal(escaped(&k, "a\"b\\c"), "a\\\"b\\\\c");
	assert_string_equal(escaped(&k, "\n\r\t"), "\\n\\r\\t");
	assert_string_equal(escaped(&k, "\x01\x1b\x7f"), "\\u0001\\u001b\\u007f");
	assert_string_equal(escaped(&k, "</script>"), "\\u003c/script>");
	assert_string_equal(escaped(&k, "caf\xc3\xa9 \xf0\x9f\x98\x80"),
			    "caf\xc3\xa9 \xf0\x9f\x98\x80");
	/* A stray continuation byte, a cut sequence, an overlong '/', a surrogate. */
	assert_string_equal(escaped(&k, "\x80|\xc3|\xc0\xaf|\xed\xa0\x80"),
			    "\\ufffd|\\ufffd|\\ufffd\\ufffd|\\ufffd\\ufffd\\ufffd");
	assert_string_equal(escaped(&k, ""), "");
	assert_string_equal(escaped(&k, NULL), "");
}

/* One piece per character or escape: a writer that drops what does not fit cuts neither. */
static void test_json_escape_gives_whole_pieces(void **state)
{
	struct sink k;

	(void)state;
	escaped(&k, "a\xc3\xa9\n\xff");
	assert_int_equal(k.pieces, 4);
}

/* json-c parses the escaped text back to the original for every byte value that is valid
 * UTF-8 on its own, and to U+FFFD for the others. */
static void test_json_escape_reads_back_with_json_c(void **state)
{
	char in[2] = { 0 }, doc[600];
	json_object *o;
	struct sink k;
	int c;

	(void)state;
	for (c = 1; c < 256; c++) {
		in[0] = (char)c;
		snprintf(doc, sizeof(doc), "\"%s\"", escaped(&k, in));
		o = json_tokener_parse(doc);
		assert_non_null(o);
		assert_string_equal(json_object_get_string(o), c < 0x80 ? in : "\xef\xbf\xbd");
		json_object_put(o);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_json_escape_each_rule),
		cmocka_unit_test(test_json_escape_gives_whole_pieces),
		cmocka_unit_test(test_json_escape_reads_back_with_json_c),
	};

	return cmocka_run_group_tests_name("json_escape", tests, NULL, NULL);
}
