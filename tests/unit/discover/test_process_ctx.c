// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Unit tests for process_ctx: an OTEP 4719 context in a fake proc root (maps naming the mapping,
 * a sparse "mem" file holding header and payload at its address), payloads encoded by
 * protobuf-c from proto/process_context.proto, and hostile headers and payloads. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "proto/process_context.pb-c.h"
#include "discover/process_ctx.h"
#include "text_file.h"
#include "tmpdir.h"

#define PID 4242
#define MAP_AT 0x10000ull /* where the fake mapping starts; the payload follows the header */
#define PAYLOAD_AT (MAP_AT + PROCESS_CTX_HEADER_SIZE)

struct header {
	char signature[8];
	uint32_t version, payload_size;
	uint64_t published_at_ns, payload;
};

static void write_maps(const char *root, const char *name)
{
	char text[512];
	int n = snprintf(text, sizeof(text),
			 "00400000-00401000 r-xp 00000000 08:01 1234   /usr/bin/app\n"
			 "%08llx-%08llx rw-p 00000000 00:00 0   %s\n",
			 MAP_AT, MAP_AT + 0x1000, name);

	proc_file_write_at(root, PID, "maps", text, (size_t)n, 0);
}

/* A packed ProcessContext with string attributes (k, v pairs until NULL), plus an int and an
 * extra attribute the reader must skip. Returns its length in buf. */
static size_t pack(uint8_t *buf, const char *const *kv)
{
	Otelctx__KeyValue kvs[8], *kvp[8], extra = OTELCTX__KEY_VALUE__INIT, *extrap = &extra;
	Otelctx__AnyValue vals[8], intval = OTELCTX__ANY_VALUE__INIT;
	Otelctx__Resource res = OTELCTX__RESOURCE__INIT;
	Otelctx__ProcessContext pc = OTELCTX__PROCESS_CONTEXT__INIT;
	size_t n = 0;

	intval.value_case = OTELCTX__ANY_VALUE__VALUE_INT_VALUE;
	intval.int_value = 7;
	otelctx__key_value__init(&kvs[n]);
	kvs[n].key = "process.pid";
	kvs[n].value = &intval;
	kvp[n] = &kvs[n];
	n++;
	for (; *kv && n < 8; kv += 2, n++) {
		otelctx__key_value__init(&kvs[n]);
		otelctx__any_value__init(&vals[n]);
		vals[n].value_case = OTELCTX__ANY_VALUE__VALUE_STRING_VALUE;
		vals[n].string_value = (char *)kv[1];
		kvs[n].key = (char *)kv[0];
		kvs[n].value = &vals[n];
		kvp[n] = &kvs[n];
	}
	res.n_attributes = n;
	res.attributes = kvp;
	pc.resource = &res;
	extra.key = "threadlocal.schema_version";
	extra.value = &vals[1];
	pc.n_extra_attributes = 1;
	pc.extra_attributes = &extrap;
	return otelctx__process_context__pack(&pc, buf);
}

static void publish(const char *root, const void *payload, size_t len, struct header h)
{
	proc_file_write_at(root, PID, "mem", &h, sizeof(h), MAP_AT);
	proc_file_write_at(root, PID, "mem", payload, len, h.payload);
}

static struct header good_header(size_t len)
{
	struct header h = { .version = 2,
			    .payload_size = (uint32_t)len,
			    .published_at_ns = 1763800000000000000ull,
			    .payload = PAYLOAD_AT };

	memcpy(h.signature, "OTEL_CTX", 8);
	return h;
}

static int setup(void **state)
{
	char *root = tmpdir_new("procctx"), dir[4096];

	assert_non_null(root);
	snprintf(dir, sizeof(dir), "%s/%d", root, PID);
	assert_int_equal(mkdir(dir, 0700), 0);
	*state = root;
	return 0;
}

static void test_process_ctx_reads_service_name_and_namespace(void **state)
{
	static const char *const kv[] = { "service.namespace",
					  "shop",
					  "service.name",
					  "checkout",
					  "service.instance.id",
					  "abc",
					  NULL };
	struct process_ctx ctx;
	uint8_t buf[1024];
	size_t len = pack(buf, kv);

	write_maps(*state, "[anon:OTEL_CTX]");
	publish(*state, buf, len, good_header(len));
	assert_int_equal(process_ctx_read(*state, PID, &ctx), 0);
	assert_string_equal(ctx.service_name, "checkout");
	assert_string_equal(ctx.service_namespace, "shop");
}

static void test_process_ctx_finds_every_mapping_name(void **state)
{
	static const char *const names[] = { "[anon_shmem:OTEL_CTX]", "/memfd:OTEL_CTX (deleted)" };
	static const char *const kv[] = { "service.name", "memfd-svc", NULL };
	struct process_ctx ctx;
	uint8_t buf[256];
	size_t len = pack(buf, kv);

	publish(*state, buf, len, good_header(len));
	for (size_t i = 0; i < 2; i++) {
		write_maps(*state, names[i]);
		assert_int_equal(process_ctx_read(*state, PID, &ctx), 0);
		assert_string_equal(ctx.service_name, "memfd-svc");
	}
	write_maps(*state, "[anon:OTHER]");
	assert_int_equal(process_ctx_read(*state, PID, &ctx), -ENOENT);
}

static void test_process_ctx_rejects_hostile_headers(void **state)
{
	static const char *const kv[] = { "service.name", "x", NULL };
	struct process_ctx ctx;
	struct header h;
	uint8_t buf[256];
	size_t len = pack(buf, kv);

	write_maps(*state, "[anon:OTEL_CTX]");
	h = good_header(len);
	memcpy(h.signature, "OTEL_CTY", 8);
	publish(*state, buf, len, h);
	assert_int_equal(process_ctx_read(*state, PID, &ctx), -EBADMSG);
	h = good_header(len);
	h.version = 3;
	publish(*state, buf, len, h);
	assert_int_equal(process_ctx_read(*state, PID, &ctx), -EBADMSG);
	h = good_header(len);
	h.payload_size = PROCESS_CTX_PAYLOAD_MAX + 1;
	publish(*state, buf, len, h);
	assert_int_equal(process_ctx_read(*state, PID, &ctx), -EMSGSIZE);
	h = good_header(len);
	h.payload = UINT64_MAX - 4; /* wraps around */
	proc_file_write_at(*state, PID, "mem", &h, sizeof(h), MAP_AT);
	assert_int_equal(process_ctx_read(*state, PID, &ctx), -EBADMSG);
	h = good_header(len);
	h.payload = 0x7fff0000; /* past the end of "memory" */
	proc_file_write_at(*state, PID, "mem", &h, sizeof(h), MAP_AT);
	assert_int_equal(process_ctx_read(*state, PID, &ctx), -EBADMSG);
	h = good_header(len);
	h.published_at_ns = 0; /* an update that never finishes */
	publish(*state, buf, len, h);
	assert_int_equal(process_ctx_read(*state, PID, &ctx), -EAGAIN);
}

static void test_process_ctx_does_not_follow_a_symlinked_mem(void **state)
{
	char target[4096], link[4096];
	struct process_ctx ctx;

	write_maps(*state, "[anon:OTEL_CTX]");
	snprintf(target, sizeof(target), "%s/%d/maps", (char *)*state, PID);
	snprintf(link, sizeof(link), "%s/%d/mem", (char *)*state, PID);
	unlink(link);
	assert_int_equal(symlink(target, link), 0);
	assert_int_equal(process_ctx_read(*state, PID, &ctx), -ELOOP);
}

static void test_process_ctx_decode_survives_hostile_payloads(void **state)
{
	static const char *const kv[] = { "service.name", "ok", NULL };
	uint8_t buf[256], deep[4096];
	struct process_ctx ctx;
	size_t len = pack(buf, kv), i;

	(void)state;
	for (i = 0; i < len; i++) /* every truncation fails cleanly or finds nothing */
		assert_true(process_ctx_decode(buf, i, &ctx) == 0 ||
			    process_ctx_decode(buf, i, &ctx) == -EBADMSG);
	/* 2000 nested length-delimited fields: no recursion, so no stack to exhaust. */
	for (i = 0; i + 2 <= sizeof(deep); i += 2) {
		deep[i] = 0x0a;
		deep[i + 1] = 0x7f;
	}
	assert_int_equal(process_ctx_decode(deep, sizeof(deep), &ctx), -EBADMSG);
	deep[0] = 0x0b; /* wire type 3 (group) */
	assert_int_equal(process_ctx_decode(deep, 2, &ctx), -EBADMSG);
	/* a varint that never ends */
	memset(deep, 0xff, 16);
	assert_int_equal(process_ctx_decode(deep, 16, &ctx), -EBADMSG);
}

static void test_process_ctx_repairs_utf8_and_cuts_long_names(void **state)
{
	static char long_name[LABELS_SERVICE_MAX + 100];
	const char *kv[] = { "service.name", "caf\xff", "service.namespace", long_name, NULL };
	struct process_ctx ctx;
	uint8_t buf[LABELS_SERVICE_MAX + 512];
	size_t len;

	(void)state;
	memset(long_name, 'n', sizeof(long_name) - 1);
	len = pack(buf, kv);
	assert_int_equal(process_ctx_decode(buf, len, &ctx), 0);
	assert_string_equal(ctx.service_name, "caf?");
	assert_int_equal(strlen(ctx.service_namespace), LABELS_SERVICE_MAX - 1);
}

/* A process publishing an escape sequence and a newline as its service: none reaches the labels
 * built from it. */
static void test_process_ctx_cleans_control_characters(void **state)
{
	const char *kv[] = { "service.name", "pay\x1b[2J\nments", "service.namespace",
			     "team\r\x7f\xc2\x9b", NULL };
	struct process_ctx ctx;
	uint8_t buf[512];
	size_t len;

	(void)state;
	len = pack(buf, kv);
	assert_int_equal(process_ctx_decode(buf, len, &ctx), 0);
	assert_string_equal(ctx.service_name, "pay?[2J?ments");
	assert_string_equal(ctx.service_namespace, "team???");
}

/* A ProcessContext whose own attributes announce thread context: the schema and a key map of
 * `nkeys` strings, entry `hole` (if < nkeys) an int rather than a string. */
static size_t pack_keys(uint8_t *buf, const char *schema, const char *const *keys, size_t nkeys,
			size_t hole)
{
	Otelctx__AnyValue items[300], *itemp[300], schema_v = OTELCTX__ANY_VALUE__INIT,
						   map_v = OTELCTX__ANY_VALUE__INIT;
	Otelctx__KeyValue schema_kv = OTELCTX__KEY_VALUE__INIT, map_kv = OTELCTX__KEY_VALUE__INIT,
			  *attrs[2] = { &schema_kv, &map_kv };
	Otelctx__ArrayValue arr = OTELCTX__ARRAY_VALUE__INIT;
	Otelctx__ProcessContext pc = OTELCTX__PROCESS_CONTEXT__INIT;
	size_t i;

	for (i = 0; i < nkeys; i++) {
		otelctx__any_value__init(&items[i]);
		if (i == hole) {
			items[i].value_case = OTELCTX__ANY_VALUE__VALUE_INT_VALUE;
			items[i].int_value = 3;
		} else {
			items[i].value_case = OTELCTX__ANY_VALUE__VALUE_STRING_VALUE;
			items[i].string_value = (char *)keys[i];
		}
		itemp[i] = &items[i];
	}
	arr.n_values = nkeys;
	arr.values = itemp;
	schema_v.value_case = OTELCTX__ANY_VALUE__VALUE_STRING_VALUE;
	schema_v.string_value = (char *)schema;
	map_v.value_case = OTELCTX__ANY_VALUE__VALUE_ARRAY_VALUE;
	map_v.array_value = &arr;
	schema_kv.key = "threadlocal.schema_version";
	schema_kv.value = &schema_v;
	map_kv.key = "threadlocal.attribute_key_map";
	map_kv.value = &map_v;
	pc.n_extra_attributes = 2;
	pc.extra_attributes = attrs;
	return otelctx__process_context__pack(&pc, buf);
}

static void test_process_ctx_decode_reads_thread_context_keys(void **state)
{
	const char *keys[] = { "datadog.local_root_span_id", "http.route", "x", "thread.name" };
	static char many[300][8];
	const char *manyp[300];
	struct process_ctx ctx;
	uint8_t buf[8192];
	size_t len, i;

	(void)state;
	len = pack_keys(buf, "tlsdesc_v1_dev", keys, 4, 2);
	assert_int_equal(process_ctx_decode(buf, len, &ctx), 0);
	assert_string_equal(ctx.tls_schema, "tlsdesc_v1_dev");
	assert_int_equal(ctx.nkeys, 4);
	assert_string_equal(ctx.key_names + ctx.key_at[0], "datadog.local_root_span_id");
	assert_string_equal(ctx.key_names + ctx.key_at[1], "http.route");
	/* A non-string entry keeps its place, so the indexes after it stay right. */
	assert_string_equal(ctx.key_names + ctx.key_at[2], "");
	assert_string_equal(ctx.key_names + ctx.key_at[3], "thread.name");
	/* More keys than a one-byte index can name: the first 256 are kept. */
	for (i = 0; i < 300; i++) {
		snprintf(many[i], sizeof(many[i]), "k%zu", i);
		manyp[i] = many[i];
	}
	len = pack_keys(buf, "tls_v1", manyp, 300, 300);
	assert_int_equal(process_ctx_decode(buf, len, &ctx), 0);
	assert_string_equal(ctx.tls_schema, "tls_v1");
	assert_int_equal(ctx.nkeys, PROCESS_CTX_MAX_KEYS);
	assert_string_equal(ctx.key_names + ctx.key_at[255], "k255");
	/* A truncated payload is refused, never half read. */
	assert_int_equal(process_ctx_decode(buf, len - 3, &ctx), -EBADMSG);
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, tmpdir_teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_process_ctx_reads_service_name_and_namespace),
		T(test_process_ctx_cleans_control_characters),
		T(test_process_ctx_finds_every_mapping_name),
		T(test_process_ctx_rejects_hostile_headers),
		T(test_process_ctx_does_not_follow_a_symlinked_mem),
		T(test_process_ctx_decode_survives_hostile_payloads),
		T(test_process_ctx_repairs_utf8_and_cuts_long_names),
		T(test_process_ctx_decode_reads_thread_context_keys),
	};

	return cmocka_run_group_tests_name("process_ctx", tests, NULL, NULL);
}
