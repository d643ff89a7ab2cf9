// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* End to end with real BPF: the agent profiles workloads started after it, whose threads switch
 * spans every few ms, and the written pprof files must attribute each function to its span. Each
 * test runs its own agent with --pid (tests/helpers/profiled_run.h), so other agents on the
 * machine cannot disturb it. */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "agent_proc.h"
#include "profile_census.h"
#include "profiled_run.h"
#include "tmpdir.h"

#define SPAN_1 "5a5a000000000001"
#define SPAN_2 "5a5a000000000002"
#define SPAN_3 "5a5a000000000003"

static int setup(void **state)
{
	return agent_proc_dir_setup(state, "it-spans");
}

/* One agent (--pid, a profile every second) on one workload with a unique service name (in
 * OTEL_SERVICE_NAME unless in_code: then the workload names itself); the agent is stopped after
 * the workload ends, writing the last window. hook: the file whose attach is waited for (NULL:
 * the executable). */
static void run_workload_named(const char *dir, const char *const *argv, const char *hook,
			       const char *service, int in_code, struct profiled_run *r)
{
	char env_service[128];
	const char *env[] = { in_code ? NULL : env_service, NULL };
	const char *args[] = { "--output", dir, "--interval", "1", NULL };

	snprintf(env_service, sizeof(env_service), "OTEL_SERVICE_NAME=%s", service);
	*r = (struct profiled_run){ .dir = dir,
				    .agent_args = args,
				    .workload_argv = argv,
				    .workload_env = env,
				    .hook_file = hook };
	assert_int_equal(profiled_run(r), 0);
	printf("  hook attached %.3f s after exec; the workload used %.2f CPU s\n", r->attach_s,
	       r->cpu_s);
}

static void run_workload(const char *dir, const char *const *argv, const char *hook,
			 const char *service, struct profiled_run *r)
{
	run_workload_named(dir, argv, hook, service, 0, r);
}

static void assert_mostly(const struct census_func *f, double min_ratio)
{
	assert_non_null(f);
	printf("  %-22s %6llu samples, %6llu with the right span label\n", f->name,
	       (unsigned long long)f->samples, (unsigned long long)f->right_span);
	assert_true(f->samples >= PROFILED_MIN_SAMPLES);
	assert_true(f->right_span >= min_ratio * f->samples);
}

/* The census every span workload must pass, span 2 being named name_two; returns the
 * workload's sample count. */
static uint64_t check_span_census_named(const char *dir, const char *service, const char *name_two)
{
	struct census c = { 0 };

	census_watch(&c, "work_in_span_0", SPAN_1);
	census_watch(&c, "work_in_span_1", SPAN_2);
	census_watch(&c, "work_in_child_span", SPAN_2); /* root scope: the local root's id */
	census_watch(&c, "work_outside_span", NULL);
	assert_true(census_read(&c, dir, service) > 0);
	assert_mostly(census_get(&c, "work_in_span_0"), 0.99);
	assert_mostly(census_get(&c, "work_in_span_1"), 0.99);
	assert_mostly(census_get(&c, "work_in_child_span"), 0.99);
	/* None outside spans. */
	assert_mostly(census_get(&c, "work_outside_span"), 1.0);
	assert_true(census_get(&c, "work_in_span_0")->with_trace >=
		    0.99 * census_get(&c, "work_in_span_0")->samples);
	assert_string_equal(census_get(&c, "work_in_child_span")->seen_span_name, name_two);
	if (c.go_missing) {
		printf("  note: go not installed, go tool pprof check not run\n");
	} else {
		if (c.go_checked != c.files)
			printf("  go tool pprof failed: %s\n", c.go_error);
		assert_int_equal(c.go_checked, c.files);
	}
	return c.total_samples;
}

static uint64_t check_span_census(const char *dir, const char *service)
{
	return check_span_census_named(dir, service, "GET /two");
}

static void test_spans_label_their_functions(void **state)
{
	const char *dir = *state;
	const char *argv[] = { build_path("tests/workloads/span_workload"), "spans", "2", "3",
			       NULL };
	struct profiled_run r;
	char service[64];
	uint64_t samples;

	if (!dir)
		skip();
	snprintf(service, sizeof(service), "it-spans-%d", getpid());
	/* The executable links build/libspanprof.so: the agent attaches to that file. */
	run_workload(dir, argv, build_path("libspanprof.so"), service, &r);
	assert_true(r.attach_s < 1.0);
	samples = check_span_census(dir, service);
	/* About 100 samples per CPU second at 100 Hz, against the CPU the workload measured itself
	 * (the band: profiled_run.h). */
	assert_true(PROFILED_RATE_OK(samples, r.cpu_s));
}

static void test_static_copy_in_executable_is_hooked(void **state)
{
	const char *dir = *state;
	const char *argv[] = { build_path("tests/workloads/span_workload_static"), "spans", "1",
			       "2", NULL };
	struct profiled_run r;
	char service[64];

	if (!dir)
		skip();
	snprintf(service, sizeof(service), "it-static-%d", getpid());
	run_workload(dir, argv, NULL, service, &r);
	assert_true(r.attach_s < 1.0);
	check_span_census(dir, service);
}

/* Runs span_workload_dl, which dlopen()s dir/name, a copy of lib (a fresh file: one the
 * workload maps only after it started), as service tag-<pid>, and checks its census. */
static void run_dlopened_copy(const char *dir, const char *lib, const char *name, const char *tag,
			      struct profiled_run *r)
{
	char copy[512], cmd[1200], service[64];
	const char *argv[] = {
		build_path("tests/workloads/span_workload_dl"), "dlopen", "1", "2", copy, NULL
	};

	snprintf(copy, sizeof(copy), "%s/%s", dir, name);
	snprintf(cmd, sizeof(cmd), "cp %s %s", lib, copy);
	assert_int_equal(system(cmd), 0);
	snprintf(service, sizeof(service), "%s-%d", tag, getpid());
	run_workload(dir, argv, copy, service, r);
	check_span_census(dir, service);
}

static void test_dlopened_copy_is_hooked(void **state)
{
	const char *dir = *state;
	struct profiled_run r;

	if (!dir)
		skip();
	run_dlopened_copy(dir, build_path("libspanprof.so"), "libspanprof-copy.so", "it-dlopen",
			  &r);
	assert_true(r.attach_s < 1.0);
}

/* A program whose libspanprof predates hook ABI version 3 (it enters the uprobe at every call,
 * with no thread context record) is served by the uprobe path as before. */
static void test_abi_v2_library_still_labels_samples(void **state)
{
	const char *dir = *state;
	struct profiled_run r;

	if (!dir)
		skip();
	run_dlopened_copy(dir, build_path("tests/workloads/libspanprof_v2.so"), "libspanprof-v2.so",
			  "it-abi-v2", &r);
}

/* Programs built against the version 1 header (64-byte name) keep working with this agent. */
static void test_old_abi_v1_hook_calls_still_label_samples(void **state)
{
	const char *dir = *state;
	const char *argv[] = { build_path("tests/workloads/span_workload"), "spans-v1", "1", "2",
			       NULL };
	struct profiled_run r;
	char service[64];

	if (!dir)
		skip();
	snprintf(service, sizeof(service), "it-abi1-%d", getpid());
	run_workload(dir, argv, build_path("libspanprof.so"), service, &r);
	check_span_census(dir, service);
}

/* A 200-byte span name (v1 cut names at 63 bytes) reaches the span_name label whole. */
static void test_long_span_names_reach_the_label_whole(void **state)
{
	const char *dir = *state;
	const char *argv[] = { build_path("tests/workloads/span_workload"), "spans-long", "1", "2",
			       NULL };
	struct profiled_run r;
	char service[64];

	if (!dir)
		skip();
	snprintf(service, sizeof(service), "it-long-%d", getpid());
	run_workload(dir, argv, build_path("libspanprof.so"), service, &r);
	check_span_census_named(
		dir, service,
		"GET /api/v1/tenants/{tenant}/projects/{project}/environments/"
		"{environment}/services/{service}/deployments/{deployment}/revisions/"
		"{revision}/artifacts/{artifact}/layers/{layer}/blobs/{blob}/xx");
}

/* A process that names its service only in code (OTel process context, no environment) gets
 * its profiles under that name, with its service.namespace as a label. */
static void test_service_named_in_code_names_the_profiles(void **state)
{
	const char *dir = *state;
	char service[64];
	const char *argv[] = {
		build_path("tests/workloads/span_workload"), "procctx", "1", "2", service, NULL
	};
	struct census c = { 0 };
	struct profiled_run r;

	if (!dir)
		skip();
	snprintf(service, sizeof(service), "it-in-code-%d", getpid());
	run_workload_named(dir, argv, build_path("libspanprof.so"), service, 1, &r);
	check_span_census(dir, service); /* files named after the service set in code */
	assert_true(census_read(&c, dir, service) > 0);
	assert_string_equal(c.service_namespace, "spanprof-tests");
	assert_int_equal(c.in_service_namespace, c.total_samples);
}

static void test_thread_exiting_in_span_leaves_nothing_to_reused_tid(void **state)
{
	const char *dir = *state;
	const char *argv[] = { build_path("tests/workloads/span_workload"), "tid-reuse", "1", "1",
			       NULL };
	struct census c = { 0 };
	struct profiled_run r;
	char service[64];

	if (!dir)
		skip();
	snprintf(service, sizeof(service), "it-tid-%d", getpid());
	run_workload(dir, argv, build_path("libspanprof.so"), service, &r);
	census_watch(&c, "work_in_span_0", SPAN_1);
	census_watch(&c, "work_after_tid_reuse", NULL);
	assert_true(census_read(&c, dir, service) > 0);
	assert_mostly(census_get(&c, "work_in_span_0"), 0.99);
	assert_mostly(census_get(&c, "work_after_tid_reuse"), 1.0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_spans_label_their_functions, setup,
						tmpdir_teardown),
		cmocka_unit_test_setup_teardown(test_static_copy_in_executable_is_hooked, setup,
						tmpdir_teardown),
		cmocka_unit_test_setup_teardown(test_dlopened_copy_is_hooked, setup,
						tmpdir_teardown),
		cmocka_unit_test_setup_teardown(test_abi_v2_library_still_labels_samples, setup,
						tmpdir_teardown),
		cmocka_unit_test_setup_teardown(test_old_abi_v1_hook_calls_still_label_samples,
						setup, tmpdir_teardown),
		cmocka_unit_test_setup_teardown(test_long_span_names_reach_the_label_whole, setup,
						tmpdir_teardown),
		cmocka_unit_test_setup_teardown(test_service_named_in_code_names_the_profiles,
						setup, tmpdir_teardown),
		cmocka_unit_test_setup_teardown(
			test_thread_exiting_in_span_leaves_nothing_to_reused_tid, setup,
			tmpdir_teardown),
	};

	return cmocka_run_group_tests_name("span_profile", tests, NULL, NULL);
}
