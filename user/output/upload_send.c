// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The uploader thread: takes the oldest request from the memory queue or the spool, sends it
 * outside the lock, then counts it as sent, puts it back for a retry with backoff, or drops it. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "output/upload_int.h"
#include "util/clock.h"
#include "util/log.h"

/* The request being sent: the queue's taken item, or a spooled one read into body. */
struct pending {
	int from_spool;
	struct upload_item *item;
	struct spool_entry entry;
	uint8_t *body;
	size_t len;
	int64_t ts_ns;
	const char *service; /* for log lines */
};

void upload_log_drop(uint64_t count, const char *reason, const char *service)
{
	if (count & (count - 1))
		return;
	if (service && *service)
		log_warn(0, "dropped a profile of service %s: %s (%" PRIu64 " so far)", service,
			 reason, count);
	else
		log_warn(0, "dropped a profile: %s (%" PRIu64 " so far)", reason, count);
}

/* Drops what the server would refuse as too old: queued requests from the head, spooled ones
 * anywhere. */
static void expire_old(struct uploader *u)
{
	int64_t min_ts = (int64_t)clock_real_ns() - (int64_t)u->o.max_age_s * (int64_t)NS_PER_S;
	struct upload_item *it;
	size_t n;

	while ((it = upload_queue_peek(&u->queue)) && it->ts_ns < min_ts) {
		u->stats.dropped_too_old++;
		upload_log_drop(u->stats.dropped_too_old, "older than the server accepts",
				it->service);
		upload_item_free(upload_queue_pop(&u->queue));
	}
	n = u->spool ? spool_expire(u->spool, min_ts) : 0;
	if (n) {
		u->stats.dropped_too_old += n;
		log_warn(0, "dropped %zu spooled profiles older than %u s", n, u->o.max_age_s);
	}
}

/* Takes the oldest request, from the queue or the spool. Returns 1 when there is one in *p. */
static int pick(struct uploader *u, struct pending *p)
{
	struct upload_item *it = upload_queue_peek(&u->queue);
	struct spool_entry e;
	int gone, err;

	memset(p, 0, sizeof(*p));
	while (u->spool && !spool_peek(u->spool, &e) && (!it || e.ts_ns <= it->ts_ns)) {
		err = spool_take(u->spool, &p->entry, &p->body, &p->len, &gone);
		if (!err) {
			p->from_spool = 1;
			p->ts_ns = e.ts_ns;
			p->service = "(spooled)";
			return 1;
		}
		if (!gone)
			break;
		u->stats.dropped_spool_error++; /* unreadable: logged, deleted; try the next */
	}
	if (!it)
		return 0;
	p->item = upload_queue_take(&u->queue);
	p->body = p->item->body;
	p->len = p->item->len;
	p->ts_ns = p->item->ts_ns;
	p->service = p->item->service;
	return 1;
}

/* Forgets the pending request: sent or dropped. */
static void finish(struct uploader *u, struct pending *p)
{
	if (p->from_spool) {
		spool_done(u->spool);
		free(p->body);
	} else {
		upload_item_free(upload_queue_done(&u->queue));
	}
}

/* Puts the pending request back where it came from, at the head. Returns 1 when it had failed
 * before (so requests_retried counts each request once). */
static int put_back(struct uploader *u, struct pending *p)
{
	int again;

	if (p->from_spool) {
		again = u->has_last_failed_spool && u->last_failed_spool.ts_ns == p->entry.ts_ns &&
			u->last_failed_spool.seq == p->entry.seq;
		u->last_failed_spool = p->entry;
		u->has_last_failed_spool = 1;
		spool_untake(u->spool);
		free(p->body);
		return again;
	}
	again = p->item->attempts++ > 0;
	upload_queue_untake(&u->queue);
	return again;
}

static void on_retry(struct uploader *u, struct pending *p, const struct upload_http_result *r)
{
	unsigned int delay = backoff_next_ms(&u->backoff);

	if (r->retry_after_ms > delay)
		delay = r->retry_after_ms < u->o.retry_max_ms ? r->retry_after_ms :
								u->o.retry_max_ms;
	u->stats.retries++;
	if (!put_back(u, p))
		u->stats.requests_retried++;
	u->retry_at_ns = (int64_t)clock_mono_ns() + (int64_t)delay * (int64_t)NS_PER_MS;
	if (r->status >= 300 && r->status < 400)
		log_msg(u->failing ? LOG_LEVEL_DEBUG : LOG_LEVEL_WARN,
			"push to %s: HTTP %ld: a redirect that cannot be followed (no Location?); "
			"the profile is kept, retrying in %u ms",
			upload_http_url(u->http), r->status, delay);
	else if (r->status)
		log_msg(u->failing ? LOG_LEVEL_DEBUG : LOG_LEVEL_WARN,
			"push to %s: HTTP %ld: %s; retrying in %u ms", upload_http_url(u->http),
			r->status, r->message, delay);
	else
		log_msg(u->failing ? LOG_LEVEL_DEBUG : LOG_LEVEL_WARN,
			"push to %s failed: %s; retrying in %u ms", upload_http_url(u->http),
			r->message, delay);
	u->failing = 1;
}

/* The log slot of status: its own, else a free one, else the one logged longest ago. */
static struct reject_log *reject_slot(struct uploader *u, long status)
{
	struct reject_log *oldest = &u->rejects[0];
	size_t i;

	for (i = 0; i < UPLOAD_REJECT_LOG_SLOTS; i++) {
		if (u->rejects[i].status == status || !u->rejects[i].status)
			return &u->rejects[i];
		if (u->rejects[i].logged_ns < oldest->logged_ns)
			oldest = &u->rejects[i];
	}
	memset(oldest, 0, sizeof(*oldest));
	return oldest;
}

/* A refusal is never retried; a server that refuses one push usually refuses them all, so each
 * status is logged once per window, with how many more there were since. */
static void log_reject(struct uploader *u, const struct pending *p,
		       const struct upload_http_result *r)
{
	struct reject_log *l = reject_slot(u, r->status);
	int64_t now = (int64_t)clock_mono_ns();

	if (l->status && now - l->logged_ns < UPLOAD_REJECT_LOG_WINDOW_NS) {
		l->suppressed++;
		return;
	}
	log_err(0,
		"push of a profile of service %s to %s rejected: HTTP %ld: %s; dropped "
		"(%" PRIu64 " more refused with this status since the last report; next "
		"report in 60 s at the earliest)",
		p->service, upload_http_url(u->http), r->status,
		r->message[0] ? r->message : "(no message)", l->suppressed);
	l->status = r->status;
	l->logged_ns = now;
	l->suppressed = 0;
}

static void on_reject(struct uploader *u, struct pending *p, const struct upload_http_result *r)
{
	u->stats.dropped_rejected++;
	if (r->status >= 400 && r->status < 500)
		u->stats.requests_failed_4xx++;
	log_reject(u, p, r);
	finish(u, p);
	backoff_reset(&u->backoff);
	u->failing = 0;
}

static void settle(struct uploader *u, struct pending *p, const struct upload_http_result *r)
{
	switch (r->verdict) {
	case UPLOAD_HTTP_OK:
		u->stats.requests_ok++;
		u->stats.profiles_sent++;
		u->stats.bytes_sent += p->len;
		if (u->failing)
			log_info("push to %s works again", upload_http_url(u->http));
		finish(u, p);
		backoff_reset(&u->backoff);
		u->failing = 0;
		u->has_last_failed_spool = 0;
		break;
	case UPLOAD_HTTP_RETRY:
		on_retry(u, p, r);
		break;
	case UPLOAD_HTTP_REJECT:
		on_reject(u, p, r);
		break;
	}
}

/* Timeout for the next attempt: the total timeout, cut to what is left of the flush. */
static unsigned int attempt_timeout_ms(const struct uploader *u, int64_t now)
{
	int64_t left;

	if (!u->stopping)
		return u->o.total_timeout_ms;
	left = (u->flush_deadline_ns - now) / (int64_t)NS_PER_MS;
	if (left < 1)
		left = 1;
	return left < u->o.total_timeout_ms ? (unsigned int)left : u->o.total_timeout_ms;
}

static void wait_until(struct uploader *u, int64_t deadline_ns)
{
	struct timespec ts;

	if (deadline_ns <= 0) {
		pthread_cond_wait(&u->wake, &u->lock);
		return;
	}
	ts.tv_sec = deadline_ns / 1000000000LL;
	ts.tv_nsec = deadline_ns % 1000000000LL;
	pthread_cond_timedwait(&u->wake, &u->lock, &ts);
}

/* 1 when the thread should leave: stopping and the flush is over or the queue is empty. */
static int done_flushing(const struct uploader *u, int64_t now)
{
	return u->stopping && (now >= u->flush_deadline_ns || atomic_load(&u->abort) ||
			       (!upload_queue_peek(&u->queue) && !u->queue.taken));
}

/* One round: returns after sending one request or waiting once. Called with the lock held. */
static void step(struct uploader *u)
{
	struct upload_http_result res;
	int64_t now = (int64_t)clock_mono_ns();
	unsigned int timeout_ms;
	struct pending p;
	int err;

	expire_old(u);
	if (now < u->retry_at_ns) {
		wait_until(u, u->stopping && u->flush_deadline_ns < u->retry_at_ns ?
				      u->flush_deadline_ns :
				      u->retry_at_ns);
		return;
	}
	if (!pick(u, &p)) {
		wait_until(u, u->stopping ? u->flush_deadline_ns : 0);
		return;
	}
	timeout_ms = attempt_timeout_ms(u, now);
	pthread_mutex_unlock(&u->lock);
	err = upload_http_post(u->http, p.body, p.len, timeout_ms, &res);
	pthread_mutex_lock(&u->lock);
	if (err) {
		res.verdict = UPLOAD_HTTP_RETRY;
		snprintf(res.message, sizeof(res.message), "out of memory setting up the request");
	}
	if (atomic_load(&u->abort) && res.verdict == UPLOAD_HTTP_RETRY) {
		put_back(u, &p); /* cut short by uploader_stop(): not the server's fault */
		return;
	}
	settle(u, &p, &res);
}

void *upload_thread_main(void *arg)
{
	struct uploader *u = arg;

	pthread_mutex_lock(&u->lock);
	while (!done_flushing(u, (int64_t)clock_mono_ns()))
		step(u);
	pthread_mutex_unlock(&u->lock);
	return NULL;
}
