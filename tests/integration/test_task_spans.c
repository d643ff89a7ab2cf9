// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* End to end with real BPF and real interpreters: two tasks take turns on one thread, each in
 * its own span, each burning CPU in its own function between its turns: asyncio tasks and gevent
 * greenlets (the Python binding's spanprof.tasks) and fibers under a fiber scheduler (the Ruby
 * binding's SpanProf::Fibers). At every switch the binding hands the hook the running task's
 * span, so each function's samples must carry its own task's span (>= 95%), and the agent's
 * exact CPU time per span must match what each task measured itself (within 5%). Runs on every
 * interpreter here that has the seam: Debian's python3.11 and pyenv's CPython 3.8-3.13 (asyncio),
 * python3.11 with Debian's python3-gevent (gevent), Debian's Ruby 3.1 and the Debian 13 root's
 * Ruby 3.3 and 3.4 (.ci/ruby-root.sh; fibers). One agent per run, watching only that process. */
#define _GNU_SOURCE
#include <libgen.h>
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
#include "root_exec.h"
#include "tmpdir.h"

#define SPAN_1 "5a5a000000000001"
#define SPAN_2 "5a5a000000000002"
#define NAME_1 "GET /one"
#define NAME_2 "GET /two"
/* CPU seconds each task burns in its function: about 70 samples each at the default 100 Hz. */
#define TASK_CPU_S "0.7"
/* The required shares: of each function's samples, those carrying its task's span; and the span
 * time's agreement with the task's own clock. */
#define MIN_RIGHT_SPAN 0.95
#define CPU_TOLERANCE 0.05
/* The Debian 13 root (SPANPROF_RUBY_ROOT overrides), and where the checkout shows inside it. */
#define RUBY_ROOT "/var/lib/spanprof-test/trixie-ruby"
#define IN_ROOT_TOP "/spanprof"

/* Where and how one workload runs: an interpreter on this machine, or inside a root. */
struct task_run {
	const char *label; /* for the output: "python 3.8.18 asyncio" */
	const char *argv[5]; /* interpreter, script, args; paths as the workload sees them */
	const char *root; /* NULL: this machine */
	struct root_bind binds[3];
	const char *env[3]; /* more "K=V" for the workload, NULL-terminated */
	int no_frames; /* the agent reads no frames of this interpreter: spans' CPU time only */
	char top[PATH_MAX]; /* the checkout as the workload sees it */
	char host_top[PATH_MAX];
	char script[PATH_MAX + 64], hook[PATH_MAX + 32];
};

static int can_run(void)
{
	if (!agent_proc_can_run())
		return 0;
#if defined(__SANITIZE_ADDRESS__)
	printf("  skip: an interpreter cannot load the ASan-built hook library (make test runs "
	       "this)\n");
	return 0;
#endif
	return 1;
}

/* The workload's own CPU time per task ("task=N cpu_ns=..." lines), in ns. */
static void read_task_cpu(const char *path, long long cpu_ns[2])
{
	char line[256];
	long long v;
	FILE *f = fopen(path, "r");
	int task;

	assert_non_null(f);
	cpu_ns[0] = cpu_ns[1] = -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "task=%d cpu_ns=%lld", &task, &v) == 2 && task >= 1 && task <= 2)
			cpu_ns[task - 1] = v;
	fclose(f);
	assert_true(cpu_ns[0] > 0 && cpu_ns[1] > 0);
}

/* spanprof_span_cpu_seconds_total of (service, name) once it reached want: the agent reads the
 * span records at its drains (every second); -1 after 30 s without it. */
static double scrape_span_cpu(int port, const char *service, const char *name, double want)
{
	char metric[256];

	snprintf(metric, sizeof(metric),
		 "spanprof_span_cpu_seconds_total{service_name=\"%s\",span_name=\"%s\"}", service,
		 name);
	return metrics_scrape_until(port, metric, want, 30);
}

static void assert_own_span(const struct census *c, const char *function)
{
	const struct census_func *f = census_get(c, function);

	printf("    %-12s %4llu samples, %4llu with its task's span (%.1f%%)\n", function,
	       (unsigned long long)f->samples, (unsigned long long)f->right_span,
	       f->samples ? 100.0 * f->right_span / f->samples : 0);
	assert_true(f->samples >= PROFILED_MIN_SAMPLES);
	assert_true(f->right_span >= MIN_RIGHT_SPAN * f->samples);
}

/* Runs the workload under its own agent and checks the span of each function's samples and
 * each span's CPU time. */
static void run_tasks(struct task_run *t)
{
	char env_service[96], env_lib[PATH_MAX + 64], env_path[PATH_MAX + 64],
		env_rb[PATH_MAX + 64], service[64], out_path[600], *dir;
	const char *envp[] = { env_service, env_lib, env_path, env_rb, t->env[0], t->env[1], NULL };
	const char *args[] = { "--output",	 NULL,		"--interval", "1",
			       "--metrics-addr", "127.0.0.1:0", NULL };
	struct profiled_run r = { .agent_args = args,
				  .workload_argv = t->argv,
				  .workload_env = envp,
				  .hook_file = t->hook,
				  .root = t->root,
				  .root_binds = t->binds,
				  .keep_agent = 1 };
	static const char *const names[2] = { NAME_1, NAME_2 };
	long long own_ns[2];
	double span_s[2];
	struct census c;
	int port, i;

	dir = tmpdir_new("it-tasks");
	assert_non_null(dir);
	r.dir = args[1] = dir;
	snprintf(service, sizeof(service), "it-tasks-%d", getpid());
	snprintf(env_service, sizeof(env_service), "OTEL_SERVICE_NAME=%s", service);
	snprintf(env_lib, sizeof(env_lib), "SPANPROF_LIBRARY=%s", t->hook);
	snprintf(env_path, sizeof(env_path), "PYTHONPATH=%s/hooks/python", t->top);
	snprintf(env_rb, sizeof(env_rb), "SPANPROF_RUBY_LIB=%s/hooks/ruby/lib", t->top);
	assert_int_equal(profiled_run(&r), 0);
	snprintf(out_path, sizeof(out_path), "%s/workload-%d.out", dir, r.pid);
	read_task_cpu(out_path, own_ns);
	port = metrics_scrape_port(r.agent.log_path);
	assert_true(port > 0);
	for (i = 0; i < 2; i++)
		span_s[i] = scrape_span_cpu(port, service, names[i],
					    (1 - CPU_TOLERANCE) * own_ns[i] / 1e9);
	assert_int_equal(agent_proc_stop(&r.agent), 0); /* writes the last window */

	memset(&c, 0, sizeof(c));
	census_watch(&c, "parse_order", SPAN_1);
	census_watch(&c, "price_cart", SPAN_2);
	assert_true(census_read(&c, dir, service) > 0);
	printf("  %s: %.2f CPU s, %llu samples\n", t->label, r.cpu_s,
	       (unsigned long long)c.total_samples);
	for (i = 0; i < 2; i++)
		printf("    span %s: %.4f CPU s by the agent, %.4f s by the task itself (%+.1f%%)\n",
		       names[i], span_s[i], own_ns[i] / 1e9,
		       100.0 * (span_s[i] * 1e9 - own_ns[i]) / own_ns[i]);
	if (t->no_frames) {
		printf("    (the agent reads no Python frames of this version: the functions' "
		       "samples are not judged)\n");
	} else {
		assert_own_span(&c, "parse_order");
		assert_own_span(&c, "price_cart");
	}
	for (i = 0; i < 2; i++) {
		assert_true(span_s[i] * 1e9 >= (1 - CPU_TOLERANCE) * own_ns[i]);
		assert_true(span_s[i] * 1e9 <= (1 + CPU_TOLERANCE) * own_ns[i]);
	}
	tmpdir_remove(dir);
}

/* A run of an interpreter on this machine, with the checkout and build as they are. */
static void host_run(struct task_run *t, const char *label, const char *interp, const char *script,
		     const char *mode)
{
	memset(t, 0, sizeof(*t));
	t->label = label;
	snprintf(t->top, sizeof(t->top), "%s", build_path(".."));
	snprintf(t->script, sizeof(t->script), "%s/tests/workloads/%s", t->top, script);
	snprintf(t->hook, sizeof(t->hook), "%s", build_path("libspanprof.so"));
	t->argv[0] = interp;
	t->argv[1] = t->script;
	t->argv[2] = mode ? mode : TASK_CPU_S;
	t->argv[3] = mode ? TASK_CPU_S : NULL;
}

static void python_run(const char *python, const char *label, const char *mode)
{
	struct task_run t;

	host_run(&t, label, python, "py_tasks.py", mode);
	run_tasks(&t);
}

static void test_debian_python311_asyncio(void **state)
{
	(void)state;
	if (!can_run())
		skip();
	if (access("/usr/bin/python3.11", X_OK)) {
		printf("  skip: no /usr/bin/python3.11\n");
		skip();
	}
	python_run("/usr/bin/python3.11", "python 3.11 (Debian) asyncio", "asyncio");
}

static void test_debian_python311_gevent(void **state)
{
	(void)state;
	if (!can_run())
		skip();
	if (access("/usr/bin/python3.11", X_OK) ||
	    system("/usr/bin/python3.11 -c 'import gevent' >/dev/null 2>&1")) {
		printf("  skip: no /usr/bin/python3.11 with gevent (Debian's python3-gevent, "
		       "installed by scripts/setup-debian.sh)\n");
		skip();
	}
	python_run("/usr/bin/python3.11", "python 3.11 (Debian) gevent", "gevent");
}

static void test_pyenv_pythons_asyncio(void **state)
{
	static const char *const versions[] = { "3.8.18", "3.9.18", "3.10.13",
						"3.11.7", "3.12.1", "3.13.0" };
	const char *root = getenv("PYENV_ROOT") ? getenv("PYENV_ROOT") : "/root/.pyenv";
	char path[512], label[64];
	size_t i;
	int found = 0;

	(void)state;
	if (!can_run())
		skip();
	for (i = 0; i < sizeof(versions) / sizeof(versions[0]); i++) {
		snprintf(path, sizeof(path), "%s/versions/%s/bin/python3", root, versions[i]);
		if (access(path, X_OK)) {
			printf("  skip: pyenv CPython %s is absent (%s)\n", versions[i], path);
			continue;
		}
		found++;
		snprintf(label, sizeof(label), "python %s asyncio", versions[i]);
		python_run(path, label, "asyncio");
	}
	if (!found)
		skip();
}

static void test_debian_ruby_fibers(void **state)
{
	struct task_run t;

	(void)state;
	if (!can_run())
		skip();
	if (access("/usr/bin/ruby", X_OK)) {
		printf("  skip: no /usr/bin/ruby (scripts/setup-debian.sh installs it)\n");
		skip();
	}
	host_run(&t, "ruby (Debian) fibers", "/usr/bin/ruby", "rb_fibers.rb", NULL);
	run_tasks(&t);
}

/* A run inside the Debian 13 root (the interpreter at interp, a path inside it), with the
 * checkout bound in at IN_ROOT_TOP; 0 after saying why when it cannot run. */
static int root_run(struct task_run *t, const char *label, const char *interp, const char *script,
		    const char *mode, const char *what)
{
	const char *root = getenv("SPANPROF_RUBY_ROOT") ?: RUBY_ROOT;
	char path[PATH_MAX + 64], build[PATH_MAX];

	memset(t, 0, sizeof(*t));
	snprintf(path, sizeof(path), "%s%s", root, interp);
	if (access(path, X_OK)) {
		printf("  skip: no %s: the Debian 13 root (.ci/ruby-root.sh, run by "
		       "scripts/setup-debian.sh) is missing or has no %s\n",
		       path, what);
		return 0;
	}
	if (!realpath(build_path("."), build)) {
		printf("  skip: cannot resolve the build directory %s\n", build_path("."));
		return 0;
	}
	t->label = label;
	t->root = root;
	snprintf(t->host_top, sizeof(t->host_top), "%s", build);
	dirname(t->host_top);
	t->binds[0] = (struct root_bind){ t->host_top, IN_ROOT_TOP };
	snprintf(t->top, sizeof(t->top), "%s", IN_ROOT_TOP);
	snprintf(t->script, sizeof(t->script), IN_ROOT_TOP "/tests/workloads/%s", script);
	snprintf(t->hook, sizeof(t->hook), IN_ROOT_TOP "/%s/libspanprof.so", basename(build));
	t->argv[0] = interp;
	t->argv[1] = t->script;
	t->argv[2] = mode ? mode : TASK_CPU_S;
	t->argv[3] = mode ? TASK_CPU_S : NULL;
	return 1;
}

/* ruby<version> of the Debian 13 root. */
static void root_ruby_fibers(const char *version)
{
	char ruby[32], label[64], what[32];
	struct task_run t;

	if (!can_run())
		skip();
	snprintf(ruby, sizeof(ruby), "/usr/bin/ruby%s", version);
	snprintf(label, sizeof(label), "ruby %s (Debian 13 root) fibers", version);
	snprintf(what, sizeof(what), "Ruby %s", version);
	if (!root_run(&t, label, ruby, "rb_fibers.rb", NULL, what))
		skip();
	run_tasks(&t);
}

static void test_ruby33_root_fibers(void **state)
{
	(void)state;
	root_ruby_fibers("3.3");
}

static void test_ruby34_root_fibers(void **state)
{
	(void)state;
	root_ruby_fibers("3.4");
}

/* Debian's CPython 3.14 (from sid, unpacked by scripts/fetch-python314.sh, never installed):
 * it needs a newer glibc than Debian 12's, so it runs in the Debian 13 root with its directory
 * bound in. The agent reads no CPython 3.14 frames, so only the spans' CPU times are judged;
 * they tell the tasks apart as well (without the seam they were off by -99% and +86%). */
#define PY314_IN_ROOT "/opt/spanprof-python314"

static void test_python314_root_asyncio(void **state)
{
	const char *cache = getenv("SPANPROF_PYTHON_CACHE") ?: "/var/cache/spanprof-python";
	char host[PATH_MAX], python[PATH_MAX + 32];
	struct task_run t;

	(void)state;
	if (!can_run())
		skip();
	snprintf(host, sizeof(host), "%s/3.14", cache);
	snprintf(python, sizeof(python), "%s/usr/bin/python3.14", host);
	if (access(python, X_OK)) {
		printf("  skip: no %s (scripts/fetch-python314.sh, run by scripts/setup-debian.sh, "
		       "unpacks Debian's python3.14 there)\n",
		       python);
		skip();
	}
	/* The root needs only its own glibc, libffi and zlib; the interpreter is bound in. */
	if (!root_run(&t, "python 3.14 (Debian sid, in the Debian 13 root) asyncio", "/usr/bin/env",
		      "py_tasks.py", "asyncio", "/usr/bin/env"))
		skip();
	t.binds[1] = (struct root_bind){ host, PY314_IN_ROOT };
	t.argv[0] = PY314_IN_ROOT "/usr/bin/python3.14";
	t.env[0] = "PYTHONHOME=" PY314_IN_ROOT "/usr";
	t.env[1] = "LD_LIBRARY_PATH=" PY314_IN_ROOT "/usr/lib/x86_64-linux-gnu";
	t.no_frames = 1;
	run_tasks(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_debian_python311_asyncio),
		cmocka_unit_test(test_debian_python311_gevent),
		cmocka_unit_test(test_pyenv_pythons_asyncio),
		cmocka_unit_test(test_python314_root_asyncio),
		cmocka_unit_test(test_debian_ruby_fibers),
		cmocka_unit_test(test_ruby33_root_fibers),
		cmocka_unit_test(test_ruby34_root_fibers),
	};

	/* TASKS_TEST=<name> runs one test. */
	if (getenv("TASKS_TEST"))
		cmocka_set_test_filter(getenv("TASKS_TEST"));
	return cmocka_run_group_tests(tests, NULL, NULL);
}
