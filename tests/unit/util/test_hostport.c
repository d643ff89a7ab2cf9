// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Unit tests for user/util/hostport.c: HOST:PORT, [IPv6]:PORT and :PORT, and what is refused. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "util/hostport.h"

static void expect_split(const char *s, const char *host, unsigned int port)
{
	char got[64];
	unsigned int p = 99999;

	if (hostport_split(s, got, sizeof(got), &p))
		fail_msg("'%s' was refused", s);
	assert_string_equal(got, host);
	assert_int_equal(p, port);
}

static void test_hostport_splits_names_addresses_and_any(void **state)
{
	(void)state;
	expect_split("127.0.0.1:9100", "127.0.0.1", 9100);
	expect_split("localhost:0", "localhost", 0);
	expect_split("[::1]:65535", "::1", 65535);
	expect_split("[fe80::1%eth0]:80", "fe80::1%eth0", 80);
	expect_split(":9100", "", 9100);
}

static void test_hostport_refuses_what_is_not_host_and_port(void **state)
{
	static const char *const bad[] = { "",	      "9100",	    "host",    "host:",
					   "host:x",  "host:65536", "host:-1", "::1:80",
					   "[::1]80", "[]:80",	    "[::1:80", "host:80 " };
	char host[64];
	unsigned int port;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (hostport_split(bad[i], host, sizeof(host), &port) != -EINVAL)
			fail_msg("'%s' was accepted", bad[i]);
	assert_int_equal(hostport_split(NULL, host, sizeof(host), &port), -EINVAL);
	/* A host that does not fit the buffer. */
	assert_int_equal(hostport_split("abcdefgh:1", host, 8, &port), -EINVAL);
	assert_int_equal(hostport_split("abcdefg:1", host, 8, &port), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hostport_splits_names_addresses_and_any),
		cmocka_unit_test(test_hostport_refuses_what_is_not_host_and_port),
	};

	return cmocka_run_group_tests_name("hostport", tests, NULL, NULL);
}
