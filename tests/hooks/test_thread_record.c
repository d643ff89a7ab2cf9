// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The hook library as an OpenTelemetry thread context writer (hooks/c/thread_record.c), seen the
 * way a third-party reader sees it: libspanprof.so is dlopen'ed, spanprof_span_set() is called
 * with no agent, and the record is decoded with the OTEP's layout (offsets written here, not
 * taken from the hook's code); the agent's own reader (discover/thread_ctx.c) must find the
 * TLS slot of this very thread and the keys the hook announces in the process context. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "discover/proc_maps.h"
#include "discover/process_ctx.h"
#include "discover/thread_ctx.h"
#include "spanprof.h"

typedef void (*span_set_fn)(const struct spanprof_span *);
typedef int (*publish_fn)(const char *const *, const char *const *, size_t);

static void *lib;
static span_set_fn span_set;
static publish_fn publish;

/* The OTEP's record: offsets of valid, trace flags, the attributes' size and the attributes. */
#define OTEP_VALID 24
#define OTEP_ATTRS_SIZE 26
#define OTEP_ATTRS 28

static int setup(void **state)
{
	const char *path = getenv("SPANPROF_LIBRARY");

	(void)state;
	lib = dlopen(path ? path : "build/libspanprof.so", RTLD_NOW);
	if (!lib)
		fprintf(stderr, "dlopen: %s\n", dlerror());
	assert_non_null(lib);
	span_set = (span_set_fn)(uintptr_t)dlsym(lib, "spanprof_span_set");
	publish = (publish_fn)(uintptr_t)dlsym(lib, "spanprof_process_context_publish");
	assert_non_null(span_set);
	assert_non_null(publish);
	return 0;
}

/* This thread's otel_thread_ctx_v1 (dlsym resolves a TLS symbol for the calling thread). */
static const uint8_t *record(void)
{
	const uint8_t *const *slot = dlsym(lib, "otel_thread_ctx_v1");

	assert_non_null(slot);
	return *slot;
}

static void fill(struct spanprof_span *s, uint8_t span, uint8_t root, const char *name)
{
	memset(s, 0, sizeof(*s));
	s->abi_version = SPANPROF_SPAN_ABI_VERSION;
	for (int i = 0; i < 16; i++)
		s->trace_id[i] = (uint8_t)(0xa0 + i);
	s->span_id[7] = span;
	s->root_span_id[7] = root;
	snprintf(s->name, sizeof(s->name), "%s", name);
}

/* The attribute with key index key: its value and length, or NULL. */
static const uint8_t *attr(const uint8_t *rec, unsigned key, unsigned *len)
{
	uint16_t size;
	unsigned pos = 0;

	memcpy(&size, rec + OTEP_ATTRS_SIZE, 2);
	while (pos + 2 <= size) {
		const uint8_t *e = rec + OTEP_ATTRS + pos;

		assert_true(pos + 2 + e[1] <= size);
		if (e[0] == key) {
			*len = e[1];
			return e + 2;
		}
		pos += 2 + e[1];
	}
	return NULL;
}

static void test_record_carries_the_span_root_and_name(void **state)
{
	struct spanprof_span s;
	const uint8_t *rec, *v;
	unsigned len = 0;

	(void)state;
	fill(&s, 0x22, 0x11, "GET /checkout");
	span_set(&s);
	rec = record();
	assert_non_null(rec);
	assert_memory_equal(rec, s.trace_id, 16);
	assert_memory_equal(rec + 16, s.span_id, 8);
	assert_int_equal(rec[OTEP_VALID], 1);
	v = attr(rec, 0, &len);
	assert_non_null(v);
	assert_int_equal(len, 16);
	assert_memory_equal(v, "0000000000000011", 16);
	v = attr(rec, 1, &len);
	assert_non_null(v);
	assert_int_equal(len, strlen("GET /checkout"));
	assert_memory_equal(v, "GET /checkout", len);
	/* Its own local root: no root attribute, the reader labels the record's span. */
	fill(&s, 0x33, 0, "root");
	span_set(&s);
	assert_ptr_equal(record(), rec);
	assert_null(attr(rec, 0, &len));
	assert_non_null(attr(rec, 1, &len));
	/* Leaving the span: the record stays, invalid. */
	span_set(NULL);
	assert_int_equal(record()[OTEP_VALID], 0);
}

static void *other_thread(void *arg)
{
	struct spanprof_span s;

	(void)arg;
	if (record())
		return (void *)1; /* a thread that never set a span has no record */
	fill(&s, 0x44, 0, "worker");
	span_set(&s);
	return (void *)record();
}

static void test_each_thread_has_its_own_record(void **state)
{
	struct spanprof_span s;
	pthread_t t;
	void *theirs;

	(void)state;
	fill(&s, 0x55, 0, "main");
	span_set(&s);
	assert_int_equal(pthread_create(&t, NULL, other_thread, NULL), 0);
	assert_int_equal(pthread_join(t, &theirs), 0);
	assert_true(theirs != NULL && theirs != (void *)1);
	assert_ptr_not_equal(theirs, record());
	assert_int_equal(record()[16 + 7], 0x55);
}

/* A name of 255 bytes fills the record to its end: still inside the OTEP's 640 bytes. */
static void test_longest_name_fits(void **state)
{
	struct spanprof_span s;
	unsigned len = 0;
	uint16_t size;

	(void)state;
	fill(&s, 0x66, 0x65, "");
	memset(s.name, 'n', SPANPROF_SPAN_NAME_MAX); /* no NUL: cut at 255 bytes */
	span_set(&s);
	assert_non_null(attr(record(), 1, &len));
	assert_int_equal(len, SPANPROF_SPAN_NAME_MAX - 1);
	memcpy(&size, record() + OTEP_ATTRS_SIZE, 2);
	assert_true(OTEP_ATTRS + size <= 640);
}

#if defined(__x86_64__)
static uint64_t thread_pointer(void)
{
	uint64_t tp;

	__asm__("mov %%fs:0, %0" : "=r"(tp));
	return tp;
}

/* The agent's reader finds the hook's record for this thread, where BPF would read it, and the
 * key map the hook announced, without the app publishing anything itself. */
static void test_agent_reader_finds_the_record(void **state)
{
	const struct thread_ctx_labels labels = { .n = 0 };
	struct thread_ctx_files *files = thread_ctx_files_new(64);
	const char *why = NULL;
	struct spanprof_span s;
	struct proc_maps maps;
	struct tctx_proc tp;
	uint64_t slot, dtv, block;
	int err;

	(void)state;
	assert_non_null(files);
	fill(&s, 0x77, 0x70, "found");
	span_set(&s);
	assert_int_equal(proc_maps_read(getpid(), &maps), 0);
	err = thread_ctx_find(files, "/proc", getpid(), &maps, &labels, UINT64_MAX, &tp, &why);
	if (err)
		fprintf(stderr, "thread_ctx_find: %d (%s)\n", err, why ? why : "");
	assert_int_equal(err, 0);
	assert_int_equal(tp.root_key, 0);
	assert_int_equal(tp.name_key, 1);
	if (tp.tls == SPANPROF_TCTX_TLS_STATIC) {
		slot = thread_pointer() + (uint64_t)tp.tp_offset;
	} else {
		assert_int_equal(tp.tls, SPANPROF_TCTX_TLS_DTV);
		memcpy(&dtv, (void *)(uintptr_t)(thread_pointer() + tp.dtv_off), 8);
		memcpy(&block, (void *)(uintptr_t)(dtv + tp.dtv_entry * tp.modid), 8);
		slot = block + tp.offset;
	}
	assert_ptr_equal((void *)(uintptr_t)slot, dlsym(lib, "otel_thread_ctx_v1"));
	proc_maps_release(&maps);
	thread_ctx_files_free(files);
}
#endif

/* The app's own resource and the hook's key map share the process context. */
static void test_published_resource_keeps_the_key_map(void **state)
{
	const char *keys[] = { "service.name" }, *values[] = { "record-test" };
	struct process_ctx ctx;

	(void)state;
	assert_int_equal(publish(keys, values, 1), 0);
	assert_int_equal(process_ctx_read("/proc", getpid(), &ctx), 0);
	assert_string_equal(ctx.service_name, "record-test");
	assert_string_equal(ctx.tls_schema, THREAD_CTX_SCHEMA_DEV);
	assert_int_equal(ctx.nkeys, 2);
	assert_string_equal(ctx.key_names + ctx.key_at[0], THREAD_CTX_ROOT_KEY);
	assert_string_equal(ctx.key_names + ctx.key_at[1], THREAD_CTX_NAME_KEY);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_record_carries_the_span_root_and_name),
		cmocka_unit_test(test_each_thread_has_its_own_record),
		cmocka_unit_test(test_longest_name_fits),
#if defined(__x86_64__)
		cmocka_unit_test(test_agent_reader_finds_the_record),
#endif
		cmocka_unit_test(test_published_resource_keeps_the_key_map),
	};

	return cmocka_run_group_tests_name("thread_record", tests, setup, NULL);
}
