// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Unit tests for span_names: ids resolved through a real BPF hash map once, then from the cache;
 * id 0 is no name; an id the map no longer holds is counted as lost. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <cmocka.h>
#include <linux/types.h>

#include "profile/span_names.h"
#include "spanprof_abi.h"

static void put(int fd, uint64_t id, const char *name)
{
	struct span_name v;

	memset(&v, 0, sizeof(v));
	strncpy(v.name, name, sizeof(v.name) - 1);
	assert_int_equal(bpf_map_update_elem(fd, &id, &v, BPF_ANY), 0);
}

static void test_span_names_reads_the_map_once_per_name(void **state)
{
	struct span_names *sn = span_names_new(4);
	struct span_names_stats st;
	int fd = bpf_map_create(BPF_MAP_TYPE_HASH, "test_names", sizeof(__u64),
				sizeof(struct span_name), 16, NULL);

	(void)state;
	if (fd < 0) {
		printf("  skipped: bpf_map_create: %s (needs root)\n", strerror(errno));
		span_names_free(sn);
		skip();
	}
	assert_non_null(sn);
	put(fd, 0x11, "GET /cart");
	put(fd, 0x15, "POST /pay"); /* same slot as 0x11 in a 4-slot cache */
	for (int i = 0; i < 3; i++)
		assert_string_equal(span_names_get(sn, fd, 0x11), "GET /cart");
	span_names_get_stats(sn, &st);
	assert_int_equal(st.map_reads, 1);
	assert_string_equal(span_names_get(sn, fd, 0x15), "POST /pay");
	assert_string_equal(span_names_get(sn, fd, 0x11), "GET /cart"); /* evicted, read again */
	assert_string_equal(span_names_get(sn, fd, 0), "");
	assert_null(span_names_get(sn, fd, 0x99)); /* evicted from the kernel map */
	assert_null(span_names_get(sn, -1, 0x42));
	/* The hook's bytes: cleaned where they enter, for span records, metrics and profiles. */
	put(fd, 0x23, "GET /\x1b[31mred\n\x7f");
	assert_string_equal(span_names_get(sn, fd, 0x23), "GET /?[31mred??");
	/* A thread context's name and label values: each piece cleaned, the separators kept, a
	 * piece that cleaning shortened (a two-byte C1 control) followed at once by the next. */
	put(fd, 0x27, "GET /a\x1f/r\xc2\x9b\x1b\x1f\x1fv\n");
	assert_string_equal(span_names_get(sn, fd, 0x27), "GET /a\x1f/r??\x1f\x1fv?");
	span_names_get_stats(sn, &st);
	assert_int_equal(st.map_reads, 7);
	assert_int_equal(st.lost, 2);
	span_names_free(sn);
	close(fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_span_names_reads_the_map_once_per_name),
	};

	return cmocka_run_group_tests_name("span_names", tests, NULL, NULL);
}
