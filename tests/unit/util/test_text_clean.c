// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Unit tests for text_clean(): what a process may put in a name never reaches an output as a
 * control character or broken UTF-8. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "util/text_clean.h"
#include "util/utf8.h"

static void test_text_clean_replaces_every_control_character(void **state)
{
	char s[] = "a\nb\rc\td\x1b[31me\x7f"
		   "f\xc2\x85g\xc2\x9fh";

	(void)state;
	text_clean(s);
	assert_string_equal(s, "a?b?c?d?[31me?f?g?h");
}

static void test_text_clean_keeps_valid_utf8_and_repairs_the_rest(void **state)
{
	char s[] = "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x99\x82 \xff\xc3 \xe2\x82";

	(void)state;
	text_clean(s);
	assert_string_equal(s, "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x99\x82 ?? ??");
	assert_true(utf8_valid(s));
}

static void test_text_clean_leaves_plain_text_alone(void **state)
{
	char s[] = "GET /api/v1/carts/{id} (checkout.py:42)";

	(void)state;
	text_clean(s);
	assert_string_equal(s, "GET /api/v1/carts/{id} (checkout.py:42)");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_text_clean_replaces_every_control_character),
		cmocka_unit_test(test_text_clean_keeps_valid_utf8_and_repairs_the_rest),
		cmocka_unit_test(test_text_clean_leaves_plain_text_alone),
	};

	return cmocka_run_group_tests_name("text_clean", tests, NULL, NULL);
}
