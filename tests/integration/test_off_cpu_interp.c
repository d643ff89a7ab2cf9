// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* End to end with real BPF and real interpreters: Debian's python3.11, every pyenv CPython 3.8-3.13
 * on the machine and Debian's Ruby 3.1 run one span that waits in two functions of its own
 * (py_waits.py, rb_waits.rb): a 10 ms sleep in wait_for_db, a wait of about 20 ms on an event or
 * condition variable in wait_for_lock. Their off-CPU profiles must hold the span's waiting time
 * under those two functions, as much under each as the workload measured, with the native frames of
 * the wait (libc) under the Python or Ruby frame. All interpreters run at once, each its own
 * service, under one agent watching only them (they mostly wait, so running together costs little
 * CPU).
 *
 * How much: the workload measures its time off the CPU (wall minus thread CPU time) and the part of
 * it the thread was runnable, on a run queue (its schedstat run delay). The profile counts every
 * blocked wait with the run-queue delay after its wake-up, but not the time a runnable thread waits
 * after it was preempted or yielded the CPU (CPU contention, docs/off-cpu.md): so its time, of each
 * function and in all, lies between the blocked time (off-CPU time minus all run delay) and the
 * whole off-CPU time. On an idle machine the two are nearly equal; on a busy one the sched_yield
 * CRuby 3.1 makes before its sleep in wait_for_db alone keeps it runnable for tens of milliseconds
 * a span. */
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
#include "tmpdir.h"

#define ITERATIONS "30"
#define READY_TIMEOUT_S 60
#define MAX_RUNS 8
#define SPAN_NAME "GET /wait"

/* One interpreter process and what its profiles and its own output say. */
struct interp_run {
	char label[48], interpreter[512], service[64], env_service[96], gate[600], out[600];
	int ruby;
	pid_t pid;
	long long measured_db, measured_lock, delay_db, delay_lock;
	/* The span's off-CPU time: all of it, under wait_for_db, under wait_for_lock, and under
	 * either with a libc frame between the kernel and that function. */
	int64_t total, db, lock, native_under;
	int shown, files;
};

static const char *const pyenv_versions[] = { "3.8.18", "3.9.18", "3.10.13",
					      "3.11.7", "3.12.1", "3.13.0" };

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Line index (0: the leaf) of the first frame naming function fn, and of the first frame in
 * libc; -1 when there is none. */
static void depths(const Perftools__Profiles__Profile *p, const Perftools__Profiles__Sample *s,
		   const char *fn, long *fn_depth, long *libc_depth)
{
	const Perftools__Profiles__Location *loc;
	const Perftools__Profiles__Function *f;
	const Perftools__Profiles__Mapping *m;
	const char *file, *name;
	long d = 0;
	size_t i, j;

	*fn_depth = *libc_depth = -1;
	for (i = 0; i < s->n_location_id; i++) {
		loc = pprof_location(p, s->location_id[i]);
		if (!loc)
			continue;
		m = pprof_mapping(p, loc->mapping_id);
		file = m ? pprof_str(p, m->filename) : NULL;
		for (j = 0; j < loc->n_line; j++, d++) {
			f = pprof_function(p, loc->line[j]->function_id);
			name = f ? pprof_str(p, f->name) : NULL;
			if (*fn_depth < 0 && name && !strcmp(name, fn))
				*fn_depth = d;
			if (*libc_depth < 0 && file && strstr(file, "/libc.so"))
				*libc_depth = d;
		}
	}
}

static void count_profile(const Perftools__Profiles__Profile *p, const char *path, void *ctx)
{
	static const char *const fns[2] = { "wait_for_db", "wait_for_lock" };
	struct interp_run *r = ctx;
	const Perftools__Profiles__Sample *s;
	long fn_depth, libc_depth;
	size_t i;
	int k, found;

	(void)path;
	for (i = 0; i < p->n_sample; i++) {
		s = p->sample[i];
		if (strcmp(pprof_sample_label(p, s, "span_name") ?: "", SPAN_NAME))
			continue;
		r->total += s->value[0];
		for (k = 0, found = 0; k < 2 && !found; k++) {
			depths(p, s, fns[k], &fn_depth, &libc_depth);
			if (fn_depth < 0)
				continue;
			found = 1;
			*(k ? &r->lock : &r->db) += s->value[0];
			if (libc_depth >= 0 && libc_depth < fn_depth)
				r->native_under += s->value[0];
		}
		if (!found && r->shown++ < 2) {
			printf("    %s: %.1f ms under neither function:\n", r->label,
			       s->value[0] / 1e6);
			pprof_sample_print(p, s, 40);
		}
	}
}

static void census(struct interp_run *r, const char *dir)
{
	int files = pprof_file_each(dir, r->service, "off_cpu", count_profile, r);

	assert_true(files >= 0);
	r->files += files;
}

/* Reads "off_cpu_ns wait_for_db N" and "... wait_for_lock N", and the run delay of each
 * ("run_delay_ns wait_for_db N", printed before them); 1 once both off-CPU times were printed. */
static int read_measured(struct interp_run *r)
{
	char line[128], fn[32];
	long long v;
	FILE *f = fopen(r->out, "r");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "off_cpu_ns %31s %lld", fn, &v) == 2) {
			if (!strcmp(fn, "wait_for_db"))
				r->measured_db = v;
			else if (!strcmp(fn, "wait_for_lock"))
				r->measured_lock = v;
		} else if (sscanf(line, "run_delay_ns %31s %lld", fn, &v) == 2) {
			if (!strcmp(fn, "wait_for_db"))
				r->delay_db = v;
			else if (!strcmp(fn, "wait_for_lock"))
				r->delay_lock = v;
		}
	}
	fclose(f);
	return r->measured_db > 0 && r->measured_lock > 0;
}

static void touch(const char *path)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);

	assert_true(fd >= 0);
	close(fd);
}

/* Starts the interpreter's workload, held at its gate file until the agent is ready for it. */
static void start(struct interp_run *r, const char *dir, int index)
{
	char env_path[4400], env_lib[4400], env_rb[4400];
	const char *env[] = { r->env_service, env_path, env_lib, env_rb, NULL };
	const char *script =
		r->ruby ? "../tests/workloads/rb_waits.rb" : "../tests/workloads/py_waits.py";
	const char *argv[] = { r->interpreter, build_path(script), r->gate, ITERATIONS, NULL };

	snprintf(r->service, sizeof(r->service), "it-offcpu-interp-%d-%d", getpid(), index);
	snprintf(r->env_service, sizeof(r->env_service), "OTEL_SERVICE_NAME=%s", r->service);
	snprintf(r->gate, sizeof(r->gate), "%s/go-%d", dir, index);
	snprintf(r->out, sizeof(r->out), "%s/workload-%d.out", dir, index);
	snprintf(env_path, sizeof(env_path), "PYTHONPATH=%s", build_path("../hooks/python"));
	snprintf(env_lib, sizeof(env_lib), "SPANPROF_LIBRARY=%s", build_path("libspanprof.so"));
	snprintf(env_rb, sizeof(env_rb), "SPANPROF_RUBY_LIB=%s", build_path("../hooks/ruby/lib"));
	r->pid = workload_start(argv, env, r->out);
	assert_true(r->pid > 0);
	/* The agent must see the interpreter, not the forked test binary, when it scans. */
	assert_int_equal(workload_wait_exec(r->pid, r->interpreter, 10), 0);
}

/* Until the agent attached the hook, reads each process's interpreter frames and has the unwind
 * tables of all its files: waits before then would miss frames. */
static void wait_ready(const struct agent_proc *agent, const struct interp_run *runs, int n)
{
	char hook[4400], text[96];
	double end = now_s() + READY_TIMEOUT_S;
	int i, ready;

	snprintf(hook, sizeof(hook), "span hook attached: %s (pid ", build_path("libspanprof.so"));
	do {
		ready = agent_proc_log_contains(agent, hook);
		for (i = 0; i < n && ready; i++) {
			snprintf(text, sizeof(text), "pid %d: reading %s", (int)runs[i].pid,
				 runs[i].ruby ? "CRuby" : "CPython");
			ready = agent_proc_log_contains(agent, text);
			snprintf(text, sizeof(text), "unwind: pid %d ready", (int)runs[i].pid);
			ready = ready && agent_proc_log_contains(agent, text);
		}
		if (!ready)
			usleep(20000);
	} while (!ready && now_s() < end);
	if (!ready)
		agent_proc_print_log(agent);
	assert_true(ready);
}

/* Runs every workload at once under one agent, to their end; the census of each. */
static void run_all(struct interp_run *runs, int n)
{
	const char *agent_argv[8 + 2 * MAX_RUNS] = { "--output", NULL,		"--interval",
						     "1",	 "--log-level", "debug" };
	char pid_args[MAX_RUNS][16], end_path[700], *dir = tmpdir_new("it-offcpu-interp");
	struct agent_proc agent;
	size_t argc = 6;
	double end;
	int i, windows, done;

	assert_non_null(dir);
	agent_argv[1] = dir;
	for (i = 0; i < n; i++) {
		start(&runs[i], dir, i);
		snprintf(pid_args[i], sizeof(pid_args[i]), "%d", (int)runs[i].pid);
		agent_argv[argc++] = "--pid";
		agent_argv[argc++] = pid_args[i];
	}
	assert_int_equal(agent_proc_start(&agent, dir, agent_argv), 0);
	wait_ready(&agent, runs, n);
	for (i = 0; i < n; i++)
		touch(runs[i].gate);
	end = now_s() + 120;
	do {
		for (i = 0, done = 0; i < n; i++)
			done += read_measured(&runs[i]);
		if (done < n)
			usleep(20000);
	} while (done < n && now_s() < end);
	assert_int_equal(done, n);
	/* Two more windows drained while the processes live name their frames. */
	windows = agent_proc_log_count(&agent, "window written");
	while (agent_proc_log_count(&agent, "window written") < windows + 2 && now_s() < end)
		usleep(20000);
	for (i = 0; i < n; i++) {
		snprintf(end_path, sizeof(end_path), "%s.end", runs[i].gate);
		touch(end_path);
	}
	for (i = 0; i < n; i++)
		assert_int_equal(workload_wait(runs[i].pid, 60), 0);
	assert_int_equal(agent_proc_stop(&agent), 0);
	for (i = 0; i < n; i++)
		census(&runs[i], dir);
	tmpdir_remove(dir);
}

/* 1 when the profile's time of a wait lies between 90% of its blocked time (measured minus run
 * delay) and 110% of its whole measured off-CPU time. */
static int within(int64_t profile, long long measured, long long delay)
{
	return profile >= 0.9 * (double)(measured - delay) && profile <= 1.1 * (double)measured;
}

/* >= 90% of the span's off-CPU time under its two functions, the time of each function and the
 * total between 90% of the blocked time and 110% of the off-CPU time the workload measured, and
 * >= 90% with libc under the function. */
static void check(const struct interp_run *r)
{
	long long measured = r->measured_db + r->measured_lock, delay = r->delay_db + r->delay_lock;
	int64_t under = r->db + r->lock;

	printf("  %s: measured %.1f ms off the CPU (db %.1f, lock %.1f), %.1f of it runnable (db "
	       "%.1f, lock %.1f); profile %.1f ms in %d files (db %.1f, lock %.1f, %.1f%% under the "
	       "two functions), %.1f%% with libc under the function\n",
	       r->label, measured / 1e6, r->measured_db / 1e6, r->measured_lock / 1e6, delay / 1e6,
	       r->delay_db / 1e6, r->delay_lock / 1e6, r->total / 1e6, r->files, r->db / 1e6,
	       r->lock / 1e6, r->total ? 100.0 * under / r->total : 0,
	       under > 0 ? 100.0 * r->native_under / under : 0);
	assert_true(r->files > 0);
	assert_true(under >= 0.9 * r->total);
	assert_true(r->native_under >= 0.9 * under);
	assert_true(r->delay_db >= 0 && r->delay_lock >= 0 && measured > delay);
	assert_true(within(r->db, r->measured_db, r->delay_db));
	assert_true(within(r->lock, r->measured_lock, r->delay_lock));
	assert_true(within(r->total, measured, delay));
}

static int sanitized_build(void)
{
#if defined(__SANITIZE_ADDRESS__)
	printf("  skip: the interpreters cannot load the ASan-built hook library (make test runs "
	       "this)\n");
	return 1;
#else
	return 0;
#endif
}

static int add_run(struct interp_run *runs, int n, const char *label, const char *path, int ruby)
{
	if (access(path, X_OK)) {
		printf("  skip: %s is absent (%s)\n", label, path);
		return n;
	}
	snprintf(runs[n].label, sizeof(runs[n].label), "%s", label);
	snprintf(runs[n].interpreter, sizeof(runs[n].interpreter), "%s", path);
	runs[n].ruby = ruby;
	return n + 1;
}

static void test_interpreter_waits_under_their_functions(void **state)
{
	const char *root = getenv("PYENV_ROOT") ? getenv("PYENV_ROOT") : "/root/.pyenv";
	static struct interp_run runs[MAX_RUNS];
	char path[512], label[48];
	size_t i;
	int n = 0, k;

	(void)state;
	if (!agent_proc_can_run() || sanitized_build())
		skip();
	if (access("/proc/thread-self/schedstat", R_OK)) {
		printf("  skip: no /proc/thread-self/schedstat (a kernel without CONFIG_SCHED_INFO): "
		       "the workloads cannot tell their run-queue time from their waits\n");
		skip();
	}
	memset(runs, 0, sizeof(runs));
	n = add_run(runs, n, "python3.11", "/usr/bin/python3.11", 0);
	for (i = 0; i < sizeof(pyenv_versions) / sizeof(pyenv_versions[0]); i++) {
		snprintf(path, sizeof(path), "%s/versions/%s/bin/python3", root, pyenv_versions[i]);
		snprintf(label, sizeof(label), "pyenv CPython %s", pyenv_versions[i]);
		n = add_run(runs, n, label, path, 0);
	}
	n = add_run(runs, n, "ruby3.1", "/usr/bin/ruby3.1", 1);
	if (!n)
		skip();
	run_all(runs, n);
	for (k = 0; k < n; k++)
		check(&runs[k]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_interpreter_waits_under_their_functions),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
