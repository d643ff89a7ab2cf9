// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Unit tests for thread context discovery: tctx_elf_read on the test writer built at run time
 * with each TLS dialect (TLS descriptors, general-dynamic, an executable with static TLS), on
 * files without the variable and on garbage; thread_ctx_set_keys' key choices; and
 * thread_ctx_find in a fake proc root (a module with a static TLS slot, a process context
 * announcing a schema): both names of the schema accepted, an unknown one refused. */
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
#include "discover/tctx_elf.h"
#include "discover/thread_ctx.h"
#include "fixture_build.h"
#include "text_file.h"
#include "tmpdir.h"

/* The writer's source, relative to the top of the tree (make runs tests from there). */
static const char *src(void)
{
	if (!access("tests/fixtures/tctx_writer.c", R_OK))
		return "tests/fixtures/tctx_writer.c";
	printf("  tests/fixtures/tctx_writer.c not found from the current directory: skipped\n");
	return NULL;
}

static int read_file(const char *path, struct tctx_elf *te)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), err;

	assert_true(fd >= 0);
	err = tctx_elf_read(fd, te);
	close(fd);
	return err;
}

static void test_tlsdesc_library_has_its_descriptor(void **state)
{
	const char *dir = *state;
	char out[4200];
	struct tctx_elf te;

	if (!src())
		skip();
	snprintf(out, sizeof(out), "%s/libdesc.so", dir);
	assert_int_equal(fixture_sh("cc -O1 -fPIC -shared -mtls-dialect=gnu2 %s -o %s", src(), out),
			 0);
	assert_int_equal(read_file(out, &te), 0);
	assert_true(te.tlsdesc_got != 0);
	assert_int_equal(te.dtpmod_got, 0);
	assert_int_equal(te.tls_memsz >= 8, 1);
}

static void test_general_dynamic_library_has_module_and_offset_slots(void **state)
{
	const char *dir = *state;
	char out[4200];
	struct tctx_elf te;

	if (!src())
		skip();
	snprintf(out, sizeof(out), "%s/libgd.so", dir);
	assert_int_equal(fixture_sh("cc -O1 -fPIC -shared -mtls-dialect=gnu %s -o %s", src(), out),
			 0);
	assert_int_equal(read_file(out, &te), 0);
	assert_true(te.dtpmod_got != 0);
	assert_true(te.dtpoff_got == te.dtpmod_got + 8);
	assert_int_equal(te.tlsdesc_got, 0);
}

static void test_executable_exports_its_static_variable(void **state)
{
	const char *dir = *state;
	char out[4200];
	struct tctx_elf te;

	if (!src())
		skip();
	snprintf(out, sizeof(out), "%s/exe", dir);
	/* A main that touches the writer: local-exec access, the variable exported by -rdynamic. */
	assert_int_equal(
		fixture_sh("printf 'void tctx_set(void *);int main(void){tctx_set(0);"
			   "return 0;}' > %s/main.c && cc -O1 -rdynamic %s/main.c %s -o %s",
			   dir, dir, src(), out),
		0);
	assert_int_equal(read_file(out, &te), 0);
	assert_int_equal(te.tlsdesc_got | te.dtpmod_got | te.tpoff_got, 0);
	assert_true(te.tls_align >= 8 && te.tls_memsz >= 8);
}

/* spanprof's hook library is told by the function it exports, in the same .dynsym walk: no
 * probe-note parse on the run loop. A publisher without that function is not the hook. */
static void test_hook_library_is_told_by_its_exported_function(void **state)
{
	const char *dir = *state;
	char out[4200];
	struct tctx_elf te;

	if (!src())
		skip();
	snprintf(out, sizeof(out), "%s/libhook.so", dir);
	assert_int_equal(fixture_sh("printf 'void spanprof_span_set(const void *s){(void)s;}' > "
				    "%s/hook.c && cc -O1 -fPIC -shared %s %s/hook.c -o %s",
				    dir, src(), dir, out),
			 0);
	assert_int_equal(read_file(out, &te), 0);
	assert_int_equal(te.span_hook, 1);
	snprintf(out, sizeof(out), "%s/libsdk.so", dir);
	assert_int_equal(fixture_sh("cc -O1 -fPIC -shared %s -o %s", src(), out), 0);
	assert_int_equal(read_file(out, &te), 0);
	assert_int_equal(te.span_hook, 0);
}

static void test_files_without_the_variable_are_refused(void **state)
{
	const char *dir = *state;
	char out[4200];
	struct tctx_elf te;
	int fd;

	if (!src())
		skip();
	/* Built without -rdynamic: the variable stays out of .dynsym. */
	snprintf(out, sizeof(out), "%s/hidden", dir);
	assert_int_equal(fixture_sh("printf 'void tctx_set(void *);int main(void){tctx_set(0);"
				    "return 0;}' > %s/m2.c && cc -O1 %s/m2.c %s -o %s",
				    dir, dir, src(), out),
			 0);
	assert_int_equal(read_file(out, &te), -ENOENT);
	snprintf(out, sizeof(out), "%s/garbage", dir);
	fd = open(out, O_WRONLY | O_CREAT, 0600);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "\177ELF garbage, not an ELF at all", 31), 31);
	close(fd);
	assert_int_equal(read_file(out, &te), -ENOEXEC);
}

static void add_key(struct process_ctx *ctx, const char *name)
{
	size_t at = ctx->nkeys ? ctx->key_at[ctx->nkeys - 1] +
					 strlen(ctx->key_names + ctx->key_at[ctx->nkeys - 1]) + 1 :
				 0;

	strcpy(ctx->key_names + at, name);
	ctx->key_at[ctx->nkeys++] = (uint16_t)at;
}

static void test_keys_map_to_indexes(void **state)
{
	static struct process_ctx ctx;
	struct thread_ctx_labels labels = { { "http.route", "absent.key" }, 2 };
	struct tctx_proc out = { .rescan = 1 };

	(void)state;
	add_key(&ctx, "datadog.local_root_span_id");
	add_key(&ctx, "http.route");
	add_key(&ctx, "spanprof.span_name");
	thread_ctx_set_keys(&ctx, &labels, &out);
	assert_int_equal(out.nkeys, 3);
	assert_int_equal(out.root_key, 0);
	assert_int_equal(out.name_key, 2);
	assert_int_equal(out.label_keys[0], 1);
	assert_int_equal(out.label_keys[1], SPANPROF_TCTX_NO_KEY);
	assert_int_equal(out.label_keys[2], SPANPROF_TCTX_NO_KEY);
	assert_int_equal(out.rescan, 0);
	/* spanprof's own root key wins over Datadog's. */
	add_key(&ctx, "spanprof.local_root_span_id");
	thread_ctx_set_keys(&ctx, &labels, &out);
	assert_int_equal(out.root_key, 3);
}

/* A fake proc root for thread_ctx_find: pid FAKE_PID maps a module (FAKE_MODULE, its file under
 * map_files) whose TPOFF64 GOT slot holds FAKE_TP_OFFSET, and an OTEL_CTX mapping whose process
 * context announces a schema and a key map. */
#define FAKE_PID 4343
#define FAKE_MODULE 0x400000ull
#define FAKE_TPOFF_GOT 0x800ull /* the slot's file vaddr; the module is mapped with bias 0x400000 */
#define FAKE_TP_OFFSET -128ll
#define FAKE_CTX 0x10000ull
#define FAKE_PAYLOAD (FAKE_CTX + PROCESS_CTX_HEADER_SIZE)

/* The module "parsed": a static TLS slot, loaded from file offset 0 at vaddr 0. */
static int fake_module(void *ctx, int fd, const char *path, struct tctx_elf *out)
{
	(void)ctx;
	(void)fd;
	(void)path;
	memset(out, 0, sizeof(*out));
	out->tpoff_got = FAKE_TPOFF_GOT;
	out->tls_memsz = out->tls_align = 8;
	out->loads.seg[0].filesz = 0x1000;
	out->loads.n = 1;
	return 0;
}

/* Publishes a process context announcing schema with the key map {"http.route"}. */
static void fake_publish(const char *root, const char *schema)
{
	Otelctx__AnyValue schema_v = OTELCTX__ANY_VALUE__INIT, map_v = OTELCTX__ANY_VALUE__INIT,
			  key = OTELCTX__ANY_VALUE__INIT, *keyp = &key;
	Otelctx__KeyValue schema_kv = OTELCTX__KEY_VALUE__INIT, map_kv = OTELCTX__KEY_VALUE__INIT,
			  *attrs[2] = { &schema_kv, &map_kv };
	Otelctx__ArrayValue arr = OTELCTX__ARRAY_VALUE__INIT;
	Otelctx__ProcessContext pc = OTELCTX__PROCESS_CONTEXT__INIT;
	struct {
		char signature[8];
		uint32_t version, payload_size;
		uint64_t published_at_ns, payload;
	} h = { .version = 2, .published_at_ns = 1763800000000000000ull, .payload = FAKE_PAYLOAD };
	uint8_t buf[512];
	size_t len;

	key.value_case = OTELCTX__ANY_VALUE__VALUE_STRING_VALUE;
	key.string_value = "http.route";
	arr.n_values = 1;
	arr.values = &keyp;
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
	assert_true(otelctx__process_context__get_packed_size(&pc) <= sizeof(buf));
	len = otelctx__process_context__pack(&pc, buf);
	memcpy(h.signature, "OTEL_CTX", 8);
	h.payload_size = (uint32_t)len;
	proc_file_write_at(root, FAKE_PID, "mem", &h, sizeof(h), FAKE_CTX);
	proc_file_write_at(root, FAKE_PID, "mem", buf, len, FAKE_PAYLOAD);
}

/* Runs thread_ctx_find on the fake process announcing schema. */
static int find_with_schema(const char *root, const char *schema, struct tctx_proc *out,
			    const char **why)
{
	struct thread_ctx_labels labels = { { "http.route" }, 1 };
	char path[4200], maps_text[256], module_path[] = "/usr/lib/libsdk.so";
	int64_t slot = FAKE_TP_OFFSET;
	struct proc_map m = { .start = FAKE_MODULE,
			      .end = FAKE_MODULE + 0x1000,
			      .path = module_path };
	struct proc_maps maps = { .maps = &m, .count = 1 };
	struct thread_ctx_files *files;
	struct stat st;
	int n, err;

	snprintf(path, sizeof(path), "%s/%d", root, FAKE_PID);
	mkdir(path, 0700);
	snprintf(path, sizeof(path), "%s/%d/map_files", root, FAKE_PID);
	mkdir(path, 0700);
	snprintf(path, sizeof(path), "%s/%d/map_files/%llx-%llx", root, FAKE_PID,
		 (unsigned long long)m.start, (unsigned long long)m.end);
	close(open(path, O_WRONLY | O_CREAT, 0600));
	assert_int_equal(stat(path, &st), 0);
	m.dev = (uint64_t)st.st_dev;
	m.inode = (uint64_t)st.st_ino;
	n = snprintf(maps_text, sizeof(maps_text),
		     "%08llx-%08llx r-xp 00000000 08:01 1234   %s\n"
		     "%08llx-%08llx rw-p 00000000 00:00 0   [anon:OTEL_CTX]\n",
		     (unsigned long long)m.start, (unsigned long long)m.end, module_path, FAKE_CTX,
		     FAKE_CTX + 0x1000);
	proc_file_write_at(root, FAKE_PID, "maps", maps_text, (size_t)n, 0);
	proc_file_write_at(root, FAKE_PID, "mem", &slot, sizeof(slot),
			   FAKE_MODULE + FAKE_TPOFF_GOT);
	fake_publish(root, schema);
	files = thread_ctx_files_new(8);
	assert_non_null(files);
	thread_ctx_files_set_reader(files, fake_module, NULL);
	err = thread_ctx_find(files, root, FAKE_PID, &maps, &labels, UINT64_MAX, out, why);
	thread_ctx_files_free(files);
	return err;
}

/* The OTEP's development schema and its announced stable name are read alike; a schema this
 * reader does not know is refused with the reason the agent logs, never read as if known. */
static void test_schema_names_accepted_and_unknown_refused(void **state)
{
	static const char *const known[] = { THREAD_CTX_SCHEMA_DEV, THREAD_CTX_SCHEMA };
	const char *root = *state, *why;
	struct tctx_proc out;
	size_t i;

	for (i = 0; i < 2; i++) {
		why = "unset";
		assert_int_equal(find_with_schema(root, known[i], &out, &why), 0);
		assert_null(why);
		assert_int_equal(out.tls, SPANPROF_TCTX_TLS_STATIC);
		assert_int_equal(out.tp_offset, FAKE_TP_OFFSET);
		assert_int_equal(out.nkeys, 1);
		assert_int_equal(out.label_keys[0], 0);
	}
	assert_int_equal(find_with_schema(root, "tls_v9", &out, &why), -ENOTSUP);
	assert_non_null(why);
	assert_non_null(strstr(why, "schema_version"));
	/* Go's pprof labels are read by the Go support, not here: nothing to do, no refusal. */
	why = NULL;
	assert_int_equal(find_with_schema(root, "go_pprof_labels_v1", &out, &why), -EAGAIN);
	assert_null(why);
}

static int setup(void **state)
{
	*state = tmpdir_new("tctx-elf");
	return *state ? 0 : -1;
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, tmpdir_teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_tlsdesc_library_has_its_descriptor),
		T(test_general_dynamic_library_has_module_and_offset_slots),
		T(test_executable_exports_its_static_variable),
		T(test_hook_library_is_told_by_its_exported_function),
		T(test_files_without_the_variable_are_refused),
		T(test_keys_map_to_indexes),
		T(test_schema_names_accepted_and_unknown_refused),
	};

	return cmocka_run_group_tests_name("thread_ctx", tests, NULL, NULL);
}
