/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Test-only: small pprof profiles as the agent writes them (span_id/span_name labels), encoded
 * with protobuf-c and optionally gzipped, for the viewer's reader tests. */
#ifndef SPANPROF_TEST_VIEW_FIXTURE_H
#define SPANPROF_TEST_VIEW_FIXTURE_H

#include <stddef.h>
#include <stdint.h>

/* A profile of sample type type/nanoseconds ("cpu" or "off_cpu") with three samples:
 *   main -> handle -> [parse, inlined into handle's location as parse <- handle] 30 ms,
 *       span_id 00000000000000a1, span_name "GET /a"
 *   main -> other 20 ms, span_id 00000000000000b2, span_name "GET /b"
 *   main -> idle 50 ms, no span labels
 * main is in main.c:10, handle main.c:20, parse parse.c:5, other main.c:30, idle main.c:40.
 * Returns a malloc'ed buffer (gzipped when gz), its length in *len; NULL on allocation
 * failure. */
uint8_t *view_fixture_profile(const char *type, int gz, size_t *len);

/* Writes len bytes of buf to dir/name. Returns 0 or -1. */
int view_fixture_write(const char *dir, const char *name, const void *buf, size_t len);

#endif /* SPANPROF_TEST_VIEW_FIXTURE_H */
