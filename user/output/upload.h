/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Pushes each window's profiles to Pyroscope (push.v1.PusherService/Push) from one uploader
 * thread, through a bounded memory queue and an optional bounded on-disk spool, with retries. */
#ifndef SPANPROF_UPLOAD_H
#define SPANPROF_UPLOAD_H

#include <stddef.h>
#include <stdint.h>

#include "config/config_types.h"
#include "profile/pprof.h"

/* The defaults a user can change are the configuration's; the rest are the uploader's own. */
#define UPLOAD_DEFAULT_CONNECT_TIMEOUT_MS (CONFIG_DEFAULT_CONNECT_TIMEOUT_S * 1000)
#define UPLOAD_DEFAULT_TOTAL_TIMEOUT_MS (CONFIG_DEFAULT_UPLOAD_TIMEOUT_S * 1000)
#define UPLOAD_DEFAULT_QUEUE_BYTES CONFIG_DEFAULT_QUEUE_BYTES
#define UPLOAD_DEFAULT_SPOOL_BYTES CONFIG_DEFAULT_SPOOL_BYTES
#define UPLOAD_DEFAULT_MAX_AGE_S 3600 /* the server refuses profiles older than an hour */
#define UPLOAD_DEFAULT_RETRY_INITIAL_MS 1000
#define UPLOAD_DEFAULT_RETRY_MAX_MS 60000
#define UPLOAD_DEFAULT_MAX_PROFILE_SAMPLES 16000 /* the server's per-profile limits */
#define UPLOAD_DEFAULT_MAX_PROFILE_BYTES (4u << 20)
#define UPLOAD_PUSH_PATH "/push.v1.PusherService/Push"

/* Every numeric field left 0 takes its UPLOAD_DEFAULT_*. Strings are copied by uploader_new(). */
struct upload_options {
	/* base URL, e.g. http://127.0.0.1:4040 ; push goes to <url>/push.v1.PusherService/Push */
	const char *server_url;
	const char *basic_user, *basic_password; /* NULL: none */
	const char *bearer_token; /* NULL: none; not together with basic_user */
	const char *tenant; /* X-Scope-OrgID, NULL: none */
	const char *ca_file, *client_cert, *client_key; /* NULL: system defaults */
	int tls_insecure; /* 1: do not verify the server's certificate */
	const char *const *headers; /* "Name: value" strings */
	size_t nheaders;
	const struct pprof_label *static_labels; /* series labels on every profile */
	size_t nstatic_labels;
	/* 1: samples keep their trace_id label; 0: it is left out of pushes (Pyroscope before
	 * v2.1.0 lifts it into a series label). */
	int trace_id_label;
	unsigned int connect_timeout_ms, total_timeout_ms; /* defaults 5000, 30000 */
	size_t queue_bytes; /* default 64 MiB; the memory queue is used only without a spool */
	const char *spool_dir; /* NULL: no spool; else every request is written here first */
	size_t spool_bytes; /* default 512 MiB */
	unsigned int max_age_s; /* default 3600 */
	unsigned int retry_initial_ms, retry_max_ms; /* defaults 1000, 60000 */
	size_t max_profile_samples, max_profile_bytes; /* defaults 16000, 4 MiB (uncompressed) */
};

/* Counters are totals since uploader_new(); "profiles" are pushed pprof profiles, one per
 * request (a window of one service may be split into several). Nothing is lost silently:
 *   profiles_submitted + spool_found ==
 *   profiles_sent + every dropped_* + queue_items + spool_items. */
struct upload_stats {
	uint64_t requests_ok; /* answered 2xx */
	uint64_t requests_retried; /* requests that needed at least one retry */
	uint64_t requests_failed_4xx; /* answered 4xx (not retried) */
	uint64_t profiles_sent, bytes_sent; /* bytes: request bodies as sent (gzipped) */
	uint64_t dropped_queue_full; /* memory queue full and no spool (oldest dropped) */
	uint64_t dropped_spool_full; /* spool full (oldest deleted) or request larger than it */
	uint64_t dropped_too_old; /* older than max_age_s before it could be sent */
	uint64_t dropped_rejected; /* refused by the server for good (4xx and other non-2xx) */
	uint64_t dropped_encode; /* could not be encoded (per window, or per profile) */
	uint64_t retries; /* failed attempts that were retried */
	uint64_t queue_bytes, spool_bytes; /* now; never above the configured bounds */
	/* Added beyond the lead's list: */
	uint64_t profiles_submitted; /* profiles handed over (one per window dropped unencoded) */
	uint64_t spool_found; /* requests an earlier run left in the spool */
	uint64_t dropped_spool_error; /* spool file could not be written or read back */
	uint64_t dropped_shutdown; /* still undelivered when stopped without a spool */
	uint64_t queue_items, spool_items; /* now, the one being sent included */
	/* Static labels left out of a push so that, with the labels the server lifts from the
	 * samples, its series stays within SERIES_LABELS_MAX (counted per label per push). */
	uint64_t labels_dropped;
};

struct uploader;

/* Checks and copies opts, opens the spool (indexing what an earlier run left there) and starts
 * the uploader thread. Returns NULL with errno set (EINVAL for bad options, EBUSY for a spool in
 * use, ENOMEM, ...); the reason is logged, naming the option. Secrets are never logged.
 * curl_global_init() must have run once before (main() does it, before any thread). */
struct uploader *uploader_new(const struct upload_options *opts);

/* Encodes one service's window (window_encode_push(): its time and duration are the builder's,
 * fixed when the window closed), split per the profile limits, into push requests. With a spool
 * each is written there first, so not even a killed agent loses it; without one it is queued in
 * memory and, when the queue is full, the oldest queued request is dropped. Never waits for the
 * network (it may write to the spool). An empty builder sends nothing. The builder stays the
 * caller's and is not changed.
 * Returns 0, or -errno when a profile could not be encoded (counted in dropped_encode) or the
 * uploader is stopped (-ESHUTDOWN). Thread-safe. */
int uploader_submit(struct uploader *u, const char *service, struct pprof_builder *b);

/* Stops the thread: tries to deliver what is queued or spooled for up to flush_ms; what is left
 * stays in the spool (if any), the rest is counted as lost. Stats stay readable afterwards.
 * Idempotent. */
void uploader_stop(struct uploader *u, unsigned int flush_ms);

/* uploader_stop(u, flush_ms), then frees everything. NULL-safe. */
void uploader_free(struct uploader *u, unsigned int flush_ms);

void uploader_get_stats(struct uploader *u, struct upload_stats *out); /* thread-safe */

#endif /* SPANPROF_UPLOAD_H */
