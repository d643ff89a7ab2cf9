// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Unit tests for the upload queue: FIFO order, the byte bound (the request being sent
 * included), taking an item out and putting it back. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "output/upload_queue.h"

/* An item whose body is `len` bytes of `fill`, time ts. */
static struct upload_item *item(int64_t ts, size_t len, int fill)
{
	uint8_t *body = malloc(len ? len : 1);
	struct upload_item *it;

	assert_non_null(body);
	memset(body, fill, len);
	it = upload_item_new("svc", ts, (uint64_t)ts, body, len);
	assert_non_null(it);
	return it;
}

static void test_upload_queue_keeps_fifo_order(void **state)
{
	struct upload_queue q;
	struct upload_item *it;
	int64_t ts;

	(void)state;
	upload_queue_init(&q, 1 << 20);
	for (ts = 1; ts <= 5; ts++)
		assert_int_equal(upload_queue_push(&q, item(ts, 100, (int)ts)), 0);
	assert_int_equal(q.count, 5);
	for (ts = 1; ts <= 5; ts++) {
		it = upload_queue_pop(&q);
		assert_non_null(it);
		assert_int_equal(it->ts_ns, ts);
		assert_int_equal(it->body[0], ts);
		upload_item_free(it);
	}
	assert_null(upload_queue_pop(&q));
	assert_int_equal(q.bytes, 0);
	upload_queue_release(&q);
}

static void test_upload_queue_refuses_what_exceeds_its_bound(void **state)
{
	struct upload_item *a = item(1, 400, 0), *b = item(2, 400, 0), *c = item(3, 400, 0);
	size_t max = 2 * upload_item_cost(a) + 10, before;
	struct upload_queue q;

	(void)state;
	upload_queue_init(&q, max);
	assert_int_equal(upload_queue_push(&q, a), 0);
	assert_int_equal(upload_queue_push(&q, b), 0);
	before = q.bytes;
	assert_int_equal(upload_queue_push(&q, c), -ENOSPC);
	assert_int_equal(q.bytes, before); /* unchanged */
	assert_int_equal(q.count, 2);
	assert_true(q.bytes <= max);
	/* Room made by dropping the oldest: now it fits. */
	upload_item_free(upload_queue_pop(&q));
	assert_int_equal(upload_queue_push(&q, c), 0);
	assert_int_equal(upload_queue_peek(&q)->ts_ns, 2);
	upload_queue_release(&q);
}

static void test_upload_queue_refuses_item_larger_than_bound(void **state)
{
	struct upload_item *big = item(1, 5000, 0);
	struct upload_queue q;

	(void)state;
	upload_queue_init(&q, 4096);
	assert_int_equal(upload_queue_push(&q, big), -ENOSPC);
	assert_int_equal(q.bytes, 0);
	upload_item_free(big);
	upload_queue_release(&q);
}

static void test_upload_queue_counts_taken_item_until_done(void **state)
{
	struct upload_item *a = item(1, 300, 0), *b = item(2, 300, 0), *c = item(3, 300, 0);
	size_t max = 2 * upload_item_cost(a);
	struct upload_queue q;
	struct upload_item *t;

	(void)state;
	upload_queue_init(&q, max);
	assert_int_equal(upload_queue_push(&q, a), 0);
	assert_int_equal(upload_queue_push(&q, b), 0);
	t = upload_queue_take(&q);
	assert_ptr_equal(t, a);
	assert_null(upload_queue_take(&q)); /* one at a time */
	assert_int_equal(q.count, 1);
	assert_int_equal(q.bytes, max); /* the taken item still counts */
	assert_int_equal(upload_queue_push(&q, c), -ENOSPC);
	assert_ptr_equal(upload_queue_pop(&q), b); /* dropping never touches the taken one */
	upload_item_free(b);
	upload_queue_untake(&q); /* a retry: back at the head */
	assert_ptr_equal(upload_queue_peek(&q), a);
	assert_int_equal(upload_queue_push(&q, c), 0);
	assert_ptr_equal(upload_queue_take(&q), a);
	upload_item_free(upload_queue_done(&q));
	assert_int_equal(q.bytes, upload_item_cost(c));
	assert_ptr_equal(upload_queue_peek(&q), c);
	upload_queue_release(&q);
}

static void test_upload_queue_release_frees_taken_and_listed(void **state)
{
	struct upload_queue q;

	(void)state;
	upload_queue_init(&q, 1 << 20);
	assert_int_equal(upload_queue_push(&q, item(1, 10, 0)), 0);
	assert_int_equal(upload_queue_push(&q, item(2, 10, 0)), 0);
	assert_non_null(upload_queue_take(&q));
	upload_queue_release(&q); /* the sanitizers check nothing leaks */
	assert_int_equal(q.bytes, 0);
	assert_null(upload_queue_peek(&q));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_upload_queue_keeps_fifo_order),
		cmocka_unit_test(test_upload_queue_refuses_what_exceeds_its_bound),
		cmocka_unit_test(test_upload_queue_refuses_item_larger_than_bound),
		cmocka_unit_test(test_upload_queue_counts_taken_item_until_done),
		cmocka_unit_test(test_upload_queue_release_frees_taken_and_listed),
	};

	return cmocka_run_group_tests_name("upload_queue", tests, NULL, NULL);
}
