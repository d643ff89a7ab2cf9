// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Publishes the app's OpenTelemetry resource as OTEP 4719 process context: a mapping named
 * OTEL_CTX (a memfd "OTEL_CTX", else anonymous memory, named with prctl PR_SET_VMA_ANON_NAME)
 * holding a 32-byte header and, right after it, a protobuf ProcessContext{resource{attributes:
 * string KeyValues}, attributes: the thread context's schema and key map (thread_record.c)}.
 * Part of libspanprof. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <time.h>

#include "hook_owner.h"
#include "spanprof.h"
#include "spanprof_process_ctx.h"
#include "thread_record.h"

#define SPANPROF_EXPORT __attribute__((visibility("default")))

#ifndef PR_SET_VMA
#define PR_SET_VMA 0x53564d41
#endif
#ifndef PR_SET_VMA_ANON_NAME
#define PR_SET_VMA_ANON_NAME 0
#endif

/* The one mapping of this process (OTEP 4719: a singleton) and its size; guarded by ctx_lock. */
static struct process_ctx_header *ctx_map;
static size_t ctx_map_size;
static int ctx_map_named; /* a memfd: found by its file name whether or not prctl works */
static pid_t ctx_pid; /* the process that mapped it: a forked child has no mapping */
static int ctx_lock;

#define TLS_SCHEMA_KEY "threadlocal.schema_version"
#define TLS_SCHEMA "tlsdesc_v1_dev"
#define TLS_KEY_MAP_KEY "threadlocal.attribute_key_map"
#define TLS_NKEYS (sizeof(thread_record_keys) / sizeof(thread_record_keys[0]))

static size_t varint_len(uint64_t v)
{
	size_t n = 1;

	while (v >= 0x80) {
		v >>= 7;
		n++;
	}
	return n;
}

static uint8_t *put_varint(uint8_t *p, uint64_t v)
{
	while (v >= 0x80) {
		*p++ = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	*p++ = (uint8_t)v;
	return p;
}

/* Tag (field number, wire type 2) and length, then the bytes when given. */
static uint8_t *put_bytes(uint8_t *p, unsigned field, const void *data, size_t len)
{
	*p++ = (uint8_t)(field << 3 | 2);
	p = put_varint(p, len);
	if (data)
		memcpy(p, data, len);
	return data ? p + len : p;
}

static size_t field_len(size_t len)
{
	return 1 + varint_len(len) + len;
}

/* Sizes of KeyValue{key 1, value 2: AnyValue{string_value 1}} i. */
static size_t kv_len(const char *key, const char *value)
{
	return field_len(strlen(key)) + field_len(field_len(strlen(value)));
}

/* Size of ArrayValue{values 1: AnyValue{string_value 1}...} of the record's key names. */
static size_t key_array_len(void)
{
	size_t n = 0;

	for (size_t i = 0; i < TLS_NKEYS; i++)
		n += field_len(field_len(strlen(thread_record_keys[i])));
	return n;
}

/* Size of KeyValue{key 1, value 2: AnyValue{array_value 5: ArrayValue}} of the key map. */
static size_t key_map_kv_len(void)
{
	return field_len(strlen(TLS_KEY_MAP_KEY)) + field_len(field_len(key_array_len()));
}

/* ProcessContext's own attributes (field 2): the thread context's schema and key map. */
static size_t thread_attrs_len(void)
{
	return field_len(kv_len(TLS_SCHEMA_KEY, TLS_SCHEMA)) + field_len(key_map_kv_len());
}

static uint8_t *put_string_kv(uint8_t *p, unsigned field, const char *key, const char *value)
{
	p = put_bytes(p, field, NULL, kv_len(key, value));
	p = put_bytes(p, 1, key, strlen(key));
	p = put_bytes(p, 2, NULL, field_len(strlen(value)));
	return put_bytes(p, 1, value, strlen(value));
}

static uint8_t *put_thread_attrs(uint8_t *p)
{
	size_t arr = key_array_len();

	p = put_string_kv(p, 2, TLS_SCHEMA_KEY, TLS_SCHEMA);
	p = put_bytes(p, 2, NULL, key_map_kv_len());
	p = put_bytes(p, 1, TLS_KEY_MAP_KEY, strlen(TLS_KEY_MAP_KEY));
	p = put_bytes(p, 2, NULL, field_len(arr));
	p = put_bytes(p, 5, NULL, arr);
	for (size_t i = 0; i < TLS_NKEYS; i++) {
		const char *k = thread_record_keys[i];

		p = put_bytes(p, 1, NULL, field_len(strlen(k)));
		p = put_bytes(p, 1, k, strlen(k));
	}
	return p;
}

/* Encodes ProcessContext{resource 1: Resource{attributes 1...}, attributes 2...} into out (cap
 * bytes) and returns its size; 0 when it does not fit. */
static size_t encode(const char *const *keys, const char *const *values, size_t n, uint8_t *out,
		     size_t cap)
{
	size_t res = 0, i, total;
	uint8_t *p = out;

	for (i = 0; i < n; i++)
		res += field_len(kv_len(keys[i], values[i]));
	total = field_len(res) + thread_attrs_len();
	if (total > cap)
		return 0;
	p = put_bytes(p, 1, NULL, res);
	for (i = 0; i < n; i++)
		p = put_string_kv(p, 1, keys[i], values[i]);
	p = put_thread_attrs(p);
	return (size_t)(p - out);
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* A fresh mapping of size bytes, not inherited by children (their resource is their own). As
 * OTEP 4719 says: a memfd named OTEL_CTX shows as "/memfd:OTEL_CTX" in maps even on kernels
 * without CONFIG_ANON_VMA_NAME (this VM's); anonymous memory is the fallback. *named says
 * whether readers can already find it without the prctl name. */
static struct process_ctx_header *new_mapping(size_t size, int *named)
{
	int fd = memfd_create("OTEL_CTX", MFD_CLOEXEC);
	void *m = MAP_FAILED;

	*named = 0;
	if (fd >= 0 && !ftruncate(fd, (off_t)size)) {
		m = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
		*named = m != MAP_FAILED;
	}
	if (fd >= 0)
		close(fd);
	if (m == MAP_FAILED)
		m = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		return NULL;
	madvise(m, size, MADV_DONTFORK);
	return m;
}

static int publish_locked(const char *const *keys, const char *const *values, size_t n)
{
	size_t page = 4096, need = PROCESS_CTX_HEADER_SIZE, size;
	struct process_ctx_header *h;
	uint8_t *payload;
	int named;

	if (ctx_map && ctx_pid != getpid()) {
		/* A forked child: the parent's mapping was not inherited (MADV_DONTFORK). */
		ctx_map = NULL;
		ctx_map_size = 0;
	}
	h = ctx_map;

	for (size_t i = 0; i < n; i++)
		need += field_len(kv_len(keys[i], values[i]));
	need += 8; /* ProcessContext's own tag and length */
	need += thread_attrs_len();
	if (need > PROCESS_CTX_HEADER_SIZE + PROCESS_CTX_PAYLOAD_MAX)
		return -EMSGSIZE;
	size = (need + page - 1) / page * page;
	if (!h || size > ctx_map_size) {
		h = new_mapping(size, &named);
		if (!h)
			return -errno;
		if (ctx_map)
			munmap(ctx_map, ctx_map_size);
		ctx_map = h;
		ctx_map_size = size;
		ctx_map_named = named;
		ctx_pid = getpid();
	}
	/* Update protocol: a zero timestamp tells readers to retry until it is set again. */
	__atomic_store_n(&h->published_at_ns, 0, __ATOMIC_SEQ_CST);
	payload = (uint8_t *)h + PROCESS_CTX_HEADER_SIZE;
	h->payload_size =
		(uint32_t)encode(keys, values, n, payload, size - PROCESS_CTX_HEADER_SIZE);
	h->payload = (uint64_t)(uintptr_t)payload;
	h->version = PROCESS_CTX_VERSION;
	memcpy(h->signature, PROCESS_CTX_SIGNATURE, sizeof(h->signature));
	__atomic_store_n(&h->published_at_ns, now_ns(), __ATOMIC_SEQ_CST);
	/* Always named (readers may watch for this prctl), though kernels without
	 * CONFIG_ANON_VMA_NAME refuse: then only a memfd mapping can be found. */
	if (prctl(PR_SET_VMA, PR_SET_VMA_ANON_NAME, (unsigned long)h, ctx_map_size, "OTEL_CTX") &&
	    !ctx_map_named)
		return -errno;
	return 0;
}

SPANPROF_EXPORT int spanprof_process_context_publish(const char *const *keys,
						     const char *const *values, size_t n)
{
	int err;

	/* Another copy of the hook owns the process's spans, and so its context. */
	if (hook_owner.publish)
		return hook_owner.publish(keys, values, n);
	if (n && (!keys || !values))
		return -EINVAL;
	for (size_t i = 0; i < n; i++)
		if (!keys[i] || !values[i])
			return -EINVAL;
	while (__atomic_exchange_n(&ctx_lock, 1, __ATOMIC_ACQUIRE))
		; /* publishing is rare: start-up, or a resource change */
	err = publish_locked(keys, values, n);
	__atomic_store_n(&ctx_lock, 0, __ATOMIC_RELEASE);
	return err;
}

/* For the owner note (span_hook.c). */
int hook_publish_entry(const char *const *keys, const char *const *values, size_t n)
	__attribute__((alias("spanprof_process_context_publish"), visibility("hidden")));

/* 1 when the process already has an OTEL_CTX mapping this library did not make: another
 * OpenTelemetry SDK published the process's context (OTEP 4719 allows one per process). */
static int other_context_published(void)
{
	static const char tag[] = "OTEL_CTX";
	const size_t keep = sizeof(tag) - 2; /* a match may straddle two reads */
	/* open/read, no stdio: the first span set may come from a signal handler. */
	int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
	char buf[1024];
	size_t have = 0;
	int found = 0;
	ssize_t n;

	if (fd < 0)
		return 0;
	while (!found && (n = read(fd, buf + have, sizeof(buf) - 1 - have)) > 0) {
		have += (size_t)n;
		buf[have] = '\0';
		found = memmem(buf, have, tag, sizeof(tag) - 1) != NULL;
		if (have > keep) {
			memmove(buf, buf + have - keep, keep);
			have = keep;
		}
	}
	close(fd);
	return found;
}

void process_ctx_after_fork(void)
{
	/* The child's one thread cannot be the holder another thread of the parent was. */
	__atomic_store_n(&ctx_lock, 0, __ATOMIC_RELAXED);
}

int process_ctx_announce(void)
{
	int err = 0;

	/* Never waits: the caller may be a signal handler that interrupted the lock's holder. */
	if (__atomic_exchange_n(&ctx_lock, 1, __ATOMIC_ACQUIRE))
		return -EBUSY;
	/* Every publish carries the key map: only a process with none yet publishes here. A
	 * context another SDK published is left alone: its resource names the service, and the
	 * agent reads this library's records through the slot the hook registers. */
	if ((!ctx_map || ctx_pid != getpid()) && !other_context_published())
		err = publish_locked(NULL, NULL, 0);
	__atomic_store_n(&ctx_lock, 0, __ATOMIC_RELEASE);
	return err;
}
