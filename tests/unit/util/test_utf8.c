// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Unit tests for utf8: validation edge cases, repair with U+FFFD, boundary-safe truncation. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "util/utf8.h"

static void test_utf8_accepts_valid_and_rejects_invalid(void **state)
{
	(void)state;
	assert_true(utf8_valid(""));
	assert_true(utf8_valid("plain ascii"));
	assert_true(utf8_valid("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80 \xf4\x8f\xbf\xbf"));
	assert_false(utf8_valid("\xff"));
	assert_false(utf8_valid("\xc0\xaf")); /* overlong '/' */
	assert_false(utf8_valid("\xe0\x80\xaf")); /* overlong, 3 bytes */
	assert_false(utf8_valid("\xed\xa0\x80")); /* UTF-16 surrogate */
	assert_false(utf8_valid("\xf4\x90\x80\x80")); /* above U+10FFFF */
	assert_false(utf8_valid("\xe2\x82")); /* cut short by the end */
	assert_false(utf8_valid("\x80")); /* lone continuation */
}

static void test_utf8_sanitize_replaces_each_bad_byte(void **state)
{
	char *s;

	(void)state;
	s = utf8_sanitize("a\xffz\xe2\x82");
	assert_non_null(s);
	assert_string_equal(s, "a\xef\xbf\xbdz\xef\xbf\xbd\xef\xbf\xbd");
	assert_true(utf8_valid(s));
	free(s);
	s = utf8_sanitize("ok \xc3\xa9");
	assert_string_equal(s, "ok \xc3\xa9");
	free(s);
}

static void test_utf8_boundary_never_splits_a_character(void **state)
{
	const char *s = "ab\xe2\x82\xac"; /* "ab€": € is 3 bytes at 2..4 */

	(void)state;
	assert_int_equal(utf8_boundary(s, 2), 2);
	assert_int_equal(utf8_boundary(s, 3), 2);
	assert_int_equal(utf8_boundary(s, 4), 2);
	assert_int_equal(utf8_boundary(s, 5), 5);
	assert_int_equal(utf8_boundary("abc", 1), 1);
	assert_int_equal(utf8_boundary("\x80\x80\x80\x80\x80", 4), 4); /* garbage: cut anyway */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_utf8_accepts_valid_and_rejects_invalid),
		cmocka_unit_test(test_utf8_sanitize_replaces_each_bad_byte),
		cmocka_unit_test(test_utf8_boundary_never_splits_a_character),
	};

	return cmocka_run_group_tests_name("utf8", tests, NULL, NULL);
}
