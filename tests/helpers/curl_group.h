/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Test-only: the cmocka group setup of unit tests whose code speaks HTTP through libcurl. */
#ifndef SPANPROF_TEST_CURL_GROUP_H
#define SPANPROF_TEST_CURL_GROUP_H

/* libcurl's global state set up once, before any thread (as main() does), and the agent's log
 * kept to errors: the failures the tests provoke are logged, and the output keeps to cmocka's
 * lines. Returns 0, or -1 when libcurl cannot start. */
int curl_group_setup(void **state);

/* libcurl's global state released. */
int curl_group_teardown(void **state);

#endif /* SPANPROF_TEST_CURL_GROUP_H */
