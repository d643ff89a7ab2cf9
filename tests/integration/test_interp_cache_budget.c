// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The interpreter name caches under a byte budget, with real BPF and a real CPython: a workload
 * calls 400 functions whose line tables are about 9 KB each (3.6 MB of names and tables) in
 * turn, under one agent with --pid and --interp-cache-budget 1MiB. The budget must be hit and
 * counted in /metrics, the interpreters memory part must never pass it, and the samples must
 * still carry the functions' names: more functions are named than the budget can hold at once,
 * and more code objects are read than there are, so evicted ones were read again. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
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
#include "interp/python_symbols.h"
#include "metrics_scrape.h"
#include "pprof_file.h"
#include "text_file.h"
#include "tmpdir.h"

#define PYTHON "/usr/bin/python3.11"
#define SCRIPT "py_many_functions.py"
#define FUNCS 400
#define LINES "1000"
#define CPU_S "4"
#define BUDGET_BYTES (1u << 20)
#define WAIT_S 120

#define PY_CACHE(result) "spanprof_python_code_cache_total{result=\"" result "\"}"
#define INTERP_BYTES "spanprof_memory_bytes{part=\"interpreters\"}"

struct name_tally {
	uint64_t samples; /* all samples of the workload's service */
	uint64_t named; /* ... with a budget_fn_N frame */
	uint64_t placeholders; /* ... with a "[python code ...]" frame */
	unsigned char seen[FUNCS]; /* which budget_fn_N were named */
};

/* The sample's first frame named budget_fn_N (N, or -1) and whether any frame is a placeholder. */
static int budget_fn_of(const Perftools__Profiles__Profile *p, const Perftools__Profiles__Sample *s,
			int *placeholder)
{
	const Perftools__Profiles__Location *loc;
	const Perftools__Profiles__Function *fn;
	const char *name;
	size_t i, j;
	int n = -1;

	for (i = 0; i < s->n_location_id; i++) {
		loc = pprof_location(p, s->location_id[i]);
		for (j = 0; loc && j < loc->n_line; j++) {
			fn = pprof_function(p, loc->line[j]->function_id);
			name = fn ? pprof_str(p, fn->name) : NULL;
			if (!name)
				continue;
			if (!strncmp(name, "[python code", 12))
				*placeholder = 1;
			if (n < 0 && sscanf(name, "budget_fn_%d", &n) != 1)
				n = -1;
		}
	}
	return n < FUNCS ? n : -1;
}

static void tally_file(const Perftools__Profiles__Profile *p, const char *path, void *ctx)
{
	struct name_tally *t = ctx;
	const Perftools__Profiles__Sample *s;
	uint64_t count;
	int n, placeholder;
	size_t i;

	(void)path;
	for (i = 0; i < p->n_sample; i++) {
		s = p->sample[i];
		count = p->period ? (uint64_t)(s->value[0] / p->period) : 1;
		placeholder = 0;
		n = budget_fn_of(p, s, &placeholder);
		t->samples += count;
		t->placeholders += placeholder ? count : 0;
		if (n < 0)
			continue;
		t->named += count;
		t->seen[n] = 1;
	}
}

static double scrape_or_fail(int port, const char *metric)
{
	double v;

	if (metrics_scrape(port, metric, &v))
		fail_msg("no %s at 127.0.0.1:%d/metrics", metric, port);
	return v;
}

/* Polls the workload's output until it holds text. Returns 1, or 0 after timeout_s. */
static int wait_output(const char *path, const char *text, int timeout_s)
{
	struct timespec ts = { 0, 50 * 1000 * 1000 };
	int i;

	for (i = 0; i < timeout_s * 20; i++) {
		if (text_file_lines_with(path, text) > 0)
			return 1;
		nanosleep(&ts, NULL);
	}
	return 0;
}

/* Waits for the agent to write one more window than it had. Returns 1, or 0 after timeout_s. */
static int wait_next_window(const struct agent_proc *a, int timeout_s)
{
	struct timespec ts = { 0, 50 * 1000 * 1000 };
	int before = agent_proc_log_count(a, "window written"), i;

	for (i = 0; i < timeout_s * 20; i++) {
		if (agent_proc_log_count(a, "window written") > before)
			return 1;
		nanosleep(&ts, NULL);
	}
	return 0;
}

/* The CPU seconds the workload measured for its calls ("done cpu=S ..."), or -1. */
static double workload_cpu(const char *path)
{
	char line[256];
	double cpu = -1;
	FILE *f = fopen(path, "r");

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "done cpu=%lf", &cpu) == 1)
			break;
	if (f)
		fclose(f);
	return cpu;
}

static void touch(const char *path)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);

	assert_true(fd >= 0);
	close(fd);
}

static int setup(void **state)
{
	return agent_proc_dir_setup(state, "it-icache");
}

static void test_python_names_within_a_tiny_budget(void **state)
{
	const char *dir = *state;
	char out[600], gate[600], gate_end[600], prof[600], pidbuf[16], service[96], env_svc[128],
		reading[64];
	const char *env[] = { env_svc, NULL };
	const char *wargv[] = {
		PYTHON, build_path("../tests/workloads/" SCRIPT), "400", LINES, CPU_S, gate, NULL
	};
	const char *args[] = { "--output",
			       prof,
			       "--interval",
			       "1",
			       "--frequency",
			       "499",
			       "--metrics-addr",
			       "127.0.0.1:0",
			       "--pid",
			       pidbuf,
			       "--interp-cache-budget",
			       "1MiB",
			       NULL };
	double figure, peak = 0, evictions, misses, refused, cpu;
	struct name_tally t = { 0 };
	struct agent_proc agent;
	long long table;
	size_t i, distinct = 0;
	uint64_t capacity;
	pid_t w;
	int port, polls = 0;

	if (!dir)
		skip();
	if (access(PYTHON, X_OK)) {
		printf("  skip: no %s\n", PYTHON);
		skip();
	}
	snprintf(out, sizeof(out), "%s/workload.out", dir);
	snprintf(gate, sizeof(gate), "%s/go", dir);
	snprintf(gate_end, sizeof(gate_end), "%s/go.end", dir);
	snprintf(prof, sizeof(prof), "%s/out", dir);
	snprintf(service, sizeof(service), "it-icache-%d", (int)getpid());
	snprintf(env_svc, sizeof(env_svc), "OTEL_SERVICE_NAME=%s", service);
	w = workload_start(wargv, env, out);
	assert_true(w > 0);
	assert_true(wait_output(out, "table ", WAIT_S));
	table = text_file_number(out, "table ");
	assert_true(table > 0);
	/* No more budget_fn entries fit at once than this (each holds its fixed part and table). */
	capacity = BUDGET_BYTES / (python_symbols_entry_bytes() + (uint64_t)table);
	printf("  line table %lld bytes: at most %llu of %d functions cached at once\n", table,
	       (unsigned long long)capacity, FUNCS);
	assert_true(capacity * 2 < FUNCS);

	snprintf(pidbuf, sizeof(pidbuf), "%d", (int)w);
	if (agent_proc_start(&agent, dir, args)) {
		kill(w, SIGKILL);
		workload_wait(w, WAIT_S);
		fail_msg("agent did not start");
	}
	snprintf(reading, sizeof(reading), "pid %d: reading CPython", (int)w);
	assert_true(agent_proc_wait_log(&agent, reading, WAIT_S));
	port = metrics_scrape_port(agent.log_path);
	assert_true(port > 0);
	touch(gate);
	/* While it runs, every figure /metrics gives (once a drain) stays within the budget. */
	while (text_file_lines_with(out, "done ") <= 0) {
		figure = scrape_or_fail(port, INTERP_BYTES);
		peak = figure > peak ? figure : peak;
		assert_true(figure <= BUDGET_BYTES);
		assert_true(polls++ < WAIT_S * 5);
		usleep(200 * 1000);
	}
	/* The last samples are resolved at the next window, the workload still alive. */
	assert_true(wait_next_window(&agent, WAIT_S));
	evictions = scrape_or_fail(port, PY_CACHE("eviction"));
	misses = scrape_or_fail(port, PY_CACHE("miss"));
	refused = scrape_or_fail(port, PY_CACHE("refused"));
	figure = scrape_or_fail(port, INTERP_BYTES);
	assert_true(figure <= BUDGET_BYTES);
	assert_int_equal(agent_proc_stop(&agent), 0); /* writes the last window */
	touch(gate_end);
	assert_int_equal(workload_wait(w, WAIT_S), 0);

	assert_true(pprof_file_each(prof, service, NULL, tally_file, &t) > 0);
	for (i = 0; i < FUNCS; i++)
		distinct += t.seen[i];
	cpu = workload_cpu(out);
	printf("  /metrics: interpreters peak %.0f of %u bytes (%d polls), eviction %.0f, miss "
	       "%.0f, refused %.0f\n",
	       peak, BUDGET_BYTES, polls, evictions, misses, refused);
	printf("  workload: %.2f CPU s in its calls, about %.0f samples at 499 Hz\n", cpu,
	       cpu * 499);
	printf("  profiles: %llu samples, %llu named budget_fn_N (%zu distinct), %llu with a "
	       "placeholder\n",
	       (unsigned long long)t.samples, (unsigned long long)t.named, distinct,
	       (unsigned long long)t.placeholders);
	/* The budget was hit and counted, and its figure came near it without passing it. */
	assert_true(evictions > 0);
	assert_true(peak > BUDGET_BYTES / 2);
	/* Names survive eviction: nearly every sample (the workload spends its time in these
	 * functions) is named, more functions than fit at once were named, and there were more
	 * reads than code objects, so evicted ones were read again. */
	assert_true(cpu > 0);
	assert_true(t.samples >= 0.5 * cpu * 499); /* cpu-clock drifts under load, not by half */
	assert_true(t.named >= 0.9 * t.samples);
	assert_true(t.placeholders <= 0.02 * t.samples);
	assert_true(distinct > capacity);
	assert_true(misses > distinct + 10);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_python_names_within_a_tiny_budget),
	};

	return cmocka_run_group_tests_name("interp_cache_budget", tests, setup, tmpdir_teardown);
}
