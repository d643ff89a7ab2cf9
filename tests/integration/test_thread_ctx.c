// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* End to end with real BPF: spans published by other tracers. A writer made from the OTEPs
 * alone (tests/fixtures/tctx_writer.c) publishes OpenTelemetry thread context from a dlopen()ed
 * library with TLS descriptors, from a linked library built for initial-exec access and from an
 * executable with static TLS; samples in each span's function must carry its record's span (or
 * the local root the record names), none outside, the service named by the process context, a
 * configured attribute as a label. Hostile records must label nothing wrongly and crash
 * nothing, and be counted in /metrics. OBI's map, pinned by the test as OBI pins it, must label
 * a thread with no other span. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <bpf/bpf.h>

#include "agent_proc.h"
#include "fixture_build.h"
#include "held_fork.h"
#include "hostile_fixture.h"
#include "metrics_scrape.h"
#include "parser_bombs.h"
#include "pprof_file.h"
#include "profile_census.h"
#include "profile_windows.h"
#include "profiled_run.h"
#include "unpriv_user.h"
#include "tmpdir.h"

/* The ids tctx_workload puts in its records (ids(): span bytes tag, tag + 1, ...). */
#define ALPHA_ROOT "00000000000000aa"
#define ALPHA_SPAN "1011121314151617"
#define BETA_SPAN "2021222324252627"
#define CUT_SPAN "4041424344454647"
#define UNKNOWN_SPAN "5051525354555657"
#define HUGE_SPAN "6061626364656667"
#define OBI_SPAN "7071727374757677"
#define WAIT_SPAN "8081828384858687"
#define BIG_SPAN "9091929394959697"
#define HOOK_SPAN "5a5a000000000042"
#define WAIT_TCTX "reading OpenTelemetry thread context of pid %d:"
#define WAIT_OBI "reading OBI's trace context map"

static int setup(void **state)
{
	return agent_proc_dir_setup(state, "it-tctx");
}

/* Label values seen on the samples whose stack holds a function. */
struct label_count {
	const char *function, *key, *want;
	uint64_t samples, right, other; /* other: a value that is not want (none: neither) */
};

struct label_counts {
	struct label_count *lc;
	int n;
};

static void count_file_labels(const Perftools__Profiles__Profile *p, const char *path, void *ctx)
{
	struct label_counts *c = ctx;
	struct label_count *lc = c->lc;
	size_t i;
	int k;

	(void)path;
	for (i = 0; i < p->n_sample; i++) {
		const Perftools__Profiles__Sample *s = p->sample[i];
		int64_t v = s->n_value ? s->value[0] : 0;
		uint64_t cnt = v > 0 ? 1 : 0;

		for (k = 0; k < c->n; k++) {
			const char *val;

			if (!pprof_sample_has_function(p, s, lc[k].function))
				continue;
			val = pprof_sample_label(p, s, lc[k].key);
			lc[k].samples += cnt;
			if (lc[k].want ? val && !strcmp(val, lc[k].want) : !val)
				lc[k].right += cnt;
			else if (val)
				lc[k].other += cnt;
		}
	}
}

static void count_labels(const char *dir, const char *service, struct label_count *lc, int n)
{
	struct label_counts c = { lc, n };

	assert_true(pprof_file_each(dir, service, NULL, count_file_labels, &c) >= 0);
}

static void run_env(const char *dir, const char *const *argv, const char *const *extra,
		    const char *const *env, const char *wait, struct profiled_run *r)
{
	const char *args[16] = { "--output", dir, "--interval", "1" };
	int n = 4;

	while (extra && *extra && n < 15)
		args[n++] = *extra++;
	args[n] = NULL;
	*r = (struct profiled_run){ .dir = dir,
				    .agent_args = args,
				    .workload_argv = argv,
				    .workload_env = env,
				    .wait_log = wait };
	assert_int_equal(profiled_run(r), 0);
	printf("  the agent was ready %.3f s after exec; the workload used %.2f CPU s\n",
	       r->attach_s, r->cpu_s);
}

static void assert_mostly(const struct census_func *f, double min_ratio)
{
	assert_non_null(f);
	printf("  %-24s %6llu samples, %6llu with the right span label\n", f->name,
	       (unsigned long long)f->samples, (unsigned long long)f->right_span);
	assert_true(f->samples >= PROFILED_MIN_SAMPLES);
	assert_true(f->right_span >= min_ratio * f->samples);
}

/* The two-thread run: alpha's record names a local root, beta's does not. */
static void check_normal(const char *dir, const char *scope_all)
{
	struct label_count lc[] = {
		{ "tctx_work_alpha", "http_route", "/alpha", 0, 0, 0 },
		{ "tctx_work_beta", "http_route", "/beta", 0, 0, 0 },
		{ "tctx_work_outside", "http_route", NULL, 0, 0, 0 },
		{ "tctx_work_alpha", "span_name", "alpha-span", 0, 0, 0 },
	};
	struct census c = { 0 };
	int i;

	census_watch(&c, "tctx_work_alpha", scope_all ? ALPHA_SPAN : ALPHA_ROOT);
	census_watch(&c, "tctx_work_beta", BETA_SPAN);
	census_watch(&c, "tctx_work_outside", NULL);
	/* The service comes from the process context: files are named after it. */
	assert_true(census_read(&c, dir, "tctx-svc") > 0);
	assert_mostly(census_get(&c, "tctx_work_alpha"), 0.99);
	assert_mostly(census_get(&c, "tctx_work_beta"), 0.99);
	assert_mostly(census_get(&c, "tctx_work_outside"), 1.0);
	assert_true(census_get(&c, "tctx_work_alpha")->with_trace >=
		    0.99 * census_get(&c, "tctx_work_alpha")->samples);
	count_labels(dir, "tctx-svc", lc, 4);
	for (i = 0; i < 4; i++) {
		printf("  %-18s %-10s %6llu samples, %6llu right, %llu other\n", lc[i].function,
		       lc[i].key, (unsigned long long)lc[i].samples,
		       (unsigned long long)lc[i].right, (unsigned long long)lc[i].other);
		assert_true(lc[i].samples >= PROFILED_MIN_SAMPLES);
		assert_true(lc[i].right >= 0.99 * lc[i].samples);
		assert_int_equal(lc[i].other, 0);
	}
}

/* Without the static TLS surplus a dlopen()ed block takes: its block goes through the dtv. */
static const char *const no_tls_surplus[] = { "GLIBC_TUNABLES=glibc.rtld.optional_static_tls=0",
					      NULL };

/* The normal run of the workload exe for seconds, its writer linked in (mode "static") or the
 * library lib dlopen()ed (mode "dl"), env added, under an agent that reads http.route (and,
 * with scope_all, labels every span with its own id): the agent logged log_has (unless NULL),
 * and check_normal() holds. */
static void run_normal(const char *dir, const char *exe, const char *mode, const char *lib,
		       const char *seconds, const char *const *env, const char *scope_all,
		       const char *log_has)
{
	const char *argv[] = { exe, mode, lib ? lib : "-", "normal", seconds, NULL };
	const char *extra[] = { "--thread-ctx-labels", "http.route",
				scope_all ? "--span-scope" : NULL, scope_all, NULL };
	struct profiled_run r;

	run_env(dir, argv, extra, env, WAIT_TCTX, &r);
	if (log_has)
		assert_true(agent_proc_log_contains(&r.agent, log_has));
	check_normal(dir, scope_all);
}

static void test_dlopened_tlsdesc_writer_labels_samples(void **state)
{
	if (!*state)
		skip();
	run_normal(*state, build_path("tests/workloads/tctx_workload"), "dl",
		   build_path("tests/workloads/libtctx_writer.so"), "3", NULL, NULL, NULL);
}

/* glibc places a small dlopen()ed TLS block in its static surplus when it can (the descriptor
 * then holds an offset from the thread pointer); with no surplus for it the block is allocated
 * per thread and found through the dtv. */
static void test_dynamic_tls_block_is_found_through_the_dtv(void **state)
{
	if (!*state)
		skip();
	run_normal(*state, build_path("tests/workloads/tctx_workload"), "dl",
		   build_path("tests/workloads/libtctx_writer.so"), "3", no_tls_surplus, NULL,
		   "dynamic TLS");
}

/* A thread with a span from spanprof's hook and a record: the hook's span wins; a thread with a
 * record only keeps the record's. */
static void test_hook_span_wins_over_the_record(void **state)
{
	const char *dir = *state;
	char hook[4096];
	const char *argv[] = { build_path("tests/workloads/tctx_workload"),
			       "dl",
			       build_path("tests/workloads/libtctx_writer.so"),
			       "both",
			       "3",
			       hook,
			       NULL };
	const char *args[] = { "--output", dir, "--interval", "1", "--span-scope", "all", NULL };
	struct census c = { 0 };
	struct profiled_run r;

	if (!dir)
		skip();
	snprintf(hook, sizeof(hook), "%s", build_path("libspanprof.so"));
	/* Both the record's reader and the hook's uprobe are in place before the workload runs. */
	r = (struct profiled_run){ .dir = dir,
				   .agent_args = args,
				   .workload_argv = argv,
				   .wait_log = WAIT_TCTX,
				   .hook_file = hook,
				   .wait_hook_too = 1 };
	assert_int_equal(profiled_run(&r), 0);
	assert_true(agent_proc_log_contains(&r.agent, "span hook attached"));
	census_watch(&c, "tctx_work_alpha", HOOK_SPAN);
	census_watch(&c, "tctx_work_beta", BETA_SPAN);
	census_watch(&c, "tctx_work_outside", NULL);
	assert_true(census_read(&c, dir, "tctx-svc") > 0);
	assert_mostly(census_get(&c, "tctx_work_alpha"), 0.99);
	assert_mostly(census_get(&c, "tctx_work_beta"), 0.99);
	assert_mostly(census_get(&c, "tctx_work_outside"), 1.0);
	assert_string_equal(census_get(&c, "tctx_work_alpha")->seen_span_name, "hook-span");
}

/* General-dynamic access (no TLS descriptors): the module id and offset come from the
 * DTPMOD64/DTPOFF64 GOT slots; the block is forced out of the static surplus. */
static void test_general_dynamic_writer_is_found_through_the_dtv(void **state)
{
	if (!*state)
		skip();
	run_normal(*state, build_path("tests/workloads/tctx_workload"), "dl",
		   build_path("tests/workloads/libtctx_writer_gd.so"), "3", no_tls_surplus, NULL,
		   "dynamic TLS");
}

/* A musl build of path, or NULL after printing why the test skips (musl-gcc, from musl-tools,
 * is missing). */
static const char *musl_built(const char *rel)
{
	const char *path = build_path(rel);

	if (!access(path, F_OK))
		return path;
	printf("  %s not built (musl-gcc, from musl-tools, is missing): skipped\n", path);
	return NULL;
}

/* musl: a dlopen()ed block is always dynamic, and its dtv entries are 8 bytes. */
static void test_musl_dynamic_tls_is_found_through_its_dtv(void **state)
{
	const char *exe = musl_built("tests/workloads/musl/tctx_workload");

	if (!*state || !exe)
		skip();
	/* Twice the others' CPU: samples inside musl's clock_gettime, which has no unwind
	 * tables, do not reach the span's function, so fewer samples count. */
	run_normal(*state, exe, "dl", build_path("tests/workloads/musl/libtctx_writer.so"), "6",
		   NULL, NULL, "dynamic TLS");
}

static void test_static_tls_writer_labels_samples(void **state)
{
	if (!*state)
		skip();
	run_normal(*state, build_path("tests/workloads/tctx_workload_static"), "static", NULL, "3",
		   NULL, "all", "static TLS");
}

/* A drop reason's count in /metrics once the agent read its kernel counters after the workload
 * ended: two windows written after the workload's exit mean a whole drain (which publishes the
 * counters) began after it. Returns -1 when it could not be read. */
static double final_drops(int port, const char *reason)
{
	char metric[160];
	double w0 = -1, w = -1, v = -1;
	int i;

	if (port <= 0 || metrics_scrape(port, "spanprof_windows_written_total", &w0))
		return -1;
	for (i = 0;
	     i < 300 && (metrics_scrape(port, "spanprof_windows_written_total", &w) || w < w0 + 2);
	     i++)
		usleep(100000);
	snprintf(metric, sizeof(metric), "spanprof_samples_dropped_total{reason=\"%s\"}", reason);
	if (w < w0 + 2 || metrics_scrape(port, metric, &v))
		return -1;
	return v;
}

/* Runs tctx_workload's mode for 2 s, its writer dlopen()ed, under an agent that reads keys,
 * labels every span with its own id and serves /metrics; reads the final count of each of the n
 * drop reasons into drops, then stops the agent. */
static void run_counting_drops(const char *dir, const char *mode, const char *keys,
			       const char *const *reasons, double *drops, int n)
{
	const char *argv[] = { build_path("tests/workloads/tctx_workload"),
			       "dl",
			       build_path("tests/workloads/libtctx_writer.so"),
			       mode,
			       "2",
			       NULL };
	const char *args[] = { "--output",
			       dir,
			       "--interval",
			       "1",
			       "--thread-ctx-labels",
			       keys,
			       "--span-scope",
			       "all",
			       "--metrics-addr",
			       "127.0.0.1:0",
			       NULL };
	struct profiled_run r = { .dir = dir,
				  .agent_args = args,
				  .workload_argv = argv,
				  .wait_log = WAIT_TCTX,
				  .keep_agent = 1 };
	int i, port;

	assert_int_equal(profiled_run(&r), 0);
	port = metrics_scrape_port(r.agent.log_path);
	for (i = 0; i < n; i++)
		drops[i] = final_drops(port, reasons[i]);
	assert_int_equal(agent_proc_stop(&r.agent), 0);
}

/* A library built for initial-exec access and linked by the program (not dlopen()ed): its TLS
 * is in the static block, at the offset the dynamic linker wrote into its R_X86_64_TPOFF64 GOT
 * slot. */
static void test_initial_exec_library_writer_labels_samples(void **state)
{
	if (!*state)
		skip();
	run_normal(*state, build_path("tests/workloads/tctx_workload_ie"), "static", NULL, "3",
		   NULL, NULL, "static TLS");
}

/* Hostile records: nothing labelled wrongly, the agent alive to the end, the cut attributes and
 * the unreadable records counted. */
static void test_hostile_records_mislabel_nothing(void **state)
{
	static const char *const reasons[] = { "thread_context_attrs_cut",
					       "thread_context_unreadable" };
	const char *dir = *state;
	struct label_count lc[] = {
		/* The cut entry (its length runs past the attributes) is left out. */
		{ "tctx_hostile_cut", "http_route", NULL, 0, 0, 0 },
		/* Known keys of a record with an unknown index still label. */
		{ "tctx_hostile_unknown", "http_route", "/unknown", 0, 0, 0 },
		/* 64 KiB attrs_data_size over an inaccessible page: ids kept, no attributes. */
		{ "tctx_hostile_huge", "http_route", NULL, 0, 0, 0 },
		/* The key appended to the key map later: labelled once re-read, never wrongly. */
		{ "tctx_hostile_unknown", "late_key", "grown", 0, 0, 0 },
		/* attrs_data_size far past the 640-byte bound over readable memory: the attribute
		 * within the bound labels, the configured one right past it is never read. */
		{ "tctx_hostile_big", "http_route", "/big", 0, 0, 0 },
		{ "tctx_hostile_big", "thread_name", NULL, 0, 0, 0 },
	};
	const struct census_func *cut, *huge, *big, *unmapped;
	double drops[2], attrs_cut, unreadable;
	struct census c = { 0 };
	int i;

	if (!dir)
		skip();
	run_counting_drops(dir, "hostile", "http.route,late.key,thread.name", reasons, drops, 2);
	attrs_cut = drops[0];
	unreadable = drops[1];
	census_watch(&c, "tctx_hostile_invalid", NULL);
	census_watch(&c, "tctx_hostile_unmapped", NULL);
	census_watch(&c, "tctx_hostile_cut", CUT_SPAN);
	census_watch(&c, "tctx_hostile_unknown", UNKNOWN_SPAN);
	census_watch(&c, "tctx_hostile_huge", HUGE_SPAN);
	census_watch(&c, "tctx_hostile_big", BIG_SPAN);
	assert_true(census_read(&c, dir, "tctx-hostile") > 0);
	assert_mostly(census_get(&c, "tctx_hostile_invalid"), 1.0);
	assert_mostly(census_get(&c, "tctx_hostile_unmapped"), 1.0);
	assert_mostly(census_get(&c, "tctx_hostile_cut"), 0.99);
	assert_mostly(census_get(&c, "tctx_hostile_unknown"), 0.99);
	assert_mostly(census_get(&c, "tctx_hostile_huge"), 0.99);
	assert_mostly(census_get(&c, "tctx_hostile_big"), 0.99);
	count_labels(dir, "tctx-hostile", lc, 6);
	for (i = 0; i < 6; i++) {
		printf("  %-22s %-10s %6llu samples, %6llu right, %llu other\n", lc[i].function,
		       lc[i].key, (unsigned long long)lc[i].samples,
		       (unsigned long long)lc[i].right, (unsigned long long)lc[i].other);
		assert_int_equal(lc[i].other, 0);
	}
	assert_true(lc[0].right == lc[0].samples && lc[2].right == lc[2].samples);
	assert_true(lc[1].right >= 0.99 * lc[1].samples);
	/* The key appears half way: after the agent re-read the map, samples carry it. */
	assert_true(lc[3].right > 0);
	assert_true(lc[4].right >= 0.99 * lc[4].samples);
	assert_true(lc[5].right == lc[5].samples);
	/* Every sample read in a cut record's, the 64 KiB one's (cut to the bound, then
	 * unreadable: twice) and the big one's (cut to the bound) counts its attributes cut; every
	 * sample of the record in unmapped memory counts it unreadable. Off-CPU captures of those
	 * threads count too, so these are lower bounds. */
	cut = census_get(&c, "tctx_hostile_cut");
	huge = census_get(&c, "tctx_hostile_huge");
	big = census_get(&c, "tctx_hostile_big");
	unmapped = census_get(&c, "tctx_hostile_unmapped");
	printf("  thread_context_attrs_cut %.0f (cut %llu + 2 x huge %llu + big %llu samples), "
	       "thread_context_unreadable %.0f (unmapped %llu samples)\n",
	       attrs_cut, (unsigned long long)cut->samples, (unsigned long long)huge->samples,
	       (unsigned long long)big->samples, unreadable, (unsigned long long)unmapped->samples);
	assert_true(attrs_cut >= (double)(cut->samples + 2 * huge->samples + big->samples));
	assert_true(unreadable >= (double)unmapped->samples);
}

/* A bpffs of the test's own, mounted under dir so that no other agent or OBI on the machine sees
 * the map pinned there: the path OBI pins its map at in it goes to pin. Returns 0, or -1 after
 * printing why (the caller skips). */
static int obi_bpffs_mount(const char *dir, char *pin, size_t len)
{
	char pin_dir[600];

	snprintf(pin_dir, sizeof(pin_dir), "%s/bpffs", dir);
	snprintf(pin, len, "%s/traces_ctx_v1", pin_dir);
	if (mkdir(pin_dir, 0700) || mount("bpf", pin_dir, "bpf", 0, NULL)) {
		printf("  cannot mount a bpffs at %s (%s): skipped\n", pin_dir, strerror(errno));
		return -1;
	}
	return 0;
}

/* Removes the map pinned at pin and the bpffs obi_bpffs_mount() mounted for it. */
static void obi_map_unpin(const char *pin)
{
	char pin_dir[700];
	char *slash;

	snprintf(pin_dir, sizeof(pin_dir), "%s", pin);
	slash = strrchr(pin_dir, '/');
	if (slash)
		*slash = '\0';
	unlink(pin);
	umount(pin_dir);
	rmdir(pin_dir);
}

/* OBI's map, created and pinned as OBI does (an LRU hash of pid_tgid -> {trace_id, span_id},
 * 16384 entries) but under a test directory: a thread with no record gets its span from it. */
static void test_obi_map_labels_a_thread_without_record(void **state)
{
	const char *dir = *state;
	char pin[700];
	const char *argv[] = { build_path("tests/workloads/tctx_workload_static"),
			       "static",
			       "-",
			       "obi",
			       "3",
			       pin,
			       NULL };
	const char *extra[] = { "--obi-map", pin, "--span-scope", "all", NULL };
	struct census c = { 0 };
	struct profiled_run r;
	int fd;

	if (!dir || obi_bpffs_mount(dir, pin, sizeof(pin)))
		skip();
	fd = bpf_map_create(BPF_MAP_TYPE_LRU_HASH, "traces_ctx_v1", 8, 24, 16384, NULL);
	assert_true(fd >= 0);
	assert_int_equal(bpf_obj_pin(fd, pin), 0);
	close(fd);
	run_env(dir, argv, extra, NULL, WAIT_OBI, &r);
	obi_map_unpin(pin);
	census_watch(&c, "tctx_work_obi", OBI_SPAN);
	census_watch(&c, "tctx_work_outside", NULL);
	assert_true(census_read(&c, dir, "tctx-svc") > 0);
	assert_mostly(census_get(&c, "tctx_work_obi"), 0.99);
	assert_mostly(census_get(&c, "tctx_work_outside"), 1.0);
}

/* Processes that load a thread-context writer but never publish their process context stay
 * pending and are retried at drains. */
#define PENDING_PROCS 40

/* Starts argv held on a pipe as its stdin (the workload waits for a line there). Returns the pid
 * and the pipe's write end in *in. */
static pid_t start_held(const char *const *argv, int *in)
{
	pid_t pid = held_fork(in);

	if (pid == 0) {
		execv(argv[0], (char *const *)argv);
		_exit(127);
	}
	return pid;
}

/* 40 pending processes beside a writer: the drain retries a few of them at a time (counted in
 * /metrics), and the writer found meanwhile still has its samples labelled. */
static void test_many_pending_processes_are_retried_in_turns(void **state)
{
	const char *dir = *state;
	const char *plain[] = { build_path("tests/workloads/tctx_workload"),
				"dl",
				build_path("tests/workloads/libtctx_writer.so"),
				"plain",
				"3",
				NULL };
	const char *argv[] = { plain[0], "dl", plain[2], "normal", "3", NULL };
	const char *args[8 + 2 * PENDING_PROCS + 1] = { "--output",
							dir,
							"--interval",
							"1",
							"--thread-ctx-labels",
							"http.route",
							"--metrics-addr",
							"127.0.0.1:0" };
	char pids[PENDING_PROCS][16];
	pid_t held[PENDING_PROCS];
	int in[PENDING_PROCS], i, n = 8, port;
	double deferred = -1;
	struct profiled_run r;

	if (!dir)
		skip();
	for (i = 0; i < PENDING_PROCS; i++) {
		held[i] = start_held(plain, &in[i]);
		assert_true(held[i] > 0);
		snprintf(pids[i], sizeof(pids[i]), "%d", (int)held[i]);
		args[n++] = "--pid";
		args[n++] = pids[i];
	}
	args[n] = NULL;
	r = (struct profiled_run){ .dir = dir,
				   .agent_args = args,
				   .workload_argv = argv,
				   .wait_log = WAIT_TCTX,
				   .keep_agent = 1 };
	assert_int_equal(profiled_run(&r), 0);
	port = metrics_scrape_port(r.agent.log_path);
	if (port > 0)
		metrics_scrape(port, "spanprof_input_guards_total{guard=\"thread_ctx_deferred\"}",
			       &deferred);
	agent_proc_stop(&r.agent);
	for (i = 0; i < PENDING_PROCS; i++) {
		close(in[i]);
		kill(held[i], SIGKILL);
		waitpid(held[i], NULL, 0);
	}
	printf("  %d pending processes: %.0f retries put off to a later drain\n", PENDING_PROCS,
	       deferred);
	assert_true(deferred > 0);
	check_normal(dir, NULL);
}

/* Crafted modules an unprivileged user owns and maps, each exporting otel_thread_ctx_v1 with a
 * .dynsym and a .rela.dyn of 32 MiB each (holes on disk; within the caps, so each is read
 * whole: a few tenths of a second of parsing, seconds on a loaded node) and relocation sections
 * naming 48 MiB non-symbol sections (which the reader once read whole too). The writer runs
 * long enough for the parses; the test stops it when they are done. */
#define CRAFTED_MODULES 4
#define CRAFTED_TABLE_BYTES (32ull << 20)
#define CRAFTED_LINKED_BYTES (48ull << 20)
#define WRITER_SECONDS "40"
#define WAIT_REFUSED "pid %d: its OpenTelemetry thread context is not read"
/* Longest time between two of the writer's 1 s windows while the modules are parsed (parsed on
 * the run loop they were 6.8 s apart); a sanitized agent on a loaded node runs late more. */
#if defined(__SANITIZE_ADDRESS__)
#define MAX_WINDOW_GAP_S 1.9
#else
#define MAX_WINDOW_GAP_S 1.6
#endif

/* Polls a guard until it counts at least want; returns the last value read. */
static double wait_guard_at_least(int port, const char *guard, double want, double timeout_s)
{
	double end = hostile_now_s() + timeout_s, v = -1;

	while (hostile_now_s() < end) {
		if (!hostile_guard(port, guard, &v) && v >= want)
			break;
		usleep(100000);
	}
	return v;
}

/* The modules are parsed on the thread-context parse thread, not on the run loop: while they
 * are, a root writer's windows keep coming every second with its samples labelled, and each
 * module is put off to the thread (counted) and settled (logged once per process). */
static int setup_hostile(void **state)
{
	struct hostile_fixture *f = NULL;

	if (hostile_fixture_new("it-tctx-modules", &f))
		return -1;
	*state = f; /* NULL: no BPF or no unprivileged user here (printed why) */
	return 0;
}

static int teardown_hostile(void **state)
{
	hostile_fixture_free(*state);
	return 0;
}

static void test_crafted_modules_of_a_user_do_not_delay_windows(void **state)
{
	struct hostile_fixture *f = *state;
	const char *writer[] = { build_path("tests/workloads/tctx_workload"),
				 "dl",
				 build_path("tests/workloads/libtctx_writer.so"),
				 "normal",
				 WRITER_SECONDS,
				 NULL };
	char out[700], gate[700], files[CRAFTED_MODULES][700], outs[CRAFTED_MODULES][32];
	char pids[CRAFTED_MODULES + 1][16], want[200];
	const char *args[10 + 2 * (CRAFTED_MODULES + 1) + 1] = { "--output",
								 out,
								 "--interval",
								 "1",
								 "--thread-ctx-labels",
								 "http.route",
								 "--metrics-addr",
								 "127.0.0.1:0" };
	double since, start, parsed_s = -1, gap = -1, deferred0 = -1, deferred;
	struct agent_proc agent;
	int i, n = 8, in = -1, port, windows, settled = 0;
	pid_t held;
	uint64_t rss;

	if (!f)
		skip();
	snprintf(out, sizeof(out), "%s/out", f->dir);
	snprintf(gate, sizeof(gate), "%s/map-go", f->dir);
	assert_int_equal(mkdir(out, 0755), 0);
	/* The user's own files: what a user crafts is owned by that user. */
	for (i = 0; i < CRAFTED_MODULES; i++) {
		const char *map[] = { f->workload, "mapafter", files[i], gate, "60", NULL };

		snprintf(files[i], sizeof(files[i]), "%s/libcrafted-tctx-%d.so", f->dir, i);
		assert_int_equal(
			parser_bomb_thread_ctx(files[i], CRAFTED_TABLE_BYTES, CRAFTED_LINKED_BYTES),
			0);
		assert_int_equal(chown(files[i], f->user.uid, f->user.uid), 0);
		snprintf(outs[i], sizeof(outs[i]), "attacker%d.out", i);
		if (hostile_fixture_spawn(f, f->user.uid, "tctx-attacker", outs[i], map, 20) < 0)
			fail_msg("attacker %d never started", i);
		snprintf(pids[i], sizeof(pids[i]), "%d", (int)f->pids[i]);
		args[n++] = "--pid";
		args[n++] = pids[i];
	}
	held = start_held(writer, &in);
	assert_true(held > 0);
	f->pids[f->npids++] = held;
	snprintf(pids[CRAFTED_MODULES], sizeof(pids[0]), "%d", (int)held);
	args[n++] = "--pid";
	args[n++] = pids[CRAFTED_MODULES];
	args[n] = NULL;
	assert_int_equal(hostile_fixture_start_agent(f, &agent, args), 0);
	port = metrics_scrape_port(agent.log_path);
	assert_true(port > 0);
	snprintf(want, sizeof(want), WAIT_TCTX, (int)held);
	if (!agent_proc_wait_log(&agent, want, 30))
		fail_msg("the agent never found the root writer's thread context");
	assert_int_equal(write(in, "go\n", 3), 3);
	/* Windows of the writer are being written: then the user maps its modules. */
	start = hostile_now_s();
	while (profile_windows_since(out, "tctx-svc", 0, NULL) < 2 && hostile_now_s() - start < 20)
		usleep(50000);
	hostile_guard(port, "thread_ctx_file_deferred", &deferred0);
	since = profile_windows_now_s() - 1;
	start = hostile_now_s();
	close(open(gate, O_WRONLY | O_CREAT, 0644));
	/* Each process's module is parsed on the thread; its verdict settles the process (the
	 * module has no TLS relocation the reader knows): logged once per process. */
	while (settled < CRAFTED_MODULES && hostile_now_s() - start < 60) {
		for (i = settled = 0; i < CRAFTED_MODULES; i++) {
			snprintf(want, sizeof(want), WAIT_REFUSED, (int)f->pids[i]);
			settled += agent_proc_log_contains(&agent, want);
		}
		usleep(100000);
	}
	parsed_s = hostile_now_s() - start;
	deferred = wait_guard_at_least(port, "thread_ctx_file_deferred",
				       deferred0 + CRAFTED_MODULES, 5) -
		   deferred0;
	/* A window more, so that any gap of the parsing time is closed. */
	usleep(1200000);
	windows = profile_windows_since(out, "tctx-svc", since, &gap);
	rss = hostile_peak_rss(agent.pid);
	printf("  %d of %d crafted modules settled %.2f s after they were mapped (%.0f parses "
	       "put off to the thread); %d windows of the root writer since, at most %.2f s "
	       "apart; agent peak RSS %llu MB\n",
	       settled, CRAFTED_MODULES, parsed_s, deferred, windows, gap,
	       (unsigned long long)rss >> 20);
	close(in); /* the writer ends on its own; the fixture stops it and the agent */
	if (settled < CRAFTED_MODULES)
		fail_msg("%d of %d crafted modules were settled within 60 s", settled,
			 CRAFTED_MODULES);
	if (parsed_s > atof(WRITER_SECONDS) - 4)
		fail_msg("the modules took %.1f s, too long beside the writer's %s s to measure "
			 "its windows",
			 parsed_s, WRITER_SECONDS);
	/* Every module went to the thread: parsed on the run loop, none would be put off. */
	assert_true(deferred >= CRAFTED_MODULES);
	assert_true(windows >= (int)parsed_s);
	assert_true(gap < MAX_WINDOW_GAP_S);
	assert_int_equal(agent_proc_stop(&agent), 0);
	f->agent_started = 0;
	check_normal(out, NULL);
}

/* An unprivileged user's threads name a new span in their records all the time, at a higher
 * sampling rate: each name the sampler interns is charged to that user's share of new names, as
 * a hook's are (counted), and a root writer alongside keeps every one of its span names. */
static void test_name_flood_by_another_user_leaves_a_root_writer_named(void **state)
{
	const char *dir = *state;
	const char *argv[] = { build_path("tests/workloads/tctx_workload"),
			       "dl",
			       build_path("tests/workloads/libtctx_writer.so"),
			       "normal",
			       "1",
			       NULL };
	char work[600], lib[600], out[600], pid_arg[16];
	const char *flood[] = { work, "dl", lib, "flood", "20", NULL };
	const char *args[] = { "--output",
			       dir,
			       "--interval",
			       "1",
			       "--frequency",
			       "999",
			       "--thread-ctx-labels",
			       "http.route",
			       "--metrics-addr",
			       "127.0.0.1:0",
			       "--pid",
			       pid_arg,
			       NULL };
	struct unpriv_user user = { .uid = -1 };
	double over = -1;
	struct profiled_run r;
	pid_t flooder;
	int port;

	if (!dir)
		skip();
	if (unpriv_user_create(&user)) {
		printf("  cannot create an unprivileged user here: skipped\n");
		skip();
	}
	snprintf(work, sizeof(work), "%s/tctx_workload", dir);
	snprintf(lib, sizeof(lib), "%s/libtctx_writer.so", dir);
	snprintf(out, sizeof(out), "%s/flood.out", dir);
	assert_int_equal(fixture_sh("chmod 0755 '%s' && cp '%s' '%s' && cp '%s' '%s'", dir, argv[0],
				    work, argv[2], lib),
			 0);
	flooder = unpriv_user_start(user.uid, "tctx-flood", NULL, out, flood);
	assert_true(flooder > 0);
	assert_int_equal(unpriv_wait_file_has(out, "ready", 20), 0);
	snprintf(pid_arg, sizeof(pid_arg), "%d", (int)flooder);
	r = (struct profiled_run){ .dir = dir,
				   .agent_args = args,
				   .workload_argv = argv,
				   .wait_log = WAIT_TCTX,
				   .keep_agent = 1 };
	assert_int_equal(profiled_run(&r), 0);
	port = metrics_scrape_port(r.agent.log_path);
	if (port > 0)
		metrics_scrape(
			port,
			"spanprof_samples_dropped_total{reason=\"span_name_over_user_share\"}",
			&over);
	agent_proc_stop(&r.agent);
	kill(flooder, SIGKILL);
	waitpid(flooder, NULL, 0);
	unpriv_user_remove(&user);
	printf("  the flooding user's new names over its share: %.0f\n", over);
	assert_true(over > 0);
	check_normal(dir, NULL);
}

struct off_cpu_split {
	const char *fn, *span;
	int64_t right, other;
};

static void split_off_cpu(const Perftools__Profiles__Profile *p, const char *path, void *ctx)
{
	struct off_cpu_split *o = ctx;
	size_t i;

	(void)path;
	for (i = 0; i < p->n_sample; i++) {
		const Perftools__Profiles__Sample *smp = p->sample[i];
		const char *id = pprof_sample_label(p, smp, "span_id");

		if (!smp->n_value || (o->fn && !pprof_sample_has_function(p, smp, o->fn)))
			continue;
		if (id && !strcmp(id, o->span))
			o->right += smp->value[0];
		else
			o->other += smp->value[0];
	}
}

/* Off-CPU nanoseconds of dir's <service>.off_cpu.pb.gz files under function fn (NULL: any stack),
 * with span_id span (right) or any other or no span (*other). */
static int64_t off_cpu_under(const char *dir, const char *service, const char *fn, const char *span,
			     int64_t *other)
{
	struct off_cpu_split o = { fn, span, 0, 0 };

	assert_true(pprof_file_each(dir, service, "off_cpu", split_off_cpu, &o) >= 0);
	*other = o.other;
	return o.right;
}

/* A thread that sleeps under its record (no spanprof hook): its waits are followed off the CPU
 * and carry the record's span, as a hook span's waits do; the workload times its sleeps itself.
 * It sleeps only after the agent read its thread context (so its process context: its service
 * is named from the next drain on) and built the unwind tables of its files (until then a wait's
 * stack is walked by frame pointer, which drops the caller of libc's frameless
 * clock_nanosleep: on a loaded node and under ASan, seconds): every wait is then measurable,
 * and each ends before the process does (docs/off-cpu.md, "Waits under a thread context
 * record"). */
static void test_waits_under_a_record_are_off_cpu_with_its_span(void **state)
{
	const char *dir = *state;
	const char *argv[] = { build_path("tests/workloads/tctx_workload"),
			       "dl",
			       build_path("tests/workloads/libtctx_writer.so"),
			       "wait",
			       "6",
			       NULL };
	const char *args[] = { "--output", dir, "--interval", "1", "--log-level", "debug", NULL };
	char out[1024], line[128];
	long long wait_ns = 0;
	int64_t right, other, spanned, unused, misnamed;
	struct profiled_run r;
	FILE *f;

	if (!dir)
		skip();
	r = (struct profiled_run){ .dir = dir,
				   .agent_args = args,
				   .workload_argv = argv,
				   .wait_log = WAIT_TCTX,
				   .wait_log_too = "unwind: pid %d ready" };
	assert_int_equal(profiled_run(&r), 0);
	printf("  the agent was ready %.3f s after exec\n", r.attach_s);
	snprintf(out, sizeof(out), "%s/workload-%d.out", dir, (int)r.pid);
	f = fopen(out, "r");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f))
		sscanf(line, "wait_ns %lld", &wait_ns);
	fclose(f);
	right = off_cpu_under(dir, "tctx-svc", "tctx_wait_in_record", WAIT_SPAN, &other);
	/* The thread waits under its record only in tctx_wait_in_record: every wait with its span
	 * is one of those, all of them on stacks the CFI tables walked. */
	spanned = off_cpu_under(dir, "tctx-svc", NULL, WAIT_SPAN, &unused);
	/* A span is read only once the process context was: never under the executable's name,
	 * the service the process had before. */
	misnamed = off_cpu_under(dir, "tctx_workload", NULL, WAIT_SPAN, &unused);
	printf("  the thread slept %.1f ms under its record; off-CPU profile: %.1f ms with its span "
	       "(%.1f%%; %.1f ms of it under the function), %.1f ms under the function without, "
	       "%.1f ms under the executable's name\n",
	       wait_ns / 1e6, spanned / 1e6, wait_ns ? 100.0 * spanned / wait_ns : 0, right / 1e6,
	       other / 1e6, misnamed / 1e6);
	assert_true(wait_ns > 1000000000ll);
	assert_int_equal(misnamed, 0);
	/* Each sleep is off the CPU from its switch out to its switch in (wake-up and run-queue
	 * delay included), inside the workload's clock reads around it: what the workload counts
	 * besides is the CPU time of entering and leaving the sleep. */
	assert_true(spanned >= 0.9 * wait_ns);
	assert_true(spanned <= 1.02 * wait_ns);
	assert_true(right >= 0.95 * spanned);
	assert_true(other <= 0.05 * right);
}

/* The span ids of the records the later tests add (tctx_workload "obiboth"). */
#define BOTH_SPAN "b0b1b2b3b4b5b6b7"
#define WAIT_OBI_MAP "reading OBI's trace context map %s"

/* OBI's map as OBI pins it (an LRU hash of pid_tgid -> {trace_id, span_id}, 16384 entries), on a
 * bpffs of the test's own (obi_bpffs_mount()): its path in pin. Returns 0, or -1 after printing
 * why (the caller skips). */
static int obi_map_pin(const char *dir, char *pin, size_t len)
{
	int fd, err;

	if (obi_bpffs_mount(dir, pin, len))
		return -1;
	fd = bpf_map_create(BPF_MAP_TYPE_LRU_HASH, "traces_ctx_v1", 8, 24, 16384, NULL);
	err = fd < 0 || bpf_obj_pin(fd, pin);
	if (fd >= 0)
		close(fd);
	if (err) {
		printf("  cannot create and pin OBI's map at %s: skipped\n", pin);
		obi_map_unpin(pin);
		return -1;
	}
	return 0;
}

/* One thread with a record and an OBI entry of another span: the record's span labels its
 * samples (OBI is the fallback for threads with no thread context); with its OBI entry alone, the
 * same thread's samples carry OBI's span, so OBI's map was read all along. The workload is held
 * until the agent has both found its thread context and read OBI's map: a sample taken before
 * either would be judged wrongly. */
static void test_record_wins_over_an_obi_entry(void **state)
{
	const char *dir = *state;
	char pin[700], pid_arg[16], want[800];
	const char *argv[] = { build_path("tests/workloads/tctx_workload"),
			       "dl",
			       build_path("tests/workloads/libtctx_writer.so"),
			       "obiboth",
			       "3",
			       pin,
			       NULL };
	const char *args[] = { "--output",
			       dir,
			       "--interval",
			       "1",
			       "--obi-map",
			       pin,
			       "--thread-ctx-labels",
			       "http.route",
			       "--span-scope",
			       "all",
			       "--pid",
			       pid_arg,
			       NULL };
	struct label_count lc[] = { { "tctx_work_both", "http_route", "/both", 0, 0, 0 } };
	struct census c = { 0 };
	struct agent_proc agent;
	int in = -1, started, ready, status, stopped;
	pid_t pid;

	if (!dir)
		skip();
	if (obi_map_pin(dir, pin, sizeof(pin)))
		skip();
	pid = start_held(argv, &in);
	assert_true(pid > 0);
	snprintf(pid_arg, sizeof(pid_arg), "%d", (int)pid);
	started = !agent_proc_start(&agent, dir, args);
	ready = started;
	if (ready) {
		snprintf(want, sizeof(want), WAIT_TCTX, (int)pid);
		ready = agent_proc_wait_log(&agent, want, 30);
		snprintf(want, sizeof(want), WAIT_OBI_MAP, pin);
		ready = ready && agent_proc_wait_log(&agent, want, 30);
	}
	status = ready && write(in, "go\n", 3) == 3 ? workload_wait(pid, 60) : -1;
	close(in);
	if (status) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
	}
	stopped = started ? agent_proc_stop(&agent) : -1;
	obi_map_unpin(pin);
	if (started && !ready)
		agent_proc_print_log(&agent);
	assert_true(ready);
	assert_int_equal(status, 0);
	assert_int_equal(stopped, 0);
	census_watch(&c, "tctx_work_both", BOTH_SPAN);
	census_watch(&c, "tctx_work_obi", OBI_SPAN);
	census_watch(&c, "tctx_work_outside", NULL);
	assert_true(census_read(&c, dir, "tctx-svc") > 0);
	assert_mostly(census_get(&c, "tctx_work_both"), 0.99);
	assert_mostly(census_get(&c, "tctx_work_obi"), 0.99);
	assert_mostly(census_get(&c, "tctx_work_outside"), 1.0);
	/* The record's attributes come with its span. */
	count_labels(dir, "tctx-svc", lc, 1);
	printf("  %-18s %-10s %6llu samples, %6llu right, %llu other\n", lc[0].function, lc[0].key,
	       (unsigned long long)lc[0].samples, (unsigned long long)lc[0].right,
	       (unsigned long long)lc[0].other);
	assert_true(lc[0].right >= 0.99 * lc[0].samples);
	assert_int_equal(lc[0].other, 0);
}

/* Record pointers no user read can follow: a kernel address, the vsyscall page (which a user
 * may execute), a non-canonical address and a record whose header runs past the top of the user
 * address space. Their threads' samples carry no span, each such sample counts its record
 * unreadable, the agent lives to the end, and alpha's thread beside them keeps its span. */
static void test_kernel_and_noncanonical_record_pointers_label_nothing(void **state)
{
	static const char *const unreadable_reason[] = { "thread_context_unreadable" };
	static const char *const bad[] = { "tctx_badptr_kernel", "tctx_badptr_vsyscall",
					   "tctx_badptr_noncanonical", "tctx_badptr_top" };
	const char *dir = *state;
	uint64_t bad_samples = 0;
	struct census c = { 0 };
	double unreadable;
	int i;

	if (!dir)
		skip();
	run_counting_drops(dir, "badptr", "http.route", unreadable_reason, &unreadable, 1);
	for (i = 0; i < 4; i++)
		census_watch(&c, bad[i], NULL);
	census_watch(&c, "tctx_work_alpha", ALPHA_SPAN);
	assert_true(census_read(&c, dir, "tctx-svc") > 0);
	for (i = 0; i < 4; i++) {
		assert_mostly(census_get(&c, bad[i]), 1.0);
		bad_samples += census_get(&c, bad[i])->samples;
	}
	assert_mostly(census_get(&c, "tctx_work_alpha"), 0.99);
	/* Off-CPU captures of those threads count too: a lower bound. */
	printf("  thread_context_unreadable %.0f (%llu samples of the four threads)\n", unreadable,
	       (unsigned long long)bad_samples);
	assert_true(unreadable >= (double)bad_samples);
}

/* Labels of every sample: none is named after a record key --thread-ctx-labels leaves out, and
 * no value is one only such an attribute holds. */
struct unconfigured_labels {
	uint64_t samples, leaked; /* samples; those carrying an unconfigured attribute */
};

static void find_unconfigured(const Perftools__Profiles__Profile *p, const char *path, void *ctx)
{
	/* Keys of tctx_workload's key map other than http.route, as label names. */
	static const char *const keys[] = { "datadog_local_root_span_id", "spanprof_span_name",
					    "thread_name", "pad_key", "late_key" };
	struct unconfigured_labels *u = ctx;
	size_t i, j, k;

	(void)path;
	for (i = 0; i < p->n_sample; i++) {
		const Perftools__Profiles__Sample *s = p->sample[i];
		int leaked = 0;

		for (j = 0; j < s->n_label; j++) {
			const char *key = pprof_str(p, s->label[j]->key);
			const char *val = pprof_str(p, s->label[j]->str);

			for (k = 0; k < sizeof(keys) / sizeof(keys[0]); k++)
				leaked |= key && !strcmp(key, keys[k]);
			/* beta's thread.name value: no configured attribute or span holds it. */
			leaked |= val && strstr(val, "worker-2") != NULL;
		}
		u->samples++;
		u->leaked += leaked;
	}
}

/* Beta's record holds thread.name and alpha's the local root key, neither named in
 * --thread-ctx-labels: no sample carries them, while the configured http.route labels both
 * threads' samples. */
static void test_unconfigured_attributes_label_nothing(void **state)
{
	const char *dir = *state;
	struct label_count lc[] = {
		{ "tctx_work_alpha", "http_route", "/alpha", 0, 0, 0 },
		{ "tctx_work_beta", "http_route", "/beta", 0, 0, 0 },
	};
	struct unconfigured_labels u = { 0 };
	int i;

	if (!dir)
		skip();
	run_normal(dir, build_path("tests/workloads/tctx_workload_static"), "static", NULL, "3",
		   NULL, NULL, NULL);
	count_labels(dir, "tctx-svc", lc, 2);
	for (i = 0; i < 2; i++)
		assert_true(lc[i].right >= PROFILED_MIN_SAMPLES);
	assert_true(pprof_file_each(dir, "tctx-svc", NULL, find_unconfigured, &u) > 0);
	printf("  %llu sample entries, %llu with an attribute --thread-ctx-labels does not name\n",
	       (unsigned long long)u.samples, (unsigned long long)u.leaked);
	assert_int_equal(u.leaked, 0);
}

/* musl, general-dynamic access: the module id and offset from the DTPMOD64/DTPOFF64 GOT slots
 * musl's dynamic linker filled, the block found through its dtv. */
static void test_musl_general_dynamic_writer_is_found_through_its_dtv(void **state)
{
	const char *exe = musl_built("tests/workloads/musl/tctx_workload");
	const char *lib = musl_built("tests/workloads/musl/libtctx_writer_gd.so");

	if (!*state || !exe || !lib)
		skip();
	/* 6 s as the other musl run: samples in musl's clock_gettime, which has no unwind tables,
	 * do not reach the span's function. */
	run_normal(*state, exe, "dl", lib, "6", NULL, NULL, "dynamic TLS");
}

/* musl, the writer linked into the executable (local-exec access, no relocation): the agent
 * reads the executable's block through the dtv as module 1 rather than computing musl's static
 * layout. */
static void test_musl_static_tls_writer_labels_samples(void **state)
{
	const char *exe = musl_built("tests/workloads/musl/tctx_workload_static");

	if (!*state || !exe)
		skip();
	run_normal(*state, exe, "static", NULL, "6", NULL, "all", "dynamic TLS");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_waits_under_a_record_are_off_cpu_with_its_span,
						setup, tmpdir_teardown),
		cmocka_unit_test_setup_teardown(
			test_name_flood_by_another_user_leaves_a_root_writer_named, setup,
			tmpdir_teardown),
		cmocka_unit_test_setup_teardown(test_many_pending_processes_are_retried_in_turns,
						setup, tmpdir_teardown),
		cmocka_unit_test_setup_teardown(test_crafted_modules_of_a_user_do_not_delay_windows,
						setup_hostile, teardown_hostile),
		cmocka_unit_test_setup_teardown(test_dlopened_tlsdesc_writer_labels_samples, setup,
						tmpdir_teardown),
		cmocka_unit_test_setup_teardown(test_dynamic_tls_block_is_found_through_the_dtv,
						setup, tmpdir_teardown),
		cmocka_unit_test_setup_teardown(
			test_general_dynamic_writer_is_found_through_the_dtv, setup,
			tmpdir_teardown),
		cmocka_unit_test_setup_teardown(test_musl_dynamic_tls_is_found_through_its_dtv,
						setup, tmpdir_teardown),
		cmocka_unit_test_setup_teardown(test_static_tls_writer_labels_samples, setup,
						tmpdir_teardown),
		cmocka_unit_test_setup_teardown(test_initial_exec_library_writer_labels_samples,
						setup, tmpdir_teardown),
		cmocka_unit_test_setup_teardown(test_hostile_records_mislabel_nothing, setup,
						tmpdir_teardown),
		cmocka_unit_test_setup_teardown(test_obi_map_labels_a_thread_without_record, setup,
						tmpdir_teardown),
		cmocka_unit_test_setup_teardown(test_hook_span_wins_over_the_record, setup,
						tmpdir_teardown),
		cmocka_unit_test_setup_teardown(test_record_wins_over_an_obi_entry, setup,
						tmpdir_teardown),
		cmocka_unit_test_setup_teardown(
			test_kernel_and_noncanonical_record_pointers_label_nothing, setup,
			tmpdir_teardown),
		cmocka_unit_test_setup_teardown(test_unconfigured_attributes_label_nothing, setup,
						tmpdir_teardown),
		cmocka_unit_test_setup_teardown(
			test_musl_general_dynamic_writer_is_found_through_its_dtv, setup,
			tmpdir_teardown),
		cmocka_unit_test_setup_teardown(test_musl_static_tls_writer_labels_samples, setup,
						tmpdir_teardown),
	};

	/* TCTX_TEST=<name> runs one test. */
	if (getenv("TCTX_TEST"))
		cmocka_set_test_filter(getenv("TCTX_TEST"));
	return cmocka_run_group_tests(tests, NULL, NULL);
}
