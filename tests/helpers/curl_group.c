// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Test-only: libcurl's global state for a group of tests (see curl_group.h). */
#include <curl/curl.h>

#include "curl_group.h"
#include "util/log.h"

int curl_group_setup(void **state)
{
	(void)state;
	log_set_level(LOG_LEVEL_ERROR);
	return curl_global_init(CURL_GLOBAL_DEFAULT) ? -1 : 0;
}

int curl_group_teardown(void **state)
{
	(void)state;
	curl_global_cleanup();
	return 0;
}
