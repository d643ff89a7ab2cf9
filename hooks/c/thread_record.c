// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Each thread's span as an OpenTelemetry thread context record: the exported TLS pointer
 * otel_thread_ctx_v1 points at the thread's record {trace_id, span_id, valid, trace_flags,
 * attrs_data_size, attributes}, rewritten at every spanprof_span_set(). The local root span id
 * and the root's name travel as attributes (keys in thread_record.h), announced in the process
 * context. Part of libspanprof. */
#include <pthread.h>
#include <stdint.h>
#include <string.h>

#include "thread_record.h"

#define SPANPROF_EXPORT __attribute__((visibility("default")))

#define ROOT_HEX 16
/* Attributes: the root id {key, len, 16 hex digits}, then the name {key, len, <= 255 bytes}. */
#define RECORD_ATTRS_MAX (2 + ROOT_HEX + 2 + (SPANPROF_SPAN_NAME_MAX - 1))

/* The record as OTEP 4947 lays it out: packed, 2-byte aligned, 303 bytes at most. */
struct thread_record {
	uint8_t trace_id[16];
	uint8_t span_id[8];
	uint8_t valid;
	uint8_t trace_flags;
	uint16_t attrs_data_size;
	uint8_t attrs[RECORD_ATTRS_MAX];
} __attribute__((packed, aligned(8)));

_Static_assert(__builtin_offsetof(struct thread_record, valid) == 24, "OTEP record layout");
_Static_assert(__builtin_offsetof(struct thread_record, attrs) == 28, "OTEP record layout");
_Static_assert(sizeof(struct thread_record) <= 640, "OTEP record size");

const char *const thread_record_keys[2] = {
	[THREAD_RECORD_KEY_ROOT] = "spanprof.local_root_span_id",
	[THREAD_RECORD_KEY_NAME] = "spanprof.span_name",
};

/* Readers find it in .dynsym; NULL until the thread first sets a span. */
SPANPROF_EXPORT __thread struct thread_record *otel_thread_ctx_v1;

static __thread struct thread_record record;

/* Set once the process context announces the key map (reset in a forked child, which does not
 * inherit the mapping). */
static int announced;

#define barrier() __asm__ __volatile__("" ::: "memory")

static void hex8(uint8_t *out, const uint8_t id[8])
{
	static const char digits[] = "0123456789abcdef";

	for (int i = 0; i < 8; i++) {
		out[2 * i] = (uint8_t)digits[id[i] >> 4];
		out[2 * i + 1] = (uint8_t)digits[id[i] & 15];
	}
}

static int zero8(const uint8_t id[8])
{
	uint64_t v;

	memcpy(&v, id, sizeof(v));
	return !v;
}

static void child_after_fork(void)
{
	announced = 0;
}

__attribute__((constructor)) static void thread_record_init(void)
{
	/* The process context mapping is not inherited: a child announces its own. */
	pthread_atfork(NULL, NULL, child_after_fork);
}

static __attribute__((noinline, cold)) void announce(void)
{
	if (!process_ctx_announce())
		__atomic_store_n(&announced, 1, __ATOMIC_RELAXED);
}

void thread_record_set(const struct spanprof_span *span)
{
	struct thread_record *r = &record;
	uint8_t *a = r->attrs;
	size_t len;

	if (__builtin_expect(!__atomic_load_n(&announced, __ATOMIC_RELAXED), 0))
		announce();
	/* Readers only read while this thread is interrupted or switched out: compiler barriers
	 * order the stores as seen from this thread. */
	r->valid = 0;
	barrier();
	if (!span) {
		/* Left as invalid: the thread is in no span. */
		return;
	}
	memcpy(r->trace_id, span->trace_id, sizeof(r->trace_id));
	memcpy(r->span_id, span->span_id, sizeof(r->span_id));
	r->trace_flags = 1;
	if (!zero8(span->root_span_id)) {
		a[0] = THREAD_RECORD_KEY_ROOT;
		a[1] = ROOT_HEX;
		hex8(a + 2, span->root_span_id);
		a += 2 + ROOT_HEX;
	}
	len = strnlen(span->name, SPANPROF_SPAN_NAME_MAX - 1);
	if (len) {
		a[0] = THREAD_RECORD_KEY_NAME;
		a[1] = (uint8_t)len;
		memcpy(a + 2, span->name, len);
		a += 2 + len;
	}
	r->attrs_data_size = (uint16_t)(a - r->attrs);
	if (__builtin_expect(!otel_thread_ctx_v1, 0))
		otel_thread_ctx_v1 = r;
	barrier();
	r->valid = 1;
}
