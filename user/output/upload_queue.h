/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* A FIFO of encoded push requests bounded in bytes. The request being sent stays counted, so
 * the bound holds for everything the uploader keeps in memory. Not locked: the caller's job. */
#ifndef SPANPROF_UPLOAD_QUEUE_H
#define SPANPROF_UPLOAD_QUEUE_H

#include <stddef.h>
#include <stdint.h>

#define UPLOAD_SERVICE_LOG_MAX 64 /* service names are kept this long, for log lines only */

struct upload_item {
	struct upload_item *next;
	int64_t ts_ns; /* profile time (window start, Unix ns): age and delivery order */
	uint64_t seq; /* breaks ties between requests of one window */
	unsigned int attempts; /* failed sends so far */
	char service[UPLOAD_SERVICE_LOG_MAX];
	size_t len;
	uint8_t *body; /* gzipped push request, owned */
};

struct upload_queue {
	struct upload_item *head, *tail;
	struct upload_item *taken; /* being sent: out of the list, still counted */
	size_t bytes, max_bytes; /* bytes counts upload_item_cost() of listed and taken items */
	size_t count; /* listed items, not counting taken */
};

/* A new item that takes over body (malloc'ed) on success; on failure (NULL, errno ENOMEM) body
 * stays the caller's. service is cut to UPLOAD_SERVICE_LOG_MAX - 1 bytes. */
struct upload_item *upload_item_new(const char *service, int64_t ts_ns, uint64_t seq, uint8_t *body,
				    size_t len);
void upload_item_free(struct upload_item *it); /* NULL-safe */

/* Memory an item takes, header included: what the queue's bound counts. */
size_t upload_item_cost(const struct upload_item *it);

void upload_queue_init(struct upload_queue *q, size_t max_bytes);
/* Frees every listed item and the taken one. */
void upload_queue_release(struct upload_queue *q);

/* Appends it. Returns 0, or -ENOSPC (nothing changed) when it would push bytes over max_bytes. */
int upload_queue_push(struct upload_queue *q, struct upload_item *it);

/* Oldest listed item, or NULL. */
struct upload_item *upload_queue_peek(const struct upload_queue *q);

/* Removes and returns the oldest listed item (no longer counted), or NULL. For dropping. */
struct upload_item *upload_queue_pop(struct upload_queue *q);

/* Takes the oldest listed item out for sending; it stays counted until upload_queue_done() or
 * goes back to the head with upload_queue_untake(). One item at a time; NULL when empty or when
 * one is already taken. */
struct upload_item *upload_queue_take(struct upload_queue *q);
void upload_queue_untake(struct upload_queue *q);
/* Forgets the taken item (sent or dropped) and returns it for the caller to free. */
struct upload_item *upload_queue_done(struct upload_queue *q);

#endif /* SPANPROF_UPLOAD_QUEUE_H */
