/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Test-only: the text form of a random (version 4) UUID, checked. */
#ifndef SPANPROF_TEST_UUID_ASSERT_H
#define SPANPROF_TEST_UUID_ASSERT_H

/* A failed cmocka assertion unless id is 36 lower-case hex digits and dashes in the 8-4-4-4-12
 * layout with version 4 and the RFC 9562 variant (8, 9, a or b). */
void assert_uuid_v4(const char *id);

#endif /* SPANPROF_TEST_UUID_ASSERT_H */
