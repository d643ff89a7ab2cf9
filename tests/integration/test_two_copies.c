// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* End to end with real BPF: two copies of the span hook in one process. The workload links
 * libspanprof.so and dlopen()s a plugin library that carries its own copy of the hook objects
 * (tests/workloads/two_copies_workload.c); one thread sets its spans through each copy, a third
 * through both by turns. The agent attaches to both copies; samples must carry the span the
 * thread set last, whatever the copy, and the span records must hold every span once with its
 * name and its CPU time as the workload measured it. Each run with its own agent (--pid). */
#define _GNU_SOURCE
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "agent_proc.h"
#include "metrics_scrape.h"
#include "profile_census.h"
#include "profiled_run.h"
#include "span_cpu_log.h"
#include "tmpdir.h"

#define CPU_SPANS 600 /* per thread */
#define CPU_THREADS 3
#define NSPANS (CPU_SPANS * CPU_THREADS)

static const char *const span_names[2] = { "GET /alpha", "POST /beta" };

/* The plugin whose copy binds otel_thread_ctx_v1 to libspanprof.so's (the dynamic linker's
 * interposition), and the one linked -Bsymbolic, whose copy keeps its own. */
#define PLUGIN "tests/workloads/two_copies/libplugin.so"
#define PLUGIN_SYMBOLIC "tests/workloads/two_copies/libplugin_symbolic.so"

/* Runs the workload (mode, arg) with copy plugin under one agent, once the agent attached both
 * copies; the agent is left running when keep. */
static void run_two_copies(const char *dir, const char *plugin, const char *mode, const char *arg,
			   const char *service, int keep, struct profiled_run *r)
{
	static char wait_log[PATH_MAX + 64], env_service[128], copy_b[PATH_MAX];
	char lib_a[PATH_MAX];
	const char *env[] = { env_service, NULL };
	static const char *args[] = { "--output",	NULL,	       "--interval", "1",
				      "--metrics-addr", "127.0.0.1:0", NULL };
	static const char *wargv[5];

	assert_non_null(realpath(build_path("libspanprof.so"), lib_a));
	assert_non_null(realpath(build_path(plugin), copy_b));
	/* Both copies attached: libspanprof.so's by the log line, the plugin's as hook_file. */
	snprintf(wait_log, sizeof(wait_log), "span hook attached: %s (pid %%d,", lib_a);
	snprintf(env_service, sizeof(env_service), "OTEL_SERVICE_NAME=%s", service);
	args[1] = dir;
	wargv[0] = build_path("tests/workloads/two_copies_workload");
	wargv[1] = copy_b;
	wargv[2] = mode;
	wargv[3] = arg;
	wargv[4] = NULL;
	*r = (struct profiled_run){ .dir = dir,
				    .agent_args = args,
				    .workload_argv = wargv,
				    .workload_env = env,
				    .hook_file = copy_b,
				    .wait_log = wait_log,
				    .wait_hook_too = 1,
				    .keep_agent = keep };
	assert_int_equal(profiled_run(r), 0);
	printf("  both copies attached %.3f s after exec; the workload used %.2f CPU s\n",
	       r->attach_s, r->cpu_s);
}

static void check_labels(const char *plugin)
{
	static const char *const funcs[] = { "work_via_a", "work_via_b", "work_alt_a", "work_alt_b",
					     "work_alt_outside" };
	static const char *const want[] = { "7a7a000000000001", "7a7a000000000002",
					    "7a7a000000000003", "7a7a000000000004", NULL };
	const struct census_func *f;
	struct profiled_run r;
	struct census c = { 0 };
	char service[64], *dir;
	size_t i;

	if (!agent_proc_can_run())
		skip();
	dir = tmpdir_new("it-twocopies");
	assert_non_null(dir);
	snprintf(service, sizeof(service), "it-twocopies-%d", getpid());
	run_two_copies(dir, plugin, "labels", "1", service, 0, &r);
	for (i = 0; i < sizeof(funcs) / sizeof(funcs[0]); i++)
		census_watch(&c, funcs[i], want[i]);
	assert_true(census_read(&c, dir, service) > 0);
	for (i = 0; i < sizeof(funcs) / sizeof(funcs[0]); i++) {
		f = census_get(&c, funcs[i]);
		assert_non_null(f);
		printf("  %-18s %6llu samples, %6llu with the right span label\n", f->name,
		       (unsigned long long)f->samples, (unsigned long long)f->right_span);
	}
	for (i = 0; i < sizeof(funcs) / sizeof(funcs[0]); i++) {
		f = census_get(&c, funcs[i]);
		assert_true(f->samples >= PROFILED_MIN_SAMPLES);
		assert_true(f->right_span >= 0.99 * f->samples);
		if (want[i])
			assert_string_equal(f->seen_span_name, "two copies");
	}
	tmpdir_remove(dir);
}

static void test_samples_carry_the_span_of_either_copy(void **state)
{
	(void)state;
	check_labels(PLUGIN);
}

static void test_samples_carry_the_span_of_either_symbolic_copy(void **state)
{
	(void)state;
	check_labels(PLUGIN_SYMBOLIC);
}

/* Scrapes spanprof_spans_total for the service until both names reach their count (the agent
 * reads its record ring at its drains) or 30 s pass. */
static void wait_records(int port, const char *service)
{
	char metric[256];

	for (int i = 0; i < 2; i++) {
		snprintf(metric, sizeof(metric),
			 "spanprof_spans_total{service_name=\"%s\",span_name=\"%s\"}", service,
			 span_names[i]);
		metrics_scrape_until(port, metric, NSPANS / 2, 30);
	}
}

static void check_cpu(const char *plugin)
{
	static struct logged_span logged[NSPANS];
	struct span_cpu_census c = { 0 };
	struct span_cpu_log w;
	struct profiled_run r;
	char service[64], path[1024], count[16], *dir;
	int port;

	if (!agent_proc_can_run())
		skip();
	dir = tmpdir_new("it-twocopies-cpu");
	assert_non_null(dir);
	snprintf(service, sizeof(service), "it-twocopies-cpu-%d", getpid());
	snprintf(count, sizeof(count), "%d", CPU_SPANS);
	run_two_copies(dir, plugin, "cpu", count, service, 1, &r);
	port = metrics_scrape_port(r.agent.log_path);
	assert_true(port > 0);
	wait_records(port, service);
	assert_int_equal(agent_proc_stop(&r.agent), 0);
	snprintf(path, sizeof(path), "%s/workload-%d.out", dir, r.pid);
	span_cpu_log_read(&w, path, logged, NSPANS);
	assert_int_equal(w.n, NSPANS);
	snprintf(path, sizeof(path), "%s/%s.spans.jsonl", dir, service);
	span_cpu_census_read(&c, &w, path, span_names, r.pid);
	printf("  %d records of %d spans: %d unknown, %d duplicates, %d wrong names, %d beyond "
	       "tolerance, %d beyond 1 ms\n",
	       c.records, w.n, c.unknown, c.dup, c.wrong_name, c.cpu_off, c.cpu_wrong);
	for (int i = 0; i < 2; i++)
		printf("  %s: %.4f s CPU by the agent, %.4f s by the workload\n", span_names[i],
		       c.agent_ns[i] / 1e9, w.span_ns[i] / 1e9);
	assert_int_equal(c.records, NSPANS);
	assert_int_equal(c.unknown + c.dup + c.wrong_name, 0);
	for (int i = 0; i < 2; i++) {
		assert_true(c.agent_ns[i] >= 0.95 * w.span_ns[i]);
		assert_true(c.agent_ns[i] <= 1.05 * w.span_ns[i]);
	}
	assert_true(c.cpu_off <= NSPANS / 20);
	assert_true(c.cpu_wrong <= NSPANS / 200);
	tmpdir_remove(dir);
}

static void test_span_records_of_either_copy(void **state)
{
	(void)state;
	check_cpu(PLUGIN);
}

static void test_span_records_of_either_symbolic_copy(void **state)
{
	(void)state;
	check_cpu(PLUGIN_SYMBOLIC);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_samples_carry_the_span_of_either_copy),
		cmocka_unit_test(test_samples_carry_the_span_of_either_symbolic_copy),
		cmocka_unit_test(test_span_records_of_either_copy),
		cmocka_unit_test(test_span_records_of_either_symbolic_copy),
	};

	return cmocka_run_group_tests_name("two_copies", tests, NULL, NULL);
}
