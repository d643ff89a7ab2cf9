/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The hook library's OpenTelemetry thread context record (docs/thread-context.md, "spanprof's
 * hook as a writer"): each thread's span, as any thread-context reader expects it. Internal to
 * libspanprof. */
#ifndef SPANPROF_THREAD_RECORD_H
#define SPANPROF_THREAD_RECORD_H

#include "spanprof.h"

/* Key indexes of the attributes the hook writes; their names (the key map) are announced in
 * the process context in this order. */
#define THREAD_RECORD_KEY_ROOT 0 /* "spanprof.local_root_span_id": 16 lower-case hex digits */
#define THREAD_RECORD_KEY_NAME 1 /* "spanprof.span_name": the local root span's name */

/* The key map's names, indexed by the THREAD_RECORD_KEY_* values. */
extern const char *const thread_record_keys[2] __attribute__((visibility("hidden")));

/* Publishes span (NULL: none) in the calling thread's record, under the valid protocol. With
 * sem (the hook's semaphore) not 0, an agent is attached: the change is queued in the thread's
 * ring, and the return value, when not NULL, is what the caller must pass to the uprobe site
 * (hook ABI version 3: the area's registration, a new root name, or a ring to read). A call
 * made while another runs on the same thread (a signal handler's) is dropped and counted in the
 * area's nested field. */
const void *thread_record_set(const struct spanprof_span *span, unsigned short sem)
	__attribute__((visibility("hidden")));

/* Whether the ring is stamped with the time stamp counter where it is usable (the default, set
 * at load) or, with on 0, always with clock_gettime(CLOCK_MONOTONIC): for tests that move the
 * clock under the hook. Not to be called while another thread sets spans. */
void thread_record_use_tsc(int on) __attribute__((visibility("hidden")));

/* process_ctx.c: publishes the process context with an empty resource unless the app already
 * published one, so readers learn the record's schema and key map. Never waits and allocates
 * nothing (it may run in a signal handler). Returns 0 or -errno (-EBUSY: another call holds the
 * process context; try again later). */
int process_ctx_announce(void) __attribute__((visibility("hidden")));

/* process_ctx.c: in a forked child, releases the process context's lock, which a thread of the
 * parent may have held at the fork. */
void process_ctx_after_fork(void) __attribute__((visibility("hidden")));

#endif /* SPANPROF_THREAD_RECORD_H */
