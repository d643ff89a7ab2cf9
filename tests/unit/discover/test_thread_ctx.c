// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Unit tests for thread context discovery: tctx_elf_read on the test writer built at run time
 * with each TLS dialect (TLS descriptors, general-dynamic, an executable with static TLS), on
 * files without the variable and on garbage; and thread_ctx_set_keys' key choices. */
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
#include <unistd.h>

#include <cmocka.h>

#include "discover/tctx_elf.h"
#include "discover/thread_ctx.h"
#include "fixture_build.h"
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
	};

	return cmocka_run_group_tests_name("thread_ctx", tests, NULL, NULL);
}
