/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Test-only: WAIT_FOR(cond) polls cond every 5 ms for up to 3 s, then asserts it with cmocka:
 * for what a background thread of the code under test makes true. Include after <cmocka.h>. */
#ifndef SPANPROF_TEST_WAIT_FOR_H
#define SPANPROF_TEST_WAIT_FOR_H

#include <unistd.h>

#define WAIT_FOR(cond)                                              \
	do {                                                        \
		int tries_;                                         \
		for (tries_ = 0; tries_ < 600 && !(cond); tries_++) \
			usleep(5000);                               \
		assert_true(cond);                                  \
	} while (0)

#endif /* SPANPROF_TEST_WAIT_FOR_H */
