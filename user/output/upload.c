// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The uploader's API: checks options, starts and stops the uploader thread, and turns each
 * submitted window into push requests queued in memory, spilled to the spool, or dropped. */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "output/push_encode.h"
#include "output/upload_int.h"
#include "output/window_encode.h"
#include "profile/sample_labels.h"
#include "util/clock.h"
#include "util/log.h"

#define DEFAULT(field, value)               \
	do {                                \
		if (!o->field)              \
			o->field = (value); \
	} while (0)

static void apply_defaults(struct upload_options *o)
{
	DEFAULT(connect_timeout_ms, UPLOAD_DEFAULT_CONNECT_TIMEOUT_MS);
	DEFAULT(total_timeout_ms, UPLOAD_DEFAULT_TOTAL_TIMEOUT_MS);
	DEFAULT(queue_bytes, UPLOAD_DEFAULT_QUEUE_BYTES);
	DEFAULT(spool_bytes, UPLOAD_DEFAULT_SPOOL_BYTES);
	DEFAULT(max_age_s, UPLOAD_DEFAULT_MAX_AGE_S);
	DEFAULT(retry_initial_ms, UPLOAD_DEFAULT_RETRY_INITIAL_MS);
	DEFAULT(retry_max_ms, UPLOAD_DEFAULT_RETRY_MAX_MS);
	DEFAULT(max_profile_samples, UPLOAD_DEFAULT_MAX_PROFILE_SAMPLES);
	DEFAULT(max_profile_bytes, UPLOAD_DEFAULT_MAX_PROFILE_BYTES);
}

/* What the HTTP module does not check itself. */
static int check_options(const struct upload_options *o)
{
	const char *why;
	size_t bad;

	if (o->nstatic_labels && !o->static_labels)
		return log_err(-EINVAL, "static labels: list is missing");
	if (series_labels_check_static(o->static_labels, o->nstatic_labels, &why, &bad))
		return log_err(-EINVAL, "static label %.64s: %s",
			       bad < o->nstatic_labels && o->static_labels[bad].key ?
				       o->static_labels[bad].key :
				       "(list)",
			       why);
	if (o->retry_initial_ms > o->retry_max_ms)
		return log_err(-EINVAL, "retry initial delay (%u ms) exceeds the maximum (%u ms)",
			       o->retry_initial_ms, o->retry_max_ms);
	if (o->max_profile_bytes > UPLOAD_DEFAULT_MAX_PROFILE_BYTES ||
	    o->max_profile_samples > UPLOAD_DEFAULT_MAX_PROFILE_SAMPLES)
		return log_err(-EINVAL, "profile limits above the server's (%u samples, %u bytes)",
			       UPLOAD_DEFAULT_MAX_PROFILE_SAMPLES,
			       UPLOAD_DEFAULT_MAX_PROFILE_BYTES);
	if (o->spool_dir && !*o->spool_dir)
		return log_err(-EINVAL, "spool directory is empty");
	return 0;
}

static int copy_labels(struct uploader *u, const struct upload_options *o)
{
	size_t i;

	u->labels = calloc(o->nstatic_labels ? o->nstatic_labels : 1, sizeof(*u->labels));
	if (!u->labels)
		return -ENOMEM;
	for (i = 0; i < o->nstatic_labels; i++) {
		u->labels[i].key = strdup(o->static_labels[i].key);
		u->labels[i].value = strdup(o->static_labels[i].value);
		u->nlabels = i + 1;
		if (!u->labels[i].key || !u->labels[i].value)
			return -ENOMEM;
	}
	return 0;
}

static int init_sync(struct uploader *u)
{
	pthread_condattr_t ca;
	int err;

	err = pthread_mutex_init(&u->lock, NULL);
	if (err)
		return -err;
	err = pthread_condattr_init(&ca);
	if (!err) {
		err = pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
		err = err ?: pthread_cond_init(&u->wake, &ca);
		pthread_condattr_destroy(&ca);
	}
	if (err)
		pthread_mutex_destroy(&u->lock);
	return -err;
}

static int open_spool(struct uploader *u, const char *dir)
{
	size_t evicted = 0;
	int err;

	err = spool_open(dir, u->o.spool_bytes, &u->spool, &evicted);
	if (err)
		return err;
	u->stats.dropped_spool_full += evicted;
	u->stats.spool_found = spool_count(u->spool) + evicted;
	if (spool_count(u->spool))
		log_info("spool %s holds %zu requests (%zu bytes) to send", dir,
			 spool_count(u->spool), spool_bytes(u->spool));
	return 0;
}

/* Everything but the thread; on failure the caller frees u. */
static int setup(struct uploader *u, const struct upload_options *opts)
{
	int err;

	u->o = *opts;
	apply_defaults(&u->o);
	err = check_options(&u->o);
	err = err ?: copy_labels(u, opts);
	if (err)
		return err;
	u->http = upload_http_new(&u->o, &u->abort);
	if (!u->http)
		return -errno;
	upload_queue_init(&u->queue, u->o.queue_bytes);
	backoff_init(&u->backoff, u->o.retry_initial_ms, u->o.retry_max_ms, 0);
	if (opts->spool_dir)
		return open_spool(u, opts->spool_dir);
	return 0;
}

static void free_parts(struct uploader *u)
{
	size_t i;

	for (i = 0; i < u->nlabels; i++) {
		free((char *)u->labels[i].key);
		free((char *)u->labels[i].value);
	}
	free(u->labels);
	upload_http_free(u->http);
	upload_queue_release(&u->queue);
	spool_close(u->spool);
	free(u);
}

struct uploader *uploader_new(const struct upload_options *opts)
{
	struct uploader *u;
	int err;

	if (!opts) {
		errno = EINVAL;
		return NULL;
	}
	u = calloc(1, sizeof(*u));
	if (!u) {
		errno = ENOMEM;
		return NULL;
	}
	err = init_sync(u);
	if (err) {
		free(u);
		errno = -err;
		return NULL;
	}
	err = setup(u, opts);
	if (!err) {
		err = -pthread_create(&u->thread, NULL, upload_thread_main, u);
		if (err)
			log_err(err, "start the uploader thread");
	}
	if (err) {
		pthread_cond_destroy(&u->wake);
		pthread_mutex_destroy(&u->lock);
		free_parts(u);
		errno = -err;
		return NULL;
	}
	pthread_setname_np(u->thread, "spanprof-upload");
	log_info("pushing profiles to %s", upload_http_url(u->http));
	return u;
}

/* With a spool, writes it there first (so not even a killed agent loses it); without one,
 * queues it in memory, making room by dropping the oldest queued requests. Takes it over.
 * Called with the lock held. */
static void enqueue(struct uploader *u, struct upload_item *it)
{
	struct upload_item *old;
	size_t evicted = 0;
	int err;

	u->stats.profiles_submitted++;
	if (u->spool) {
		err = spool_put(u->spool, it->ts_ns, it->body, it->len, &evicted);
		u->stats.dropped_spool_full += evicted;
		if (evicted)
			upload_log_drop(u->stats.dropped_spool_full, "spool full, oldest deleted",
					NULL);
		if (err == -EFBIG || err == -ENOSPC) {
			u->stats.dropped_spool_full++;
			upload_log_drop(u->stats.dropped_spool_full, "spool full", it->service);
		} else if (err) {
			u->stats.dropped_spool_error++;
			upload_log_drop(u->stats.dropped_spool_error, "spool write failed",
					it->service);
		}
		upload_item_free(it);
		goto out_wake;
	}
	/* No spool: the newest data is worth more than the oldest. */
	while (upload_queue_push(&u->queue, it)) {
		old = upload_queue_pop(&u->queue);
		u->stats.dropped_queue_full++;
		upload_log_drop(u->stats.dropped_queue_full, "upload queue full",
				old ? old->service : it->service);
		if (!old) { /* does not fit even alone beside the request being sent */
			upload_item_free(it);
			break;
		}
		upload_item_free(old);
	}
out_wake:
	pthread_cond_signal(&u->wake);
}

struct submit_ctx {
	struct uploader *u;
	const char *service;
	int64_t start_ns;
	int err; /* first encode error, reported to the caller */
};

static void count_encode_drop(struct submit_ctx *c, int err)
{
	pthread_mutex_lock(&c->u->lock);
	c->u->stats.profiles_submitted++;
	c->u->stats.dropped_encode++;
	pthread_mutex_unlock(&c->u->lock);
	log_err(err, "encode a push request for service %s", c->service ? c->service : "?");
	if (!c->err)
		c->err = err;
}

/* One push request of the window: queue it. One part failing does not stop the others. */
static int submit_request(void *ctx, uint8_t *body, size_t len, int err)
{
	struct submit_ctx *c = ctx;
	struct uploader *u = c->u;
	struct upload_item *it;

	if (err) {
		count_encode_drop(c, err);
		return 0;
	}
	pthread_mutex_lock(&u->lock);
	it = upload_item_new(c->service, c->start_ns, u->next_seq++, body, len);
	if (it)
		enqueue(u, it);
	pthread_mutex_unlock(&u->lock);
	if (!it) {
		free(body);
		count_encode_drop(c, -ENOMEM);
	}
	return 0;
}

/* Sample labels the server lifts into this profile's series. */
static size_t lifted_labels(const struct uploader *u, const struct pprof_builder *b)
{
	const char *keys[SERIES_LABELS_MAX + 1];
	size_t n = pprof_builder_label_keys(b, keys, SERIES_LABELS_MAX + 1);

	return series_labels_lifted_keys(keys, n, u->o.trace_id_label);
}

/* How many static labels this profile's series can carry; the rest are left out and counted,
 * so that a profile is never refused for its label count. Called with the lock held. */
static size_t static_label_budget(struct uploader *u, const struct pprof_builder *b,
				  const char *service)
{
	size_t lifted = lifted_labels(u, b), room = series_labels_budget(lifted);

	if (u->nlabels <= room)
		return u->nlabels;
	u->stats.labels_dropped += u->nlabels - room;
	if (!u->labels_warned) {
		u->labels_warned = 1;
		log_warn(0,
			 "profiles of service %s carry %zu sample labels the server lifts into "
			 "the series: %zu of %zu --label labels fit its 30 per series; the last "
			 "%zu are left out (counted in spanprof_labels_dropped_total)",
			 service, lifted, room, u->nlabels, u->nlabels - room);
	}
	return room;
}

int uploader_submit(struct uploader *u, const char *service, struct pprof_builder *b)
{
	struct submit_ctx c = { .u = u, .service = service };
	struct window_push p = { .service = service, .labels = u ? u->labels : NULL };
	int64_t min_ts;
	int stopping, err;

	if (!u || !b)
		return -EINVAL;
	if (!pprof_builder_sample_count(b))
		return 0;
	c.start_ns = pprof_builder_time(b);
	p.omit_key = sample_labels_push_omit(u->o.trace_id_label);
	p.max_samples = u->o.max_profile_samples;
	p.max_bytes = u->o.max_profile_bytes;
	min_ts = (int64_t)clock_real_ns() - (int64_t)u->o.max_age_s * (int64_t)NS_PER_S;
	pthread_mutex_lock(&u->lock);
	stopping = u->stopping;
	p.nlabels = static_label_budget(u, b, service);
	if (!stopping && c.start_ns < min_ts) {
		u->stats.profiles_submitted++;
		u->stats.dropped_too_old++;
		upload_log_drop(u->stats.dropped_too_old, "older than the server accepts", service);
	}
	pthread_mutex_unlock(&u->lock);
	if (stopping)
		return -ESHUTDOWN;
	if (c.start_ns < min_ts)
		return 0;
	err = window_encode_push(b, &p, submit_request, &c);
	if (err) /* the builder could not be encoded at all (out of memory) */
		count_encode_drop(&c, err);
	return c.err;
}

/* After the thread is gone: what is still queued goes to the spool, or is lost and counted. */
static void spill_queue(struct uploader *u)
{
	struct upload_item *it;
	size_t evicted;
	int err;

	upload_queue_untake(&u->queue);
	while ((it = upload_queue_pop(&u->queue))) {
		err = u->spool ? spool_put(u->spool, it->ts_ns, it->body, it->len, &evicted) : -1;
		if (!u->spool)
			u->stats.dropped_shutdown++;
		else if (!err || err == -EFBIG || err == -ENOSPC)
			u->stats.dropped_spool_full += evicted + (err != 0);
		else
			u->stats.dropped_spool_error++;
		upload_item_free(it);
	}
	if (u->stats.dropped_shutdown)
		log_warn(0,
			 "%" PRIu64
			 " profiles were not delivered and are lost (no spool directory)",
			 u->stats.dropped_shutdown);
}

/* Lets the thread deliver until the flush deadline, then makes it give up. */
static void join_thread(struct uploader *u, unsigned int flush_ms)
{
	struct timespec ts;

	if (flush_ms) {
		ts = clock_after_ms(CLOCK_REALTIME, flush_ms);
		if (!pthread_timedjoin_np(u->thread, NULL, &ts))
			return;
	}
	atomic_store(&u->abort, 1);
	pthread_mutex_lock(&u->lock);
	pthread_cond_signal(&u->wake);
	pthread_mutex_unlock(&u->lock);
	pthread_join(u->thread, NULL);
}

void uploader_stop(struct uploader *u, unsigned int flush_ms)
{
	if (!u)
		return;
	pthread_mutex_lock(&u->lock);
	if (u->stopping) {
		pthread_mutex_unlock(&u->lock);
		return;
	}
	u->stopping = 1;
	u->flush_deadline_ns = (int64_t)clock_mono_ns() + (int64_t)flush_ms * (int64_t)NS_PER_MS;
	pthread_cond_signal(&u->wake);
	pthread_mutex_unlock(&u->lock);
	join_thread(u, flush_ms);
	pthread_mutex_lock(&u->lock);
	spill_queue(u);
	u->stopped = 1;
	pthread_mutex_unlock(&u->lock);
}

void uploader_free(struct uploader *u, unsigned int flush_ms)
{
	if (!u)
		return;
	uploader_stop(u, flush_ms);
	pthread_cond_destroy(&u->wake);
	pthread_mutex_destroy(&u->lock);
	free_parts(u);
}

void uploader_get_stats(struct uploader *u, struct upload_stats *out)
{
	if (!out)
		return;
	if (!u) {
		memset(out, 0, sizeof(*out));
		return;
	}
	pthread_mutex_lock(&u->lock);
	*out = u->stats;
	out->queue_bytes = u->queue.bytes;
	out->queue_items = u->queue.count + (u->queue.taken != NULL);
	out->spool_bytes = spool_bytes(u->spool);
	out->spool_items = spool_count(u->spool);
	pthread_mutex_unlock(&u->lock);
}
