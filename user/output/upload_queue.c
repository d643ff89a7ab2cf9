// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* A FIFO of encoded push requests bounded in bytes, with one item at a time taken out for
 * sending and still counted, so a retry can put it back at the head. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "output/upload_queue.h"

struct upload_item *upload_item_new(const char *service, int64_t ts_ns, uint64_t seq, uint8_t *body,
				    size_t len)
{
	struct upload_item *it = calloc(1, sizeof(*it));

	if (!it) {
		errno = ENOMEM;
		return NULL;
	}
	it->ts_ns = ts_ns;
	it->seq = seq;
	snprintf(it->service, sizeof(it->service), "%s", service ? service : "");
	it->len = len;
	it->body = body;
	return it;
}

void upload_item_free(struct upload_item *it)
{
	if (!it)
		return;
	free(it->body);
	free(it);
}

size_t upload_item_cost(const struct upload_item *it)
{
	return sizeof(*it) + it->len;
}

void upload_queue_init(struct upload_queue *q, size_t max_bytes)
{
	memset(q, 0, sizeof(*q));
	q->max_bytes = max_bytes;
}

void upload_queue_release(struct upload_queue *q)
{
	struct upload_item *it;

	while ((it = upload_queue_pop(q)))
		upload_item_free(it);
	upload_item_free(q->taken);
	q->taken = NULL;
	q->bytes = 0;
}

int upload_queue_push(struct upload_queue *q, struct upload_item *it)
{
	size_t cost = upload_item_cost(it);

	if (cost > q->max_bytes || q->bytes > q->max_bytes - cost)
		return -ENOSPC;
	it->next = NULL;
	if (q->tail)
		q->tail->next = it;
	else
		q->head = it;
	q->tail = it;
	q->bytes += cost;
	q->count++;
	return 0;
}

struct upload_item *upload_queue_peek(const struct upload_queue *q)
{
	return q->head;
}

/* Unlinks the head without touching the byte count. */
static struct upload_item *unlink_head(struct upload_queue *q)
{
	struct upload_item *it = q->head;

	if (!it)
		return NULL;
	q->head = it->next;
	if (!q->head)
		q->tail = NULL;
	it->next = NULL;
	q->count--;
	return it;
}

struct upload_item *upload_queue_pop(struct upload_queue *q)
{
	struct upload_item *it = unlink_head(q);

	if (it)
		q->bytes -= upload_item_cost(it);
	return it;
}

struct upload_item *upload_queue_take(struct upload_queue *q)
{
	if (q->taken)
		return NULL;
	q->taken = unlink_head(q);
	return q->taken;
}

void upload_queue_untake(struct upload_queue *q)
{
	struct upload_item *it = q->taken;

	if (!it)
		return;
	q->taken = NULL;
	it->next = q->head;
	q->head = it;
	if (!q->tail)
		q->tail = it;
	q->count++;
}

struct upload_item *upload_queue_done(struct upload_queue *q)
{
	struct upload_item *it = q->taken;

	if (it) {
		q->bytes -= upload_item_cost(it);
		q->taken = NULL;
	}
	return it;
}
