// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Unit tests for python_lines: real tables from CPython 3.8-3.13 against CPython's own answers,
 * and truncated or hostile tables. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "interp/python_lines.h"
#include "python_line_vectors.h"

static void test_real_tables(void **state)
{
	const struct line_vector *v;
	size_t i;
	int j, got;

	(void)state;
	for (i = 0; i < sizeof(line_vectors) / sizeof(line_vectors[0]); i++) {
		v = &line_vectors[i];
		for (j = 0; j < v->npairs; j++) {
			got = python_line_for(v->minor, (const uint8_t *)v->tab, v->len,
					      v->firstlineno, v->pairs[j].lasti);
			if (got != v->pairs[j].line)
				fail_msg("3.%d lasti %u: line %d, CPython says %d", v->minor,
					 v->pairs[j].lasti, got, v->pairs[j].line);
		}
	}
}

/* Every prefix of every table decodes without reading past its end (ASan would catch it). */
static void test_truncated_tables(void **state)
{
	const struct line_vector *v;
	uint8_t buf[256];
	size_t i;
	int len;

	(void)state;
	for (i = 0; i < sizeof(line_vectors) / sizeof(line_vectors[0]); i++) {
		v = &line_vectors[i];
		for (len = 0; len <= v->len && len <= (int)sizeof(buf); len++) {
			memcpy(buf, v->tab, len);
			python_line_for(v->minor, buf, len, v->firstlineno, 1000);
		}
	}
}

static void test_hostile_tables(void **state)
{
	/* An unending varint, a non-header byte, and a line delta that would overflow. */
	static const uint8_t endless[] = { 0xf0, 0x7f, 0x7f, 0x7f, 0x7f, 0x7f, 0x7f, 0x7f };
	static const uint8_t no_header[] = { 0x05, 0x00 };
	static const uint8_t big[] = { 0xe8, 0x7e, 0x7f, 0x7f, 0x7f, 0x3f };

	(void)state;
	assert_int_equal(python_line_for(12, endless, sizeof(endless), 1, 0), -EINVAL);
	assert_int_equal(python_line_for(12, no_header, sizeof(no_header), 1, 0), -EINVAL);
	assert_int_equal(python_line_for(12, big, sizeof(big), 1, 0), 0);
	assert_int_equal(python_line_for(7, no_header, sizeof(no_header), 1, 0), -EINVAL);
	assert_int_equal(python_line_for(10, NULL, 0, 1, 0), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_real_tables),
		cmocka_unit_test(test_truncated_tables),
		cmocka_unit_test(test_hostile_tables),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
