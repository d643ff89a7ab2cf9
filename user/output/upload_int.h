/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Private to upload.c (API, options, enqueueing) and upload_send.c (the uploader thread): the
 * uploader's state and which lock guards what. */
#ifndef SPANPROF_UPLOAD_INT_H
#define SPANPROF_UPLOAD_INT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "output/spool.h"
#include "output/upload.h"
#include "output/upload_http.h"
#include "output/upload_queue.h"
#include "util/backoff.h"

/* A refused push is logged once per status per UPLOAD_REJECT_LOG_WINDOW_NS; the others are
 * counted and summed up in the next line for that status. */
#define UPLOAD_REJECT_LOG_WINDOW_NS (60 * 1000000000LL)
#define UPLOAD_REJECT_LOG_SLOTS 8

struct reject_log {
	long status; /* 0: slot unused */
	int64_t logged_ns; /* monotonic: when this status was last logged */
	uint64_t suppressed; /* refusals not logged since */
};

struct uploader {
	/* Set by uploader_new(), read-only afterwards. */
	struct upload_options o; /* numbers with defaults applied; its pointers are not used */
	struct pprof_label *labels; /* copies of the static labels */
	size_t nlabels;
	struct upload_http *http; /* used by the uploader thread only */
	pthread_t thread;
	atomic_int abort; /* makes a transfer in progress give up (uploader_stop) */

	pthread_mutex_t lock; /* guards everything below */
	pthread_cond_t wake; /* work queued, or stop requested; CLOCK_MONOTONIC */
	struct upload_queue queue;
	struct spool *spool; /* NULL: no spool */
	struct upload_stats stats;
	uint64_t next_seq;
	int stopping, stopped;
	int64_t flush_deadline_ns; /* monotonic; meaningful once stopping */
	/* Uploader thread's retry state. */
	struct backoff backoff;
	int64_t retry_at_ns; /* monotonic; no sending before this */
	int failing; /* the last attempt failed and was retried */
	struct spool_entry last_failed_spool; /* to count requests_retried once per request */
	int has_last_failed_spool;
	int labels_warned; /* static labels were left out once: warned */
	struct reject_log rejects[UPLOAD_REJECT_LOG_SLOTS];
};

/* Thread body (upload_send.c). */
void *upload_thread_main(void *arg);

/* Logs the first drop of a kind and then each time its count doubles, so a long outage does
 * not flood the log but the totals still show. service may be NULL (not known). Call with the
 * lock held, after counting. */
void upload_log_drop(uint64_t count, const char *reason, const char *service);

#endif /* SPANPROF_UPLOAD_INT_H */
