// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The agent's memory with real BPF: the figures /metrics gives (spanprof_memory_bytes) agree with
 * what the kernel reports for the agent's process (/proc/PID/status, /proc/PID/fdinfo of its BPF
 * map fds), and maps or budgets made too small are counted while the agent keeps profiling. Each
 * test runs its own agent with --pid on its own workload. */
#define _GNU_SOURCE
#include <dirent.h>
#include <inttypes.h>
#include <limits.h>
#include <setjmp.h>
#include <signal.h>
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
#include "proc_memory.h"
#include "tmpdir.h"

#define WAIT_S 90
#define TRIES 20

static int setup(void **state)
{
	return agent_proc_dir_setup(state, "it-memory");
}

static double scrape_or_fail(int port, const char *metric)
{
	double v;

	if (metrics_scrape(port, metric, &v))
		fail_msg("no %s at 127.0.0.1:%d/metrics", metric, port);
	return v;
}

static const char *const bpf_parts[] = {
	"spanprof_memory_bytes{part=\"bpf_windows\"}",
	"spanprof_memory_bytes{part=\"bpf_unwind\"}",
	"spanprof_memory_bytes{part=\"bpf_spans\"}",
	"spanprof_memory_bytes{part=\"bpf_off_cpu\"}",
	"spanprof_memory_bytes{part=\"bpf_processes\"}",
	"spanprof_memory_bytes{part=\"bpf_other\"}",
};

/* A workload (wargv, NULL-terminated) and an agent with --pid on it, /metrics on a free port and
 * extra (NULL-terminated) options, waited until it wrote its first window. Returns the metrics
 * port. */
static int start_workload_pair(const char *dir, const char *const *wargv, const char *const *extra,
			       pid_t *workload, struct agent_proc *a)
{
	const char *args[32] = { "--output",	   dir,		  "--interval", "1",
				 "--metrics-addr", "127.0.0.1:0", "--pid" };
	char pidbuf[16], out[PATH_MAX];
	int n = 7, i, port;

	snprintf(out, sizeof(out), "%s/workload.out", dir);
	*workload = workload_start(wargv, NULL, out);
	assert_true(*workload > 0);
	assert_int_equal(workload_wait_exec(*workload, wargv[0], WAIT_S), 0);
	snprintf(pidbuf, sizeof(pidbuf), "%d", *workload);
	args[n++] = pidbuf;
	for (i = 0; extra && extra[i] && n < 31; i++)
		args[n++] = extra[i];
	args[n] = NULL;
	if (agent_proc_start(a, dir, args)) {
		kill(*workload, SIGKILL);
		fail_msg("agent did not start");
	}
	if (!agent_proc_wait_log(a, "window written", WAIT_S)) {
		agent_proc_print_log(a);
		fail_msg("no window written within %d s", WAIT_S);
	}
	port = metrics_scrape_port(a->log_path);
	assert_true(port > 0);
	return port;
}

/* The span workload (two threads switching spans) for seconds of CPU each, with its agent. */
static int start_pair(const char *dir, const char *const *extra, pid_t *workload,
		      struct agent_proc *a)
{
	const char *wargv[] = { build_path("tests/workloads/span_workload"), "spans", "2", "60",
				NULL };

	return start_workload_pair(dir, wargv, extra, workload, a);
}

static void stop_pair(pid_t workload, struct agent_proc *a)
{
	kill(workload, SIGKILL);
	workload_wait(workload, WAIT_S);
	assert_int_equal(agent_proc_stop(a), 0);
}

static int within(double got, double want, double ratio)
{
	return got >= want * (1 - ratio) && got <= want * (1 + ratio);
}

/* /metrics says what the kernel says, within 10%: figures are published at each drain, so the
 * test polls (one drain per second) until one scrape and the kernel's view agree, and fails when
 * none does in TRIES drains. total is rss plus the map parts, exactly. */
static void test_memory_metrics_match_proc_status_and_fdinfo(void **state)
{
	double rss, maps, total, heap, symbols, interpreters;
	struct proc_memory k;
	struct agent_proc a;
	pid_t workload;
	int port, i, ok = 0;
	size_t p;

	if (!*state)
		skip();
	port = start_pair(*state, NULL, &workload, &a);
	for (i = 0; i < TRIES && !ok; i++) {
		if (i)
			sleep(1);
		rss = scrape_or_fail(port, "spanprof_memory_bytes{part=\"rss\"}");
		heap = scrape_or_fail(port, "spanprof_memory_bytes{part=\"heap\"}");
		symbols = scrape_or_fail(port, "spanprof_memory_bytes{part=\"symbols\"}");
		interpreters = scrape_or_fail(port, "spanprof_memory_bytes{part=\"interpreters\"}");
		total = scrape_or_fail(port, "spanprof_memory_bytes{part=\"total\"}");
		for (maps = 0, p = 0; p < sizeof(bpf_parts) / sizeof(bpf_parts[0]); p++)
			maps += scrape_or_fail(port, bpf_parts[p]);
		assert_int_equal(proc_memory_read(a.pid, &k), 0);
		assert_true(k.nmaps > 10);
		printf("  /metrics: rss %.0f, maps %.0f, heap %.0f, interpreters %.0f; kernel: rss "
		       "%" PRIu64 ", maps %" PRIu64 " (%u map fds)\n",
		       rss, maps, heap, interpreters, k.rss, k.bpf_maps, k.nmaps);
		if (rss + maps != total)
			continue; /* scraped across a drain: parts of two drains */
#ifndef __SANITIZE_ADDRESS__
		/* (Under ASan its allocator holds the heap, which glibc's mallinfo2 does not see.) */
		assert_true(heap > 0);
		/* the workload's files are open for its symbols, which the heap holds */
		assert_true(symbols > 0 && symbols < heap);
		/* the Python and Ruby caches exist, empty, for a workload that runs neither */
		assert_true(interpreters > 0 && interpreters < heap);
#else
		assert_true(symbols > 0); /* held, though ASan's heap is not in `heap` */
#endif
		ok = within(rss, k.rss, 0.10) && within(maps, k.bpf_maps, 0.10);
	}
	stop_pair(workload, &a);
	assert_true(ok);
}

/* Where each map of the agent belongs, by the kernel's name for it (cut at 15 characters), as
 * docs/memory.md lists them; a map not named here (scratch space, counters, globals) belongs to
 * bpf_other. Written out map by map,
 * not from the agent's own prefixes, so that a map the agent counts in the wrong group fails. */
static const struct {
	const char *map, *part;
} map_parts[] = {
	{ "sample_counts_0", "bpf_windows" }, { "sample_counts_1", "bpf_windows" },
	{ "stacks_0", "bpf_windows" },	      { "stacks_1", "bpf_windows" },
	{ "interp_stacks_0", "bpf_windows" }, { "interp_stacks_1", "bpf_windows" },
	{ "unwind_chunks", "bpf_unwind" },    { "unwind_procs", "bpf_unwind" },
	{ "unwind_tables", "bpf_unwind" },    { "unwind_rules", "bpf_unwind" },
	{ "thread_spans", "bpf_spans" },      { "goroutine_spans", "bpf_spans" },
	{ "span_names", "bpf_spans" },	      { "span_ends", "bpf_spans" },
	{ "span_tasks", "bpf_spans" },	      { "span_areas", "bpf_spans" },
	{ "tctx_waits", "bpf_spans" },	      { "user_budgets", "bpf_spans" },
	{ "obi_traces", "bpf_spans" },	      { "off_cpu_counts_", "bpf_off_cpu" },
	{ "off_cpu_stacks_", "bpf_off_cpu" }, { "off_cpu_interp_", "bpf_off_cpu" },
	{ "off_cpu_fp_stac", "bpf_off_cpu" }, { "proc_events", "bpf_processes" },
	{ "pending_scans", "bpf_processes" }, { "go_pids", "bpf_processes" },
	{ "py_procs", "bpf_processes" },      { "rb_procs", "bpf_processes" },
	{ "target_pids", "bpf_processes" },   { "tctx_procs", "bpf_processes" },
};

#define NPARTS (sizeof(bpf_parts) / sizeof(bpf_parts[0]))
#define MAX_MAPS 128

/* Index in bpf_parts of the group a map belongs to. */
static size_t part_of(const char *map)
{
	const char *part = "bpf_other";
	char label[64];
	size_t i;

	for (i = 0; i < sizeof(map_parts) / sizeof(map_parts[0]); i++)
		if (!strcmp(map, map_parts[i].map))
			part = map_parts[i].part;
	snprintf(label, sizeof(label), "spanprof_memory_bytes{part=\"%s\"}", part);
	for (i = 0; i < NPARTS; i++)
		if (!strcmp(label, bpf_parts[i]))
			return i;
	fail_msg("no part %s", part);
	return 0;
}

/* The agent's maps read from outside, summed by group into sum[NPARTS]; the map ids of each
 * group are summed into ids[NPARTS] too, so that a map replaced by another shows. */
static void read_groups(pid_t pid, uint64_t *sum, uint64_t *ids)
{
	struct proc_bpf_map maps[MAX_MAPS];
	int n, i;
	size_t p;

	n = proc_memory_maps(pid, maps, MAX_MAPS);
	assert_true(n > 10 && n <= MAX_MAPS);
	memset(sum, 0, NPARTS * sizeof(*sum));
	memset(ids, 0, NPARTS * sizeof(*ids));
	for (i = 0; i < n; i++) {
		p = part_of(maps[i].name);
		sum[p] += maps[i].memlock;
		ids[p] += maps[i].id;
	}
}

/* Each map group's figure is the sum of its maps' memlock, the maps found by name in the agent's
 * fdinfo. The kernel's figures are read before and after a drain publishes the agent's: a group
 * whose maps did not change between the two reads must match exactly (so that even a small map
 * counted in another group fails), one that changed must lie within 10% of the two reads. Polls
 * until one drain passes for every group; fails when none does in TRIES drains. */
static void test_each_map_group_matches_its_maps_by_name(void **state)
{
	uint64_t before[NPARTS], after[NPARTS], ids_before[NPARTS], ids_after[NPARTS], lo, hi;
	double got[NPARTS], w0, w;
	struct agent_proc a;
	int port, i, j, ok = 0, stable;
	pid_t workload;
	size_t p;

	if (!*state)
		skip();
	port = start_pair(*state, NULL, &workload, &a);
	for (i = 0; i < TRIES && !ok; i++) {
		read_groups(a.pid, before, ids_before);
		/* Two windows later the figures come from a drain that began after that read. */
		w0 = scrape_or_fail(port, "spanprof_windows_written_total");
		for (j = 0, w = w0; j < 4 * WAIT_S && w < w0 + 2; j++) {
			usleep(250 * 1000);
			w = scrape_or_fail(port, "spanprof_windows_written_total");
		}
		assert_true(w >= w0 + 2);
		for (p = 0; p < NPARTS; p++)
			got[p] = scrape_or_fail(port, bpf_parts[p]);
		read_groups(a.pid, after, ids_after);
		for (ok = 1, stable = 0, p = 0; p < NPARTS; p++) {
			int exact = before[p] == after[p] && ids_before[p] == ids_after[p], good;

			lo = before[p] < after[p] ? before[p] : after[p];
			hi = before[p] < after[p] ? after[p] : before[p];
			if (exact)
				good = got[p] == (double)before[p];
			else
				good = got[p] >= 0.9 * (double)lo && got[p] <= 1.1 * (double)hi;
			stable += exact;
			ok &= good;
			printf("  %s: /metrics %.0f, fdinfo %" PRIu64 " .. %" PRIu64 "%s%s\n",
			       bpf_parts[p], got[p], before[p], after[p],
			       exact ? " (held still: exact)" : "", good ? "" : " DIFFERS");
		}
		/* A drain where no group held still checks nothing exactly: try the next. */
		ok &= stable > 0;
	}
	stop_pair(workload, &a);
	assert_true(ok);
}

/* Window maps of 8 entries overflow at once (every span switch makes a new sample key, and the
 * two threads' stacks are more than 8): the lost samples and the stacks that found the stack map
 * full are counted, and windows go on being written with samples. */
static void test_full_window_maps_are_counted_and_profiling_goes_on(void **state)
{
	const char *extra[] = { "--sample-map-entries", "8", "--stack-map-entries", "8", NULL };
	double full = 0, stacks = 0, samples = 0, before;
	struct agent_proc a;
	pid_t workload;
	int port, i;

	if (!*state)
		skip();
	port = start_pair(*state, extra, &workload, &a);
	before = scrape_or_fail(port, "spanprof_samples_total");
	for (i = 0; i < TRIES && (full == 0 || stacks == 0 || samples <= before); i++) {
		sleep(1);
		full = scrape_or_fail(port,
				      "spanprof_samples_dropped_total{reason=\"counts_map_full\"}");
		stacks = scrape_or_fail(
				 port,
				 "spanprof_samples_dropped_total{reason=\"user_stack_lost\"}") +
			 scrape_or_fail(
				 port,
				 "spanprof_samples_dropped_total{reason=\"kernel_stack_lost\"}");
		samples = scrape_or_fail(port, "spanprof_samples_total");
	}
	printf("  samples kept %.0f (%.0f at the first window), lost to the full map %.0f, stacks "
	       "lost to the full stack map %.0f\n",
	       samples, before, full, stacks);
	stop_pair(workload, &a);
	assert_true(full > 0);
	assert_true(stacks > 0);
	assert_true(samples > before);
}

/* Off-CPU maps of 2 keys cannot hold the waits of five threads each in its own span: the waits
 * that found the count map full are counted, while other waits are still counted in the
 * profile. */
static void test_full_off_cpu_map_is_counted_and_profiling_goes_on(void **state)
{
	const char *wargv[] = { build_path("tests/workloads/off_cpu_waits"), "100000", NULL };
	const char *extra[] = { "--off-cpu-map-entries", "2", NULL };
	double full = 0, counted = 0, before;
	struct agent_proc a;
	pid_t workload;
	int port, i;

	if (!*state)
		skip();
	port = start_workload_pair(*state, wargv, extra, &workload, &a);
	before = scrape_or_fail(port, "spanprof_off_cpu_periods_total{result=\"counted\"}");
	for (i = 0; i < TRIES && (full == 0 || counted <= before); i++) {
		sleep(1);
		full = scrape_or_fail(
			port, "spanprof_samples_dropped_total{reason=\"off_cpu_map_full\"}");
		counted =
			scrape_or_fail(port, "spanprof_off_cpu_periods_total{result=\"counted\"}");
	}
	printf("  waits counted %.0f (%.0f at the first window), lost to the full map %.0f\n",
	       counted, before, full);
	stop_pair(workload, &a);
	assert_true(full > 0);
	assert_true(counted > before);
}

/* The max_entries the kernel reports for the agent's map named name, or 0. */
static uint32_t map_max_entries(pid_t pid, const char *name)
{
	struct proc_bpf_map maps[MAX_MAPS];
	int n, i;

	n = proc_memory_maps(pid, maps, MAX_MAPS);
	for (i = 0; i < n && i < MAX_MAPS; i++)
		if (!strcmp(maps[i].name, name))
			return maps[i].max_entries;
	return 0;
}

/* A span name map of 16 names cannot hold a workload's 256 names set in turn: the least recent
 * are forgotten, and the samples whose name was forgotten before the drain read it are counted
 * (span_name_lost), while samples go on being profiled. */
static void test_full_span_name_map_is_counted_and_profiling_goes_on(void **state)
{
	const char *wargv[] = { build_path("tests/workloads/span_workload"), "names", "2", "60",
				NULL };
	const char *extra[] = { "--span-name-entries", "16", NULL };
	double lost = 0, samples = 0, before;
	struct agent_proc a;
	uint32_t size;
	pid_t workload;
	int port, i;

	if (!*state)
		skip();
	port = start_workload_pair(*state, wargv, extra, &workload, &a);
	size = map_max_entries(a.pid, "span_names");
	before = scrape_or_fail(port, "spanprof_samples_total");
	for (i = 0; i < TRIES && (lost == 0 || samples <= before); i++) {
		sleep(1);
		lost = scrape_or_fail(port,
				      "spanprof_samples_dropped_total{reason=\"span_name_lost\"}");
		samples = scrape_or_fail(port, "spanprof_samples_total");
	}
	printf("  span_names holds %u; samples %.0f (%.0f at the first window), names lost %.0f\n",
	       size, samples, before, lost);
	stop_pair(workload, &a);
	assert_int_equal(size, 16);
	assert_true(lost > 0);
	assert_true(samples > before);
}

/* A pending_scans map of one entry cannot mark the rescan requests of three processes that map
 * executable memory all the time: the requests that found it full are counted (and sent
 * unmarked), while the three go on being sampled. */
static void test_full_pending_scans_map_is_counted_and_profiling_goes_on(void **state)
{
	const char *wargv[] = { build_path("tests/workloads/code_mapper"), "60", NULL };
	const char *args[16] = { "--output",
				 *state,
				 "--interval",
				 "1",
				 "--metrics-addr",
				 "127.0.0.1:0",
				 "--pending-scan-entries",
				 "1" };
	double full = 0, samples = 0, before;
	char pids[3][16], out[PATH_MAX];
	pid_t workload[3];
	struct agent_proc a;
	int port, i, n = 8, logged;
	uint32_t size;

	if (!*state)
		skip();
	for (i = 0; i < 3; i++) {
		snprintf(out, sizeof(out), "%s/workload%d.out", (const char *)*state, i);
		workload[i] = workload_start(wargv, NULL, out);
		assert_true(workload[i] > 0);
		assert_int_equal(workload_wait_exec(workload[i], wargv[0], WAIT_S), 0);
		snprintf(pids[i], sizeof(pids[i]), "%d", workload[i]);
		args[n++] = "--pid";
		args[n++] = pids[i];
	}
	args[n] = NULL;
	if (agent_proc_start(&a, *state, args)) {
		for (i = 0; i < 3; i++)
			kill(workload[i], SIGKILL);
		fail_msg("agent did not start");
	}
	if (!agent_proc_wait_log(&a, "window written", WAIT_S)) {
		agent_proc_print_log(&a);
		fail_msg("no window written within %d s", WAIT_S);
	}
	port = metrics_scrape_port(a.log_path);
	assert_true(port > 0);
	size = map_max_entries(a.pid, "pending_scans");
	full = scrape_or_fail(port, "spanprof_bpf_map_full_total{map=\"pending_scans\"}");
	before = scrape_or_fail(port, "spanprof_samples_total");
	for (i = 0; i < TRIES && (full == 0 || samples <= before); i++) {
		sleep(1);
		full = scrape_or_fail(port, "spanprof_bpf_map_full_total{map=\"pending_scans\"}");
		samples = scrape_or_fail(port, "spanprof_samples_total");
	}
	printf("  pending_scans holds %u; requests sent unmarked %.0f; samples %.0f (%.0f at the "
	       "first window)\n",
	       size, full, samples, before);
	for (i = 0; i < 3; i++) {
		kill(workload[i], SIGKILL);
		workload_wait(workload[i], WAIT_S);
	}
	logged = full > 0 && agent_proc_wait_log(&a, "pending_scans is full", WAIT_S);
	assert_int_equal(agent_proc_stop(&a), 0);
	assert_true(logged);
	assert_int_equal(size, 1);
	assert_true(full > 0);
	assert_true(samples > before);
}

/* An unwind budget of two 32 KiB chunks cannot hold the workload's libraries: tables are refused
 * or evicted, both counted; the chunk memory stays within the budget and samples keep coming. */
static void test_unwind_budget_hit_is_counted_and_profiling_goes_on(void **state)
{
	const char *extra[] = { "--unwind-table-bytes", "64KiB", NULL };
	double refused = 0, evicted = 0, used, samples, before;
	struct agent_proc a;
	pid_t workload;
	int port, i;

	if (!*state)
		skip();
	port = start_pair(*state, extra, &workload, &a);
	before = scrape_or_fail(port, "spanprof_samples_total");
	for (i = 0; i < TRIES && refused + evicted == 0; i++) {
		sleep(1);
		refused = scrape_or_fail(port, "spanprof_unwind_files{state=\"failed\"}");
		evicted = scrape_or_fail(port, "spanprof_unwind_table_evictions_total");
	}
	used = scrape_or_fail(port, "spanprof_unwind_table_bytes{kind=\"used\"}");
	for (i = 0; i < TRIES; i++) {
		samples = scrape_or_fail(port, "spanprof_samples_total");
		if (samples > before)
			break;
		sleep(1);
	}
	printf("  tables refused %.0f, evicted %.0f; rows held %.0f bytes; samples %.0f\n", refused,
	       evicted, used, samples);
	stop_pair(workload, &a);
	assert_true(refused + evicted > 0);
	assert_true(used <= 64 * 1024);
	assert_true(samples > before);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_memory_metrics_match_proc_status_and_fdinfo,
						setup, tmpdir_teardown),
		cmocka_unit_test_setup_teardown(test_each_map_group_matches_its_maps_by_name, setup,
						tmpdir_teardown),
		cmocka_unit_test_setup_teardown(
			test_full_window_maps_are_counted_and_profiling_goes_on, setup,
			tmpdir_teardown),
		cmocka_unit_test_setup_teardown(
			test_full_off_cpu_map_is_counted_and_profiling_goes_on, setup,
			tmpdir_teardown),
		cmocka_unit_test_setup_teardown(
			test_full_span_name_map_is_counted_and_profiling_goes_on, setup,
			tmpdir_teardown),
		cmocka_unit_test_setup_teardown(
			test_full_pending_scans_map_is_counted_and_profiling_goes_on, setup,
			tmpdir_teardown),
		cmocka_unit_test_setup_teardown(
			test_unwind_budget_hit_is_counted_and_profiling_goes_on, setup,
			tmpdir_teardown),
	};

	return cmocka_run_group_tests_name("agent_memory", tests, NULL, NULL);
}
