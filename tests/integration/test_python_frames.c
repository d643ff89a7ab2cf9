// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* End to end with real BPF and real interpreters: Debian's python3.11 and every pyenv CPython
 * 3.8-3.13 on the machine run two functions in two spans (then one per thread) through the
 * project's Python binding; the profiles must show each span's Python function, with its file,
 * read by BPF from the interpreter's frames. One agent per run, watching only that process. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "agent_proc.h"
#include "pprof_file.h"
#include "profile_census.h"
#include "tmpdir.h"

#define SPAN_1 "5a5a000000000001"
#define SPAN_2 "5a5a000000000002"
#define SCRIPT "py_spans.py"
#define SEEN_TIMEOUT_S 20
/* Census entries counting a thread's function under the other thread's span. */
#define CROSS_ONE 4
#define CROSS_TWO 5

/* The hashing thread's samples in "gil" mode: SPAN_1 samples, those showing hash_blob, and
 * those whose leaf is native code (no .py file) with hash_blob above it. */
struct gil_tally {
	uint64_t span, with_caller, native_under;
};

static void tally_gil_file(const Perftools__Profiles__Profile *p, const char *path, void *ctx)
{
	const Perftools__Profiles__Sample *s;
	struct gil_tally *g = ctx;
	const char *span, *file;
	size_t i;
	long depth;

	(void)path;
	for (i = 0; i < p->n_sample; i++) {
		s = p->sample[i];
		span = pprof_sample_label(p, s, "span_id");
		if (!span || strcmp(span, SPAN_1))
			continue;
		g->span++;
		depth = pprof_sample_function_depth(p, s, "hash_blob", 0);
		if (depth < 0) {
			if (g->span - g->with_caller <= 3)
				printf("    without hash_blob: leaf %s, %zu frames\n",
				       pprof_leaf_function(p, s) ?: "?", s->n_location_id);
			continue;
		}
		g->with_caller++;
		file = pprof_sample_function_file(p, s, pprof_leaf_function(p, s) ?: "");
		if (depth > 0 && (!file || !strstr(file, ".py")))
			g->native_under++;
	}
}

/* "spans" mode: parse_order's samples inside the builtin sum() it calls (which runs a
 * generator: Python called back from C), and those where builtin_sum sits between the generator
 * and parse_order, as one interpreter run per eval-loop activation places them. */
struct nesting_tally {
	uint64_t with_sum, sum_under_caller, genexpr_over_sum;
};

static void tally_nesting_file(const Perftools__Profiles__Profile *p, const char *path, void *ctx)
{
	const Perftools__Profiles__Sample *s;
	struct nesting_tally *t = ctx;
	long sum, caller, gen;
	size_t i;

	(void)path;
	for (i = 0; i < p->n_sample; i++) {
		s = p->sample[i];
		sum = pprof_sample_function_depth(p, s, "builtin_sum", 0);
		caller = pprof_sample_function_depth(p, s, "parse_order", 0);
		if (sum < 0 || caller < 0)
			continue;
		t->with_sum++;
		t->sum_under_caller += sum < caller;
		/* <genexpr> (<= 3.10) or parse_order.<locals>.<genexpr> (3.11+ qualname) */
		gen = pprof_sample_function_depth(p, s, "<genexpr>", 0);
		if (gen < 0)
			gen = pprof_sample_function_depth(p, s, "parse_order.<locals>.<genexpr>",
							  0);
		t->genexpr_over_sum += gen >= 0 && gen < sum;
	}
}

/* Calls fn on each profile of service in dir. */
static void each_profile(const char *dir, const char *service, pprof_profile_fn fn, void *ctx)
{
	assert_true(pprof_file_each(dir, service, NULL, fn, ctx) >= 0);
}

static struct gil_tally last_gil;
static struct nesting_tally last_nesting;

static const char *const pyenv_versions[] = { "3.8.18", "3.9.18", "3.10.13",
					      "3.11.7", "3.12.1", "3.13.0" };

/* Waits until the agent logged that it attached the span hook (one uprobe on libspanprof.so
 * serves every process mapping it, logged with the first) and, unless frames is 0
 * (--interpreter-frames=false), reads the CPython frames of each of the n pids. (The workload's
 * spanprof.active() alone is not enough: another agent on the machine may have attached the hook
 * first.) */
static int wait_python_seen(const struct agent_proc *agent, const pid_t *pids, size_t n, int frames)
{
	struct timespec ts = { 0, 20 * 1000 * 1000 };
	char python[64], hook[4400];
	size_t seen, i;
	int tries;

	snprintf(hook, sizeof(hook), "span hook attached: %s (pid ", build_path("libspanprof.so"));
	for (tries = 0; tries < SEEN_TIMEOUT_S * 50; tries++) {
		for (seen = frames ? 0 : n, i = 0; frames && i < n; i++) {
			snprintf(python, sizeof(python), "pid %d: reading CPython", (int)pids[i]);
			seen += agent_proc_log_contains(agent, python);
		}
		if (seen == n && agent_proc_log_contains(agent, hook))
			return 0;
		nanosleep(&ts, NULL);
	}
	return -1;
}

/* One python SCRIPT process in one mode, held at its gate until the agent reads it. */
struct py_workload {
	const char *mode;
	char service[64], env_service[96], gate[600];
	pid_t pid;
	double cpu_s;
};

static void workload_begin(const char *python, const char *dir, const char *mode,
			   struct py_workload *w)
{
	char env_path[4400], env_lib[4400], wout[600];
	const char *env[] = { w->env_service, env_path, env_lib, NULL };
	/* CPU seconds per thread: about 100 samples a second of it (spans: two functions share
	 * one thread; threads and gil: two threads). */
	const char *argv[] = { python,	build_path("../tests/workloads/" SCRIPT), mode,
			       w->gate, strcmp(mode, "gil") ? "2" : "4",	  NULL };

	w->mode = mode;
	snprintf(w->service, sizeof(w->service), "it-py-%d-%s", getpid(), mode);
	snprintf(w->env_service, sizeof(w->env_service), "OTEL_SERVICE_NAME=it-py-%d-%s", getpid(),
		 mode);
	snprintf(w->gate, sizeof(w->gate), "%s/go-%s", dir, mode);
	snprintf(wout, sizeof(wout), "%s/%s.out", dir, mode);
	snprintf(env_path, sizeof(env_path), "PYTHONPATH=%s", build_path("../hooks/python"));
	snprintf(env_lib, sizeof(env_lib), "SPANPROF_LIBRARY=%s", build_path("libspanprof.so"));
	w->pid = workload_start(argv, env, wout);
	assert_true(w->pid > 0);
}

/* The census of one workload's profiles (its own service). */
static void workload_census(const char *python, const char *out_dir, const struct py_workload *w,
			    struct census *c)
{
	memset(c, 0, sizeof(*c));
	census_watch_file(c, "parse_order", SPAN_1, "/" SCRIPT);
	census_watch_file(c, "price_cart", SPAN_2, "/" SCRIPT);
	census_watch(c, "thread_one", SPAN_1);
	census_watch(c, "thread_two", SPAN_2);
	census_watch(c, "thread_one", SPAN_2); /* funcs[CROSS_ONE]: must stay 0 */
	census_watch(c, "thread_two", SPAN_1); /* funcs[CROSS_TWO]: must stay 0 */
	census_watch(c, "hash_blob", SPAN_1);
	assert_true(census_read(c, out_dir, w->service) > 0);
	printf("  %s %s: %.2f CPU s, %llu samples\n", python, w->mode, w->cpu_s,
	       (unsigned long long)c->total_samples);
	if (!strcmp(w->mode, "gil")) {
		memset(&last_gil, 0, sizeof(last_gil));
		each_profile(out_dir, w->service, tally_gil_file, &last_gil);
	}
	if (!strcmp(w->mode, "spans")) {
		memset(&last_nesting, 0, sizeof(last_nesting));
		each_profile(out_dir, w->service, tally_nesting_file, &last_nesting);
	}
}

/* Runs python SCRIPT in each of the n modes at once, one process each (their own service),
 * under one agent watching only them (frames 0: --interpreter-frames=false), and reads each
 * one's census into c[i]. Runs by CPU time, so the processes sharing the CPUs changes the wall
 * time only. */
static void run_python_frames(const char *python, const char *const *modes, size_t n, int frames,
			      struct census *c)
{
	const char *agent_argv[16] = { "--output", NULL, "--interval", "1" };
	char out_dir[512], pid_args[3][16];
	struct py_workload w[3];
	pid_t pids[3];
	struct agent_proc agent;
	char *dir = tmpdir_new("it-py");
	size_t i, argc = 4;
	int fd;

	assert_non_null(dir);
	assert_true(n <= 3);
	snprintf(out_dir, sizeof(out_dir), "%s/out", dir);
	agent_argv[1] = out_dir;
	for (i = 0; i < n; i++) {
		workload_begin(python, dir, modes[i], &w[i]);
		pids[i] = w[i].pid;
		snprintf(pid_args[i], sizeof(pid_args[i]), "%d", (int)w[i].pid);
		agent_argv[argc++] = "--pid";
		agent_argv[argc++] = pid_args[i];
	}
	if (!frames)
		agent_argv[argc++] = "--interpreter-frames=false";
	assert_int_equal(agent_proc_start(&agent, dir, agent_argv), 0);
	assert_int_equal(wait_python_seen(&agent, pids, n, frames), 0);
	for (i = 0; i < n; i++) {
		fd = open(w[i].gate, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
		assert_true(fd >= 0);
		close(fd);
	}
	for (i = 0; i < n; i++)
		assert_int_equal(workload_wait_cpu(w[i].pid, 90, &w[i].cpu_s), 0);
	if (!frames)
		assert_false(agent_proc_log_contains(&agent, "reading CPython"));
	assert_int_equal(agent_proc_stop(&agent), 0); /* writes the last window */
	for (i = 0; i < n; i++)
		workload_census(python, out_dir, &w[i], &c[i]);
	tmpdir_remove(dir);
}

static void run_python_modes(const char *python, const char *const *modes, size_t n,
			     struct census *c)
{
	run_python_frames(python, modes, n, 1, c);
}

/* Share of a span's samples that must show its function: the required 95%. The misses are
 * samples in the binding's set/clear calls, inside the span but outside its function (0.5-2.5% of a
 * span's samples with the 3-8 ms spans py_spans.py used to draw; it now draws 10-30 ms). (A
 * variant running the three modes at once, three processes under one agent, once saw 89.5% for a
 * thread, cause not found; the modes run one at a time.) */
#define MIN_SHOWN 0.95
/* The same for a thread busy in C code with the GIL released (see check_interpreter). */
#define GIL_MIN_SHOWN 0.75

/* >= MIN_SHOWN of the span's samples show the function, with the workload's file. */
static void assert_span_shows(const struct census *c, const char *function)
{
	const struct census_func *f = census_get(c, function);

	printf("    %-12s span samples %4llu, with the function %4llu, with its file %4llu\n",
	       function, (unsigned long long)f->span_total, (unsigned long long)f->right_span,
	       (unsigned long long)f->right_file);
	assert_true(f->span_total >= 10); /* cpu-clock counts drift under load */
	assert_true(f->right_span >= MIN_SHOWN * f->span_total);
	if (f->want_file)
		assert_true(f->right_file >= 0.99 * f->samples);
}

/* Whether most of a run's samples carry no span at all. That is a span attribution fault, not
 * a frame fault (seen on the loaded 2-CPU VM for about one run in twenty: the hook's spans are
 * missing while the frames are right): the mode runs once more, and the miss stays visible in
 * the output; a second miss fails the test. */
static int spans_missing(const char *python, const char *mode, const struct census *c,
			 const char *f1, const char *f2)
{
	uint64_t in_spans = census_get(c, f1)->span_total + census_get(c, f2)->span_total;

	if (in_spans * 2 >= c->total_samples)
		return 0;
	printf("  RETRY %s %s: only %llu of %llu samples in spans (span attribution, not frames)\n",
	       python, mode, (unsigned long long)in_spans, (unsigned long long)c->total_samples);
	return 1;
}

/* Python called back from C sits above the C code, and that above its Python caller: in
 * parse_order's samples inside builtin sum(), builtin_sum lies between the generator it runs
 * and parse_order. Needs a libpython whose .symtab names builtin_sum (pyenv's builds; Debian's
 * python3.11 is stripped). The old placement (every Python frame above the innermost eval
 * frame) put builtin_sum under parse_order in all of them. */
static void check_nesting(const struct nesting_tally *t)
{
	printf("    parse_order in sum(): %llu samples, sum under parse_order %llu, the generator "
	       "over sum %llu\n",
	       (unsigned long long)t->with_sum, (unsigned long long)t->sum_under_caller,
	       (unsigned long long)t->genexpr_over_sum);
	assert_true(t->with_sum >= 10);
	assert_true(t->sum_under_caller >= 0.95 * t->with_sum); /* measured 100% */
	/* The generator's own share (measured 53-73%); both placements put it over sum. */
	assert_true(t->genexpr_over_sum >= 0.25 * t->with_sum);
}

/* The three modes of SCRIPT, one after the other, each under its own agent (a mode whose spans
 * went missing runs once more): two functions in two spans on one thread; one function per
 * thread; a thread hashing with the GIL released beside a pure-Python one. named_eval: the
 * interpreter's native frames have their static functions' names (check_nesting). */
static void check_interpreter(const char *python, int named_eval)
{
	static const char *const modes[3] = { "spans", "threads", "gil" };
	static const char *const first[3] = { "parse_order", "thread_one", "hash_blob" };
	static const char *const second[3] = { "price_cart", "thread_two", "thread_two" };
	struct nesting_tally nesting;
	struct census c[3];
	struct gil_tally gil;
	int i;

	/* One mode at a time: run at once, three processes under one agent, a CI run saw 11 of
	 * thread_one's 105 span samples without it (3.8, 1 CPU s per thread), never seen alone. */
	for (i = 0; i < 3; i++) {
		run_python_modes(python, &modes[i], 1, &c[i]);
		if (spans_missing(python, modes[i], &c[i], first[i], second[i]))
			run_python_modes(python, &modes[i], 1, &c[i]);
		if (i == 0)
			nesting = last_nesting;
		if (i == 2)
			gil = last_gil;
	}
	if (named_eval)
		check_nesting(&nesting);
	assert_span_shows(&c[0], "parse_order");
	assert_span_shows(&c[0], "price_cart");
	assert_span_shows(&c[1], "thread_one");
	assert_span_shows(&c[1], "thread_two");
	/* Each thread's own stack: never a thread's function under the other thread's span. (A
	 * few samples may show a thread's function with no span: its set/clear calls.) */
	assert_int_equal(c[1].funcs[CROSS_ONE].right_span, 0);
	assert_int_equal(c[1].funcs[CROSS_TWO].right_span, 0);
	assert_span_shows(&c[1], "parse_order");
	assert_span_shows(&c[1], "price_cart");
	/* A thread hashing in C with the GIL released still shows its Python caller, and the C
	 * extension's native frames sit under it. */
	printf("    hash_blob span samples %4llu, with hash_blob %4llu, native code under it %4llu\n",
	       (unsigned long long)gil.span, (unsigned long long)gil.with_caller,
	       (unsigned long long)gil.native_under);
	/* Measured 94-100% on the pyenv builds and 85-100% on Debian's python3.11 under load (CI's
	 * clean root): some samples in libcrypto with the GIL released have no Python frames (the
	 * cause is not found yet; README, "Python functions in the stacks"). Held at 75%. */
	assert_true(gil.span >= 10);
	assert_true(gil.with_caller >= GIL_MIN_SHOWN * gil.span);
	assert_true(gil.native_under >= 0.5 * gil.span);
	assert_span_shows(&c[2], "thread_two");
}

/* Under `make sanitize` the interpreter would load the ASan-built libspanprof.so, which ASan
 * refuses in a process it did not start; `make test` runs these tests. */
static int sanitized_build(void)
{
#if defined(__SANITIZE_ADDRESS__)
	printf("  skip: CPython cannot load the ASan-built hook library (make test runs this)\n");
	return 1;
#else
	return 0;
#endif
}

static void test_debian_python311(void **state)
{
	(void)state;
	if (!agent_proc_can_run() || sanitized_build())
		skip();
	if (access("/usr/bin/python3.11", X_OK)) {
		printf("  skip: no /usr/bin/python3.11\n");
		skip();
	}
	check_interpreter("/usr/bin/python3.11", 0);
}

/* --interpreter-frames=false: two threads in their spans show no Python function at all (native
 * frames only), while their samples still carry their spans. */
static void test_debian_python311_native_only(void **state)
{
	static const char *const modes[1] = { "threads" };
	static const char *const py_funcs[] = { "thread_one", "thread_two", "parse_order",
						"price_cart" };
	struct census c;
	size_t i;

	(void)state;
	if (!agent_proc_can_run() || sanitized_build())
		skip();
	if (access("/usr/bin/python3.11", X_OK)) {
		printf("  skip: no /usr/bin/python3.11\n");
		skip();
	}
	run_python_frames("/usr/bin/python3.11", modes, 1, 0, &c);
	printf("    span samples %llu + %llu of %llu\n",
	       (unsigned long long)census_get(&c, "thread_one")->span_total,
	       (unsigned long long)census_get(&c, "thread_two")->span_total,
	       (unsigned long long)c.total_samples);
	assert_true(census_get(&c, "thread_one")->span_total >= 10);
	assert_true(census_get(&c, "thread_two")->span_total >= 10);
	for (i = 0; i < sizeof(py_funcs) / sizeof(py_funcs[0]); i++)
		assert_int_equal(census_get(&c, py_funcs[i])->samples, 0);
}

static void test_pyenv_pythons(void **state)
{
	const char *root = getenv("PYENV_ROOT") ? getenv("PYENV_ROOT") : "/root/.pyenv";
	char path[512];
	size_t i;
	int found = 0;

	(void)state;
	if (!agent_proc_can_run() || sanitized_build())
		skip();
	for (i = 0; i < sizeof(pyenv_versions) / sizeof(pyenv_versions[0]); i++) {
		snprintf(path, sizeof(path), "%s/versions/%s/bin/python3", root, pyenv_versions[i]);
		if (access(path, X_OK)) {
			printf("  skip: pyenv CPython %s is absent (%s)\n", pyenv_versions[i],
			       path);
			continue;
		}
		found++;
		check_interpreter(path, 1);
	}
	if (!found)
		skip();
}

/* Code at a script's top level runs in CPython's "<module>" frame. */
#define MODULE_SCRIPT "py_module.py"
#define MODULE_CPU_S "1.5"

struct module_tally {
	uint64_t samples, named; /* samples in MODULE_SCRIPT's <module>; with a system name "" */
	char path[600]; /* a profile that holds some */
};

static void tally_module_file(const Perftools__Profiles__Profile *p, const char *path, void *ctx)
{
	const Perftools__Profiles__Function *fn;
	const Perftools__Profiles__Location *loc;
	struct module_tally *t = ctx;
	const char *file;
	size_t i, j;

	for (i = 0; i < p->n_sample; i++)
		for (j = 0; j < p->sample[i]->n_location_id; j++) {
			loc = pprof_location(p, p->sample[i]->location_id[j]);
			fn = loc && loc->n_line ? pprof_function(p, loc->line[0]->function_id) :
						  NULL;
			file = fn ? pprof_str(p, fn->filename) : NULL;
			if (!file || !strstr(file, "/" MODULE_SCRIPT))
				continue;
			t->samples++;
			t->named += !strcmp(pprof_str(p, fn->name) ?: "", "<module>") &&
				    !strcmp(pprof_str(p, fn->system_name) ?: "?", "");
			if (!t->path[0]) /* the first profile that holds some */
				snprintf(t->path, sizeof(t->path), "%s", path);
			break;
		}
}

/* A script burning CPU at its top level, on each CPython given: its samples show the frame
 * "<module>" (file and line), and with no system name beside it, so `go tool pprof`, whose
 * demangler cuts "<...>" out of a name equal to its system name, shows "<module>" too rather
 * than an empty box. One agent watches the processes, all at once. */
static void check_module_frames(const char *const *pythons, size_t n)
{
	const char *agent_argv[16] = { "--output", NULL, "--interval", "1" };
	char out_dir[512], pid_args[4][16], gates[4][600], services[4][64], envs[4][96];
	char seen[64], wout[600], *traces;
	const char *env[2] = { NULL, NULL };
	struct module_tally t;
	struct agent_proc agent;
	char *dir = tmpdir_new("it-pymod");
	size_t i, argc = 4;
	pid_t pids[4];
	double cpu;
	int fd, tries, rc;

	assert_non_null(dir);
	assert_true(n <= 4);
	snprintf(out_dir, sizeof(out_dir), "%s/out", dir);
	agent_argv[1] = out_dir;
	for (i = 0; i < n; i++) {
		const char *argv[] = { pythons[i], build_path("../tests/workloads/" MODULE_SCRIPT),
				       gates[i], MODULE_CPU_S, NULL };

		snprintf(gates[i], sizeof(gates[i]), "%s/go-%zu", dir, i);
		snprintf(services[i], sizeof(services[i]), "it-pymod-%d-%zu", getpid(), i);
		snprintf(envs[i], sizeof(envs[i]), "OTEL_SERVICE_NAME=%s", services[i]);
		snprintf(wout, sizeof(wout), "%s/%zu.out", dir, i);
		env[0] = envs[i];
		pids[i] = workload_start(argv, env, wout);
		assert_true(pids[i] > 0);
		assert_int_equal(workload_wait_exec(pids[i], pythons[i], 30), 0);
		snprintf(pid_args[i], sizeof(pid_args[i]), "%d", (int)pids[i]);
		agent_argv[argc++] = "--pid";
		agent_argv[argc++] = pid_args[i];
	}
	assert_int_equal(agent_proc_start(&agent, dir, agent_argv), 0);
	for (i = 0; i < n; i++) {
		snprintf(seen, sizeof(seen), "pid %d: reading CPython", (int)pids[i]);
		for (tries = 0;
		     tries < SEEN_TIMEOUT_S * 50 && !agent_proc_log_contains(&agent, seen); tries++)
			usleep(20000);
		assert_true(agent_proc_log_contains(&agent, seen));
		fd = open(gates[i], O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
		assert_true(fd >= 0);
		close(fd);
	}
	for (i = 0; i < n; i++)
		assert_int_equal(workload_wait_cpu(pids[i], 90, &cpu), 0);
	assert_int_equal(agent_proc_stop(&agent), 0); /* writes the last window */
	traces = calloc(1, 1 << 20);
	assert_non_null(traces);
	for (i = 0; i < n; i++) {
		memset(&t, 0, sizeof(t));
		each_profile(out_dir, services[i], tally_module_file, &t);
		printf("  %s: %llu samples in %s, %llu of them named <module> with no system "
		       "name\n",
		       pythons[i], (unsigned long long)t.samples, MODULE_SCRIPT,
		       (unsigned long long)t.named);
		/* 1.5 CPU s at 100 Hz: about 150 samples, most of them in the loop. */
		assert_true(t.samples >= 40);
		assert_int_equal(t.named, t.samples);
		rc = pprof_file_go_traces(t.path, traces, 1 << 20);
		if (rc == 1) {
			printf("  go not installed: `go tool pprof` not asked\n");
			continue;
		}
		assert_int_equal(rc, 0);
		if (!strstr(traces, " <module>\n"))
			fail_msg("go tool pprof -traces %s shows no <module>:\n%.2000s", t.path,
				 traces);
	}
	free(traces);
	tmpdir_remove(dir);
}

static void test_module_level_frames_are_named(void **state)
{
	const char *root = getenv("PYENV_ROOT") ? getenv("PYENV_ROOT") : "/root/.pyenv";
	static const char *const versions[] = { "3.8.18", "3.12.1", "3.13.0" };
	char paths[3][512];
	const char *pythons[4];
	size_t i, n = 0;

	(void)state;
	if (!agent_proc_can_run())
		skip();
	if (!access("/usr/bin/python3.11", X_OK))
		pythons[n++] = "/usr/bin/python3.11";
	for (i = 0; i < 3; i++) {
		snprintf(paths[i], sizeof(paths[i]), "%s/versions/%s/bin/python3", root,
			 versions[i]);
		if (!access(paths[i], X_OK))
			pythons[n++] = paths[i];
		else
			printf("  pyenv CPython %s is absent (%s)\n", versions[i], paths[i]);
	}
	if (!n) {
		printf("  skip: no CPython found\n");
		skip();
	}
	check_module_frames(pythons, n);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_debian_python311),
		cmocka_unit_test(test_debian_python311_native_only),
		cmocka_unit_test(test_pyenv_pythons),
		cmocka_unit_test(test_module_level_frames_are_named),
	};

	/* PYTHON_TEST=<name> runs one test. */
	if (getenv("PYTHON_TEST"))
		cmocka_set_test_filter(getenv("PYTHON_TEST"));
	return cmocka_run_group_tests(tests, NULL, NULL);
}
