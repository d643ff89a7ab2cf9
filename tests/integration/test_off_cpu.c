// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* End to end with real BPF: a workload whose span burns 5 ms and then sleeps 20 ms in
 * sleep_in_span(), beside a thread doing the same outside any span. The off-CPU profiles the
 * agent writes must hold the span's sleeping time under sleep_in_span, as much of it as the
 * workload measured itself, and nothing of the thread outside spans. */
#define _GNU_SOURCE
#include <dirent.h>
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
#include "profiled_run.h"
#include "pprof_file.h"
#include "push_receiver.h"
#include "tmpdir.h"

#define SPAN_1 "5a5a000000000001"
#define OFF_CPU_SUFFIX ".off_cpu.pb.gz"

/* What the off-CPU files of one service hold. */
struct off_cpu_census {
	int files, cpu_files, go_checked, go_missing;
	int64_t total_ns; /* every sample's value */
	int64_t sleep_ns; /* ... under sleep_in_span with the span's labels */
	int64_t outside_ns; /* ... under sleep_outside_span or without a span_id */
	char go_error[512];
};

static int ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && !strcmp(s + n - m, suffix);
}

static void count_profile(struct off_cpu_census *c, const Perftools__Profiles__Profile *p)
{
	const char *span;
	size_t i;

	assert_int_equal(p->n_sample_type, 1);
	assert_string_equal(pprof_str(p, p->sample_type[0]->type), "off_cpu");
	assert_string_equal(pprof_str(p, p->sample_type[0]->unit), "nanoseconds");
	for (i = 0; i < p->n_sample; i++) {
		const Perftools__Profiles__Sample *s = p->sample[i];

		c->total_ns += s->value[0];
		span = pprof_sample_label(p, s, "span_id");
		if (!span || pprof_sample_has_function(p, s, "sleep_outside_span"))
			c->outside_ns += s->value[0];
		else if (!strcmp(span, SPAN_1) &&
			 pprof_sample_has_function(p, s, "sleep_in_span") &&
			 !strcmp(pprof_sample_label(p, s, "span_name") ?: "", "GET /sleepy"))
			c->sleep_ns += s->value[0];
	}
}

/* Reads dir/<...>-<service>.off_cpu.pb.gz, and counts the service's CPU profiles beside. */
static void census_off_cpu(struct off_cpu_census *c, const char *dir, const char *service)
{
	char suffix[160], cpu_suffix[160], path[1024];
	Perftools__Profiles__Profile *p;
	struct dirent *de;
	DIR *d = opendir(dir);
	int rc;

	assert_non_null(d);
	snprintf(suffix, sizeof(suffix), "-%s%s", service, OFF_CPU_SUFFIX);
	snprintf(cpu_suffix, sizeof(cpu_suffix), "-%s.pb.gz", service);
	while ((de = readdir(d))) {
		if (ends_with(de->d_name, cpu_suffix))
			c->cpu_files++;
		if (!ends_with(de->d_name, suffix))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		p = pprof_file_read(path);
		assert_non_null(p);
		count_profile(c, p);
		pprof_file_free(p);
		c->files++;
		rc = pprof_file_check_with_go(path, c->go_error, sizeof(c->go_error));
		c->go_missing |= rc == 1;
		c->go_checked += rc == 0;
	}
	closedir(d);
}

/* The workload's own figure: "off_cpu_ns N" in its output. */
static long long read_measured(const char *path)
{
	long long ns = -1;
	char line[128];
	FILE *f = fopen(path, "r");

	assert_non_null(f);
	while (fgets(line, sizeof(line), f))
		sscanf(line, "off_cpu_ns %lld", &ns);
	fclose(f);
	return ns;
}

/* Runs the workload under its own agent (--pid, held before exec until this agent attached its
 * hook), with the extra flags; the agent is stopped once the workload is done (its last window
 * is written on the way out) and before any assertion. Returns the measured ns. */
static long long run(const char *dir, const char *service, const char *const *extra)
{
	char env_service[128], out_path[1024];
	const char *env[] = { env_service, NULL };
	const char *wargv[] = { build_path("tests/workloads/off_cpu_workload"), "60", NULL };
	const char *argv[16] = { "--output", dir, "--interval", "1" };
	struct profiled_run r = { .dir = dir,
				  .agent_args = argv,
				  .workload_argv = wargv,
				  .workload_env = env,
				  .hook_file = build_path("libspanprof.so") };
	size_t n = 4;

	while (*extra)
		argv[n++] = *extra++;
	argv[n] = NULL;
	snprintf(env_service, sizeof(env_service), "OTEL_SERVICE_NAME=%s", service);
	assert_int_equal(profiled_run(&r), 0);
	snprintf(out_path, sizeof(out_path), "%s/workload-%d.out", dir, r.pid);
	return read_measured(out_path);
}

/* Sums off_cpu_ns over the service's span records (<service>.spans.jsonl); *n gets their count. */
static long long span_records_off_cpu(const char *dir, const char *service, int *n)
{
	char path[1024], line[1024];
	long long sum = 0;
	const char *p;
	FILE *f;

	*n = 0;
	snprintf(path, sizeof(path), "%s/%s.spans.jsonl", dir, service);
	f = fopen(path, "r");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		p = strstr(line, "\"off_cpu_ns\":");
		assert_non_null(p);
		sum += atoll(p + strlen("\"off_cpu_ns\":"));
		(*n)++;
	}
	fclose(f);
	return sum;
}

static void test_span_sleep_is_off_cpu_under_its_function(void **state)
{
	const char *extra[] = { NULL };
	struct off_cpu_census c = { 0 };
	char service[64], *dir;
	long long measured, records_ns;
	int records;

	(void)state;
	if (!agent_proc_can_run())
		skip();
	dir = tmpdir_new("it-offcpu");
	assert_non_null(dir);
	snprintf(service, sizeof(service), "it-offcpu-%d", getpid());
	measured = run(dir, service, extra);
	census_off_cpu(&c, dir, service);
	printf("  workload slept %.1f ms in its span; off-CPU profiles (%d files): %.1f ms, "
	       "%.1f ms under sleep_in_span, %.1f ms outside the span\n",
	       measured / 1e6, c.files, c.total_ns / 1e6, c.sleep_ns / 1e6, c.outside_ns / 1e6);
	assert_true(measured > 60 * 20000000LL * 0.9);
	assert_true(c.files > 0 && c.cpu_files > 0);
	assert_int_equal(c.outside_ns, 0);
	assert_true(c.sleep_ns >= 0.9 * c.total_ns);
	assert_true(c.total_ns >= 0.9 * measured && c.total_ns <= 1.1 * measured);
	/* The exact per-span figure counts every wait, the profile those of 1 ms or more: the
	 * span's only waits are its 20 ms sleeps, so both hold the same time. */
	records_ns = span_records_off_cpu(dir, service, &records);
	printf("  %d span records: %.1f ms off the CPU\n", records, records_ns / 1e6);
	assert_int_equal(records, 60);
	assert_true(records_ns >= c.total_ns && records_ns <= 1.02 * c.total_ns);
	if (c.go_missing)
		printf("  note: go not installed, go tool pprof check not run\n");
	else if (c.go_checked != c.files)
		fail_msg("go tool pprof -raw: %s", c.go_error);
	tmpdir_remove(dir);
}

/* Sums, over the pushes of this service labelled __name__=name, every sample's value. */
static int64_t pushed_total(struct push_receiver *r, const char *service, const char *name,
			    int *series)
{
	const struct push_record *rec;
	int64_t total = 0;
	size_t i, s, k;

	for (i = 0; (rec = push_receiver_record(r, i)); i++) {
		if (!rec->req)
			continue;
		for (s = 0; s < rec->req->n_series && s < rec->nprofiles; s++) {
			if (strcmp(push_record_label(rec, s, "__name__") ?: "", name) ||
			    strcmp(push_record_label(rec, s, "service_name") ?: "", service))
				continue;
			assert_non_null(rec->profiles[s]);
			(*series)++;
			for (k = 0; k < rec->profiles[s]->n_sample; k++)
				total += rec->profiles[s]->sample[k]->value[0];
		}
	}
	return total;
}

/* With --server, the off-CPU profile is its own series, __name__=off_cpu, holding what the
 * local files hold; the CPU profile stays __name__=process_cpu. */
static void test_off_cpu_is_pushed_as_its_own_series(void **state)
{
	struct push_receiver *r = push_receiver_new(0);
	const char *extra[] = { "--server", NULL, NULL };
	struct off_cpu_census c = { 0 };
	int off_series = 0, cpu_series = 0;
	char service[64], *dir;
	int64_t pushed;

	(void)state;
	if (!agent_proc_can_run()) {
		push_receiver_free(r);
		skip();
	}
	assert_non_null(r);
	extra[1] = push_receiver_url(r);
	dir = tmpdir_new("it-offcpu-push");
	assert_non_null(dir);
	snprintf(service, sizeof(service), "it-offcpu-push-%d", getpid());
	assert_true(run(dir, service, extra) > 0);
	census_off_cpu(&c, dir, service);
	pushed = pushed_total(r, service, "off_cpu", &off_series);
	pushed_total(r, service, "process_cpu", &cpu_series);
	printf("  %d off_cpu series pushed, %.1f ms (local files: %.1f ms); %d process_cpu series\n",
	       off_series, pushed / 1e6, c.total_ns / 1e6, cpu_series);
	assert_true(off_series > 0 && cpu_series > 0);
	assert_true(c.total_ns > 0);
	assert_int_equal(pushed, c.total_ns);
	push_receiver_free(r);
	tmpdir_remove(dir);
}

static void test_off_cpu_false_writes_no_off_cpu_profile(void **state)
{
	const char *extra[] = { "--off-cpu=false", NULL };
	struct off_cpu_census c = { 0 };
	char service[64], *dir;

	(void)state;
	if (!agent_proc_can_run())
		skip();
	dir = tmpdir_new("it-offcpu-off");
	assert_non_null(dir);
	snprintf(service, sizeof(service), "it-offcpu-off-%d", getpid());
	assert_true(run(dir, service, extra) > 0);
	census_off_cpu(&c, dir, service);
	assert_true(c.cpu_files > 0);
	assert_int_equal(c.files, 0);
	tmpdir_remove(dir);
}

/* --span-stats-max 0 turns span times off (no .spans.jsonl) and keeps the off-CPU profiles,
 * which share the per-thread span state with them. */
static void test_span_stats_max_0_keeps_off_cpu_profiles(void **state)
{
	const char *extra[] = { "--span-stats-max", "0", NULL };
	struct off_cpu_census c = { 0 };
	char service[64], path[1024], *dir;
	long long measured;

	(void)state;
	if (!agent_proc_can_run())
		skip();
	dir = tmpdir_new("it-offcpu-nostats");
	assert_non_null(dir);
	snprintf(service, sizeof(service), "it-offcpu-nostats-%d", getpid());
	measured = run(dir, service, extra);
	census_off_cpu(&c, dir, service);
	printf("  workload slept %.1f ms in its span; off-CPU profiles: %.1f ms\n", measured / 1e6,
	       c.total_ns / 1e6);
	assert_true(c.files > 0);
	assert_true(c.sleep_ns >= 0.9 * c.total_ns);
	assert_true(c.total_ns >= 0.9 * measured && c.total_ns <= 1.1 * measured);
	snprintf(path, sizeof(path), "%s/%s.spans.jsonl", dir, service);
	assert_int_not_equal(access(path, F_OK), 0);
	tmpdir_remove(dir);
}

/* ---- Waits through libc, with and without frame pointers (off_cpu_waits.c) ---- */

#define WAIT_KINDS 5
#define WAIT_ITERATIONS "40"
#define WAIT_READY_TIMEOUT_S 60

static const char *const wait_kinds[WAIT_KINDS] = { "usleep", "pipe", "recv", "cond", "mutex" };

/* Per kind of wait, over the samples of its span ("wait <kind>"): all their time, the time under
 * wait_<kind> (the workload's function that called libc), and the time whose stack reaches the
 * thread's root (start_thread, or main). */
struct wait_census {
	int64_t total[WAIT_KINDS], under[WAIT_KINDS], rooted[WAIT_KINDS];
	int shown[WAIT_KINDS];
	int files;
};

/* 1 when s's stack reaches its thread's root: main or start_thread, or, where libc has no symbol
 * table for start_thread (no libc6-dbg, as on a fresh machine), the workload's thread function
 * `waiter` under an outermost frame in libc. */
static int reaches_root(const Perftools__Profiles__Profile *p, const Perftools__Profiles__Sample *s)
{
	const Perftools__Profiles__Location *loc;
	const Perftools__Profiles__Function *fn;
	const char *outer;

	if (pprof_sample_has_function(p, s, "main") ||
	    pprof_sample_has_function(p, s, "start_thread"))
		return 1;
	if (!s->n_location_id || !pprof_sample_has_function(p, s, "waiter"))
		return 0;
	loc = pprof_location(p, s->location_id[s->n_location_id - 1]);
	if (!loc || !loc->n_line)
		return 0;
	fn = pprof_function(p, loc->line[loc->n_line - 1]->function_id);
	outer = fn ? pprof_str(p, fn->name) : NULL;
	return outer && !strncmp(outer, "[unknown] (libc.so", 18);
}

static void count_waits(const Perftools__Profiles__Profile *p, const char *path, void *ctx)
{
	struct wait_census *c = ctx;
	const Perftools__Profiles__Sample *s;
	char fn_name[32], span_name[32];
	const char *name;
	size_t i;
	int k;

	(void)path;
	for (i = 0; i < p->n_sample; i++) {
		s = p->sample[i];
		name = pprof_sample_label(p, s, "span_name") ?: "";
		for (k = 0; k < WAIT_KINDS; k++) {
			snprintf(span_name, sizeof(span_name), "wait %s", wait_kinds[k]);
			if (!strcmp(name, span_name))
				break;
		}
		if (k == WAIT_KINDS)
			continue;
		snprintf(fn_name, sizeof(fn_name), "wait_%s", wait_kinds[k]);
		c->total[k] += s->value[0];
		if (reaches_root(p, s))
			c->rooted[k] += s->value[0];
		if (pprof_sample_has_function(p, s, fn_name)) {
			c->under[k] += s->value[0];
			continue;
		}
		if (c->shown[k]++ < 2) {
			printf("    %s: %.1f ms without %s:\n", span_name, s->value[0] / 1e6,
			       fn_name);
			pprof_sample_print(p, s, SIZE_MAX);
		}
	}
}

static void census_waits(struct wait_census *c, const char *dir, const char *service)
{
	int files = pprof_file_each(dir, service, "off_cpu", count_waits, c);

	assert_true(files >= 0);
	c->files += files;
}

/* The workload's own figures: "off_cpu_ns <kind> N". */
static void read_measured_waits(const char *path, long long *ns)
{
	char line[128], kind[16];
	long long v;
	FILE *f = fopen(path, "r");
	int k;

	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "off_cpu_ns %15s %lld", kind, &v) != 2)
			continue;
		for (k = 0; k < WAIT_KINDS; k++)
			if (!strcmp(kind, wait_kinds[k]))
				ns[k] = v;
	}
	fclose(f);
}

static double seconds_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Starts the workload (held at its gate file), its own agent (--pid), waits until this agent
 * attached the hook and has the workload's unwind tables (waits before then would be walked
 * by frame pointer), lets it run to its end and stops the agent (the last window is written). */
static void run_waits(const char *workload, const char *dir, const char *service,
		      const char *const *extra, long long *measured)
{
	const char *agent_argv[16] = { "--pid",	     NULL, "--output",	  dir,
				       "--interval", "1",  "--log-level", "debug" };
	char env_service[128], pid_text[16], out_path[600], gate[600], want[1200], real[1024];
	const char *env[] = { env_service, NULL };
	const char *wargv[] = { workload, WAIT_ITERATIONS, gate, NULL };
	struct agent_proc agent;
	double end;
	size_t n = 8;
	int fd, windows;
	pid_t pid;

	while (*extra)
		agent_argv[n++] = *extra++;
	snprintf(env_service, sizeof(env_service), "OTEL_SERVICE_NAME=%s", service);
	snprintf(out_path, sizeof(out_path), "%s/workload.out", dir);
	snprintf(gate, sizeof(gate), "%s/go", dir);
	pid = workload_start(wargv, env, out_path);
	assert_true(pid > 0);
	assert_int_equal(workload_wait_exec(pid, workload, 10), 0);
	snprintf(pid_text, sizeof(pid_text), "%d", (int)pid);
	agent_argv[1] = pid_text;
	assert_int_equal(agent_proc_start(&agent, dir, agent_argv), 0);
	snprintf(want, sizeof(want), "span hook attached: %s (pid %d,",
		 realpath(build_path("libspanprof.so"), real) ?: "?", (int)pid);
	assert_true(agent_proc_wait_log(&agent, want, WAIT_READY_TIMEOUT_S));
	snprintf(want, sizeof(want), "unwind: pid %d ready", (int)pid);
	end = seconds_now() + WAIT_READY_TIMEOUT_S;
	while (!agent_proc_log_contains(&agent, want) && seconds_now() < end)
		usleep(20000);
	assert_true(agent_proc_log_contains(&agent, want));
	fd = open(gate, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	assert_true(fd >= 0);
	close(fd);
	/* Done when it printed its figures; two more windows are then drained while it lives. */
	end = seconds_now() + 120;
	while (!measured[WAIT_KINDS - 1] && seconds_now() < end) {
		usleep(20000);
		read_measured_waits(out_path, measured);
	}
	windows = agent_proc_log_count(&agent, "window written");
	while (agent_proc_log_count(&agent, "window written") < windows + 2 && seconds_now() < end)
		usleep(20000);
	snprintf(gate, sizeof(gate), "%s/go.end", dir);
	fd = open(gate, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(workload_wait(pid, 60), 0);
	assert_int_equal(agent_proc_stop(&agent), 0);
}

/* Each kind of wait: >= 90% of its span's off-CPU time under the function that called libc, on
 * a stack that reaches start_thread, and the total within 10% of what the workload measured. */
static void check_waits(const char *binary, const char *label)
{
	long long measured[WAIT_KINDS] = { 0 };
	struct wait_census c = { 0 };
	const char *extra[] = { NULL };
	char service[64], *dir;
	int k;

	dir = tmpdir_new("it-offcpu-waits");
	assert_non_null(dir);
	snprintf(service, sizeof(service), "it-offcpu-%s-%d", label, getpid());
	run_waits(build_path(binary), dir, service, extra, measured);
	census_waits(&c, dir, service);
	for (k = 0; k < WAIT_KINDS; k++)
		printf("  %s %-6s: measured %.1f ms; profile %.1f ms, %.1f%% under wait_%s, "
		       "%.1f%% reaching the thread's root\n",
		       label, wait_kinds[k], measured[k] / 1e6, c.total[k] / 1e6,
		       c.total[k] ? 100.0 * c.under[k] / c.total[k] : 0, wait_kinds[k],
		       c.total[k] ? 100.0 * c.rooted[k] / c.total[k] : 0);
	assert_true(c.files > 0);
	for (k = 0; k < WAIT_KINDS; k++) {
		assert_true(measured[k] > 40 * 10000000LL * 0.9);
		assert_true(c.under[k] >= 0.9 * c.total[k]);
		assert_true(c.rooted[k] >= 0.9 * c.total[k]);
		assert_true(c.total[k] >= 0.9 * measured[k] && c.total[k] <= 1.1 * measured[k]);
	}
	tmpdir_remove(dir);
}

static void test_waits_through_libc_without_frame_pointers(void **state)
{
	(void)state;
	if (!agent_proc_can_run())
		skip();
	check_waits("tests/workloads/off_cpu_waits_nofp", "nofp");
}

/* What the full stacks fix: walked by frame pointer when the thread blocks
 * (--off-cpu-unwind=fp), the waits of the build without frame pointers lose the function that
 * called libc (libc's wrappers keep none), while the totals stay right. */
static void test_fp_capture_misses_the_caller_of_libc(void **state)
{
	long long measured[WAIT_KINDS] = { 0 };
	const char *extra[] = { "--off-cpu-unwind", "fp", NULL };
	struct wait_census c = { 0 };
	char service[64], *dir;
	int k;

	(void)state;
	if (!agent_proc_can_run())
		skip();
	dir = tmpdir_new("it-offcpu-fpmode");
	assert_non_null(dir);
	snprintf(service, sizeof(service), "it-offcpu-fpmode-%d", getpid());
	run_waits(build_path("tests/workloads/off_cpu_waits_nofp"), dir, service, extra, measured);
	census_waits(&c, dir, service);
	for (k = 0; k < WAIT_KINDS; k++) {
		printf("  fp mode %-6s: profile %.1f ms, %.1f%% under wait_%s\n", wait_kinds[k],
		       c.total[k] / 1e6, c.total[k] ? 100.0 * c.under[k] / c.total[k] : 0,
		       wait_kinds[k]);
		assert_true(c.total[k] >= 0.9 * measured[k] && c.total[k] <= 1.1 * measured[k]);
	}
	/* usleep -> nanosleep -> clock_nanosleep: no frame pointer anywhere on the way. */
	assert_true(c.under[0] < 0.5 * c.total[0]);
	tmpdir_remove(dir);
}

static void test_waits_through_libc_with_frame_pointers(void **state)
{
	(void)state;
	if (!agent_proc_can_run())
		skip();
	check_waits("tests/workloads/off_cpu_waits", "fp");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_span_sleep_is_off_cpu_under_its_function),
		cmocka_unit_test(test_waits_through_libc_without_frame_pointers),
		cmocka_unit_test(test_waits_through_libc_with_frame_pointers),
		cmocka_unit_test(test_fp_capture_misses_the_caller_of_libc),
		cmocka_unit_test(test_off_cpu_is_pushed_as_its_own_series),
		cmocka_unit_test(test_off_cpu_false_writes_no_off_cpu_profile),
		cmocka_unit_test(test_span_stats_max_0_keeps_off_cpu_profiles),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
