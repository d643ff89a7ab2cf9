// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* End to end with real BPF: the agent profiles workloads started after it, whose threads switch
 * spans every few ms, and the written pprof files must attribute each function to its span. */
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
#include "tmpdir.h"

#define SPAN_1 "5a5a000000000001"
#define SPAN_2 "5a5a000000000002"
#define SPAN_3 "5a5a000000000003"
/* The agent writes a window every second; this covers the window a workload ended in. */
#define FLUSH_WAIT_US 2500000

struct fixture {
	char *dir;
	struct agent_proc agent;
	int skip;
};

static int group_setup(void **state)
{
	static struct fixture fx;
	const char *argv[] = { "--output", NULL, "--interval", "1", NULL };

	*state = &fx;
	if (!agent_proc_can_run()) {
		fx.skip = 1;
		return 0;
	}
	fx.dir = tmpdir_new("it-spans");
	if (!fx.dir)
		return -1;
	argv[1] = fx.dir;
	return agent_proc_start(&fx.agent, fx.dir, argv);
}

static int group_teardown(void **state)
{
	struct fixture *fx = *state;

	if (fx->skip)
		return 0;
	if (agent_proc_stop(&fx->agent) != 0)
		return -1;
	tmpdir_remove(fx->dir);
	return 0;
}

/* Runs a workload with a unique service name (in OTEL_SERVICE_NAME unless in_code: then the
 * workload names itself); returns its CPU seconds and how long the hook took to attach (from
 * its output). */
static void run_workload_named(struct fixture *fx, const char *const *argv, const char *service,
			       int in_code, double *cpu_s, double *attach_s)
{
	char env_service[128], out_path[512], line[256];
	const char *env[] = { in_code ? NULL : env_service, NULL };
	FILE *f;
	pid_t pid;

	snprintf(env_service, sizeof(env_service), "OTEL_SERVICE_NAME=%s", service);
	snprintf(out_path, sizeof(out_path), "%s/%s.out", fx->dir, service);
	pid = workload_start(argv, env, out_path);
	assert_true(pid > 0);
	assert_int_equal(workload_wait_cpu(pid, 60, cpu_s), 0);
	*attach_s = -1;
	f = fopen(out_path, "r");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f))
		sscanf(line, "attached after %lf s", attach_s);
	fclose(f);
	usleep(FLUSH_WAIT_US);
}

static void run_workload(struct fixture *fx, const char *const *argv, const char *service,
			 double *cpu_s, double *attach_s)
{
	run_workload_named(fx, argv, service, 0, cpu_s, attach_s);
}

static void assert_mostly(const struct census_func *f, double min_ratio)
{
	assert_non_null(f);
	printf("  %-22s %6llu samples, %6llu with the right span label\n", f->name,
	       (unsigned long long)f->samples, (unsigned long long)f->right_span);
	assert_true(f->samples >= 20);
	assert_true(f->right_span >= min_ratio * f->samples);
}

/* The census every span workload must pass, span 2 being named name_two; returns the
 * workload's sample count. */
static uint64_t check_span_census_named(struct fixture *fx, const char *service,
					const char *name_two)
{
	struct census c = { 0 };

	census_watch(&c, "work_in_span_0", SPAN_1);
	census_watch(&c, "work_in_span_1", SPAN_2);
	census_watch(&c, "work_in_child_span", SPAN_2); /* root scope: the local root's id */
	census_watch(&c, "work_outside_span", NULL);
	assert_true(census_read(&c, fx->dir, service) > 0);
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

static uint64_t check_span_census(struct fixture *fx, const char *service)
{
	return check_span_census_named(fx, service, "GET /two");
}

static void test_spans_label_their_functions(void **state)
{
	struct fixture *fx = *state;
	const char *argv[] = { build_path("tests/workloads/span_workload"), "spans", "2", "3",
			       NULL };
	char service[64];
	double cpu_s, attach_s;
	uint64_t samples;

	if (fx->skip)
		skip();
	snprintf(service, sizeof(service), "it-spans-%d", getpid());
	run_workload(fx, argv, service, &cpu_s, &attach_s);
	printf("  hook attached after %.3f s; workload used %.2f CPU s\n", attach_s, cpu_s);
	assert_true(attach_s >= 0 && attach_s < 1.0);
	samples = check_span_census(fx, service);
	/* ~100 samples per CPU second at 100 Hz. */
	printf("  %llu samples for %.2f CPU s (%.1f per CPU second)\n", (unsigned long long)samples,
	       cpu_s, samples / cpu_s);
	assert_true(samples >= 0.85 * 100 * cpu_s && samples <= 1.1 * 100 * cpu_s);
}

static void test_static_copy_in_executable_is_hooked(void **state)
{
	struct fixture *fx = *state;
	const char *argv[] = { build_path("tests/workloads/span_workload_static"), "spans", "1",
			       "2", NULL };
	char service[64];
	double cpu_s, attach_s;

	if (fx->skip)
		skip();
	snprintf(service, sizeof(service), "it-static-%d", getpid());
	run_workload(fx, argv, service, &cpu_s, &attach_s);
	printf("  static copy attached after %.3f s\n", attach_s);
	assert_true(attach_s >= 0 && attach_s < 1.0);
	check_span_census(fx, service);
}

static void test_dlopened_copy_is_hooked(void **state)
{
	struct fixture *fx = *state;
	char lib[512], cmd[1200], service[64];
	const char *argv[] = {
		build_path("tests/workloads/span_workload_dl"), "dlopen", "1", "2", lib, NULL
	};
	double cpu_s, attach_s;

	if (fx->skip)
		skip();
	/* A fresh copy: a file (inode) no process mapped when the agent started. */
	snprintf(lib, sizeof(lib), "%s/libspanprof-copy.so", fx->dir);
	snprintf(cmd, sizeof(cmd), "cp %s %s", build_path("libspanprof.so"), lib);
	assert_int_equal(system(cmd), 0);
	argv[0] = build_path("tests/workloads/span_workload_dl");
	snprintf(service, sizeof(service), "it-dlopen-%d", getpid());
	run_workload(fx, argv, service, &cpu_s, &attach_s);
	printf("  dlopen'ed copy attached after %.3f s\n", attach_s);
	assert_true(attach_s >= 0 && attach_s < 1.0);
	check_span_census(fx, service);
}

/* Programs built against the version 1 header (64-byte name) keep working with this agent. */
static void test_old_abi_v1_hook_calls_still_label_samples(void **state)
{
	struct fixture *fx = *state;
	const char *argv[] = { build_path("tests/workloads/span_workload"), "spans-v1", "1", "2",
			       NULL };
	char service[64];
	double cpu_s, attach_s;

	if (fx->skip)
		skip();
	snprintf(service, sizeof(service), "it-abi1-%d", getpid());
	run_workload(fx, argv, service, &cpu_s, &attach_s);
	check_span_census(fx, service);
}

/* A 200-byte span name (v1 cut names at 63 bytes) reaches the span_name label whole. */
static void test_long_span_names_reach_the_label_whole(void **state)
{
	struct fixture *fx = *state;
	const char *argv[] = { build_path("tests/workloads/span_workload"), "spans-long", "1", "2",
			       NULL };
	char service[64];
	double cpu_s, attach_s;

	if (fx->skip)
		skip();
	snprintf(service, sizeof(service), "it-long-%d", getpid());
	run_workload(fx, argv, service, &cpu_s, &attach_s);
	check_span_census_named(
		fx, service,
		"GET /api/v1/tenants/{tenant}/projects/{project}/environments/"
		"{environment}/services/{service}/deployments/{deployment}/revisions/"
		"{revision}/artifacts/{artifact}/layers/{layer}/blobs/{blob}/xx");
}

/* A process that names its service only in code (OTel process context, no environment) gets
 * its profiles under that name, with its service.namespace as a label. */
static void test_service_named_in_code_names_the_profiles(void **state)
{
	struct fixture *fx = *state;
	char service[64];
	const char *argv[] = {
		build_path("tests/workloads/span_workload"), "procctx", "1", "2", service, NULL
	};
	struct census c = { 0 };
	double cpu_s, attach_s;

	if (fx->skip)
		skip();
	snprintf(service, sizeof(service), "it-in-code-%d", getpid());
	run_workload_named(fx, argv, service, 1, &cpu_s, &attach_s);
	check_span_census(fx, service); /* files named after the service set in code */
	assert_true(census_read(&c, fx->dir, service) > 0);
	assert_string_equal(c.service_namespace, "spanprof-tests");
	assert_int_equal(c.in_service_namespace, c.total_samples);
}

static void test_thread_exiting_in_span_leaves_nothing_to_reused_tid(void **state)
{
	struct fixture *fx = *state;
	const char *argv[] = { build_path("tests/workloads/span_workload"), "tid-reuse", "1", "1",
			       NULL };
	struct census c = { 0 };
	char service[64];
	double cpu_s, attach_s;

	if (fx->skip)
		skip();
	snprintf(service, sizeof(service), "it-tid-%d", getpid());
	run_workload(fx, argv, service, &cpu_s, &attach_s);
	census_watch(&c, "work_in_span_0", SPAN_1);
	census_watch(&c, "work_after_tid_reuse", NULL);
	assert_true(census_read(&c, fx->dir, service) > 0);
	assert_mostly(census_get(&c, "work_in_span_0"), 0.99);
	assert_mostly(census_get(&c, "work_after_tid_reuse"), 1.0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_spans_label_their_functions),
		cmocka_unit_test(test_static_copy_in_executable_is_hooked),
		cmocka_unit_test(test_dlopened_copy_is_hooked),
		cmocka_unit_test(test_old_abi_v1_hook_calls_still_label_samples),
		cmocka_unit_test(test_long_span_names_reach_the_label_whole),
		cmocka_unit_test(test_service_named_in_code_names_the_profiles),
		cmocka_unit_test(test_thread_exiting_in_span_leaves_nothing_to_reused_tid),
	};

	return cmocka_run_group_tests_name("span_profile", tests, group_setup, group_teardown);
}
