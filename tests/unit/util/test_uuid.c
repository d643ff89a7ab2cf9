// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Unit tests for v4 UUIDs: the RFC 9562 layout (version and variant bits) and no repeats. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "util/uuid.h"
#include "uuid_assert.h"

static void test_uuid_v4_has_the_rfc_layout(void **state)
{
	char id[UUID_STR_SIZE];
	int n;

	(void)state;
	for (n = 0; n < 1000; n++) {
		assert_int_equal(uuid_v4(id), 0);
		assert_uuid_v4(id);
	}
}

static void test_uuid_v4_does_not_repeat(void **state)
{
	static char ids[2000][UUID_STR_SIZE];
	int i, j;

	(void)state;
	for (i = 0; i < 2000; i++)
		assert_int_equal(uuid_v4(ids[i]), 0);
	for (i = 0; i < 2000; i++)
		for (j = 0; j < i; j++)
			assert_string_not_equal(ids[i], ids[j]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_uuid_v4_has_the_rfc_layout),
		cmocka_unit_test(test_uuid_v4_does_not_repeat),
	};

	return cmocka_run_group_tests_name("uuid", tests, NULL, NULL);
}
