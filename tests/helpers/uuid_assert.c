// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Test-only: checks a version 4 UUID's text (see uuid_assert.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <cmocka.h>

#include "uuid_assert.h"

void assert_uuid_v4(const char *id)
{
	assert_non_null(id);
	assert_int_equal(strlen(id), 36);
	for (size_t i = 0; i < 36; i++) {
		if (i == 8 || i == 13 || i == 18 || i == 23)
			assert_int_equal(id[i], '-');
		else
			assert_non_null(strchr("0123456789abcdef", id[i]));
	}
	assert_int_equal(id[14], '4');
	assert_non_null(strchr("89ab", id[19]));
}
