// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* One local user against everyone else, with the real agent: an unprivileged user the test
 * creates holds every hook-file slot and then lets them all go at once; an ordinary root service
 * must still get its hook, keep its windows coming while the uprobes are removed, and be named
 * in the log. Also the span-name flood and the span log's size bounds, services per window, and
 * control characters in Python and Ruby names. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "agent_proc.h"
#include "fixture_build.h"
#include "hook_hogs.h"
#include "metrics_scrape.h"
#include "profile_census.h"
#include "profile_windows.h"
#include "text_file.h"
#include "tmpdir.h"
#include "unpriv_user.h"

#define HOGS HOOK_HOGS
#define SERVICE_HOGS 8 /* the user's processes, each its own service, for 4 service slots */
#define SERVICE_SPAN "GET /checkout"
#if defined(__x86_64__)
#define UNWIND_SUPPORTED_HERE 1
#else
#define UNWIND_SUPPORTED_HERE 0
#endif

struct fair {
	char *dir;
	struct unpriv_user user; /* uid -1 until made */
	pid_t kids[HOGS + 8];
	int nkids;
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int setup(void **state)
{
	struct fair *f;

	*state = NULL;
	if (!agent_proc_can_run())
		return 0;
	f = calloc(1, sizeof(*f));
	if (!f)
		return -1;
	if (unpriv_stage_begin(&f->user, &f->dir, "it-fair")) {
		free(f);
		return -1;
	}
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fair *f = *state;

	if (!f)
		return 0;
	unpriv_stage_end(f->kids, f->nkids, &f->user, f->dir, "FAIR_KEEP");
	free(f);
	return 0;
}

/* Creates the unprivileged user of this test; skips when useradd is missing. */
static void create_user(struct fair *f)
{
	if (unpriv_user_create(&f->user)) {
		printf("  useradd unavailable: skipped\n");
		skip();
	}
}

/* Starts argv as uid (-1: root) with OTEL_SERVICE_NAME=service, stdout into out_path; killed in
 * teardown. */
static pid_t start_as(struct fair *f, int uid, const char *service, const char *out_path,
		      const char *const *argv)
{
	pid_t pid = unpriv_user_start(uid, service, NULL, out_path, argv);

	assert_true(pid > 0);
	f->kids[f->nkids++] = pid;
	return pid;
}

/* Lets a service workload waiting at GATE.go start its spans. */
static void let_go(const char *gate)
{
	char go[700];

	snprintf(go, sizeof(go), "%s.go", gate);
	close(open(go, O_WRONLY | O_CREAT, 0644));
}

static void wait_file_has(const char *path, const char *text, double timeout_s)
{
	if (unpriv_wait_file_has(path, text, timeout_s))
		fail_msg("%s never said '%s'", path, text);
}

/* The user's HOGS processes map LIBS_PER_HOG hook copies each (hook_hogs_stage() made them):
 * every slot of the table. */
static void start_hogs(struct fair *f, char (*pids)[16])
{
	int started, h, err;

	err = hook_hogs_start(f->dir, f->user.uid, 30, f->kids + f->nkids, &started);
	f->nkids += started;
	assert_int_equal(err, 0);
	for (h = 0; h < HOGS; h++)
		snprintf(pids[h], 16, "%d", (int)f->kids[f->nkids - HOGS + h]);
}

/* A user's processes hold all 256 hook-file slots when an ordinary root service maps its own
 * hook: the service's hook is attached (a slot taken back from the user, logged with both
 * paths), its spans are in its profiles, and when the user's processes all exit at once the
 * uprobes' removal (about 0.1 s each) does not stop the windows. */
static void test_hook_slots_fair_and_detached_off_the_run_loop(void **state)
{
	struct fair *f = *state;
	char workload[600], gate[600], sout[600], out[600], root_lib[600], line[700];
	char pids[HOGS + 1][16];
	const char *argv[2 * (HOGS + 1) + 8];
	const char *service_argv[] = {
		workload, "service", root_lib, gate, SERVICE_SPAN, "40", NULL
	};
	struct agent_proc agent;
	struct census c;
	double t0, gap, freed_at;
	int i, n = 0, windows;

	if (!f)
		skip();
	create_user(f);
	assert_int_equal(hook_hogs_stage(f->dir), 0);
	snprintf(workload, sizeof(workload), "%s/fair_workload", f->dir);
	snprintf(root_lib, sizeof(root_lib), "%s/root-hook.so", f->dir);
	snprintf(gate, sizeof(gate), "%s/gate", f->dir);
	snprintf(sout, sizeof(sout), "%s/service.out", f->dir);
	snprintf(out, sizeof(out), "%s/out", f->dir);
	assert_int_equal(mkdir(out, 0755), 0);
	start_hogs(f, pids);
	snprintf(pids[HOGS], 16, "%d", start_as(f, -1, "it-fair-root", sout, service_argv));
	argv[n++] = "--output";
	argv[n++] = out;
	argv[n++] = "--interval";
	argv[n++] = "1";
	for (i = 0; i <= HOGS; i++) {
		argv[n++] = "--pid";
		argv[n++] = pids[i];
	}
	argv[n] = NULL;
	assert_int_equal(agent_proc_start(&agent, f->dir, argv), 0);
	/* The start-up scan attached every slot for the user. */
	for (t0 = now_s(); agent_proc_log_count(&agent, "span hook attached: ") < HOOK_SLOTS;)
		if (now_s() - t0 > 60) {
			agent_proc_print_log(&agent);
			fail_msg("the user's %d hook files were not all attached", HOOK_SLOTS);
		}
	close(open(gate, O_WRONLY | O_CREAT, 0644));
	wait_file_has(sout, "loaded", 20);
	snprintf(line, sizeof(line), "span hook attached: %s (pid %s", root_lib, pids[HOGS]);
	if (!agent_proc_wait_log(&agent, line, 20)) {
		agent_proc_print_log(&agent);
		fail_msg("the root service's hook was never attached");
	}
	let_go(gate);
	assert_true(agent_proc_log_contains(&agent, "for " /* the reclaim names both */));
	snprintf(line, sizeof(line), "for %s (pid %s, uid 0", root_lib, pids[HOGS]);
	assert_true(agent_proc_log_contains(&agent, line));
	/* Windows with spans, then every one of the user's processes exits at once. */
	usleep(2500 * 1000);
	freed_at = profile_windows_now_s();
	for (i = 0; i < HOGS; i++)
		kill(f->kids[i], SIGKILL);
	for (t0 = now_s(); agent_proc_log_count(&agent, "span hook detached: ") < HOOK_SLOTS - 2;)
		if (now_s() - t0 > 60)
			fail_msg("the user's hook files were not detached");
	/* The removals are queued at once; the windows go on while they run (a run loop that
	 * removed them itself would write none for about 0.1 s per file). */
	for (t0 = now_s();
	     (windows = profile_windows_since(out, "it-fair-root", freed_at, &gap)) < 6;)
		if (now_s() - t0 > 60)
			break;
	printf("  %d windows of the root service since the user's processes exited, longest gap "
	       "%.1f s\n",
	       windows, gap);
	assert_true(windows >= 6);
	assert_true(gap < 3.0);
	assert_int_equal(agent_proc_stop(&agent), 0);
	memset(&c, 0, sizeof(c));
	census_watch(&c, "fair_service_work", NULL);
	assert_true(census_read(&c, out, "it-fair-root") > 0);
	printf("  root service: %llu samples in its work, span name '%s'\n",
	       (unsigned long long)census_get(&c, "fair_service_work")->samples,
	       census_get(&c, "fair_service_work")->seen_span_name);
	assert_string_equal(census_get(&c, "fair_service_work")->seen_span_name, SERVICE_SPAN);
}

/* A CPython function renamed with an escape sequence and a newline (code.replace), from a file
 * whose name carries a terminal title sequence. */
static const char py_script[] =
	"import os, sys, time, types\n"
	"def spin(end):\n"
	"    x = 0\n"
	"    while time.monotonic() < end:\n"
	"        x += 1\n"
	"    return x\n"
	"name = 'evil\\x1b[31m\\nspin'\n"
	"c = spin.__code__.replace(co_name=name, co_qualname=name,\n"
	"                          co_filename='/tmp/evil\\x1b]0;t\\x07\\n.py')\n"
	"f = types.FunctionType(c, globals())\n"
	"print('ready', flush=True)\n"
	"while not os.path.exists(sys.argv[1]):\n"
	"    time.sleep(0.02)\n"
	"f(time.monotonic() + float(sys.argv[2]))\n";

#define ESC_SPAN "GET /\x1b[31mred\nx"
#define ESC_SERVICE "it-fair-esc\x1b[2J\nz"
#define CLEAN_SPAN "GET /?[31mred?x"
#define CLEAN_SERVICE "it-fair-esc?[2J?z"

/* Control characters from a process (its OTel process context, its span names, its Python
 * function and file names) are cleaned where they enter: /metrics, the span log and the
 * profiles carry '?' in their place. */
static void test_control_characters_cleaned_at_entry(void **state)
{
	struct fair *f = *state;
	char workload[600], gate[600], sout[600], pout[600], out[600], lib[600], script[600];
	char pids[2][16], spans[700], metric[300], line[64], real[PATH_MAX],
		attached[PATH_MAX + 64];
	const char *service_argv[] = { workload, "service",   lib,	  gate, ESC_SPAN,
				       "30",	 ESC_SERVICE, "ns\x1b\r", NULL };
	const char *py_argv[] = { "/usr/bin/python3", script, gate, "8", NULL };
	const char *argv[] = { "--output",	 out,		"--interval", "1",
			       "--metrics-addr", "127.0.0.1:0", "--pid",      pids[0],
			       "--pid",		 pids[1],	NULL };
	struct agent_proc agent;
	struct census c;
	double v = 0, t0;
	int port;

	if (!f)
		skip();
	if (access("/usr/bin/python3", X_OK)) {
		printf("  no /usr/bin/python3: skipped\n");
		skip();
	}
	snprintf(workload, sizeof(workload), "%s", build_path("tests/workloads/fair_workload"));
	snprintf(lib, sizeof(lib), "%s", build_path("libspanprof.so"));
	snprintf(gate, sizeof(gate), "%s/gate", f->dir);
	snprintf(sout, sizeof(sout), "%s/service.out", f->dir);
	snprintf(pout, sizeof(pout), "%s/python.out", f->dir);
	snprintf(script, sizeof(script), "%s/evil.py", f->dir);
	snprintf(out, sizeof(out), "%s/out", f->dir);
	assert_int_equal(mkdir(out, 0755), 0);
	text_file_write(script, py_script);
	snprintf(pids[0], 16, "%d", start_as(f, -1, ESC_SERVICE, sout, service_argv));
	snprintf(pids[1], 16, "%d", start_as(f, -1, "it-fair-py", pout, py_argv));
	wait_file_has(pout, "ready", 30);
	assert_int_equal(agent_proc_start(&agent, f->dir, argv), 0);
	snprintf(line, sizeof(line), "pid %s: reading CPython", pids[1]);
	assert_true(agent_proc_wait_log(&agent, line, 30));
	close(open(gate, O_WRONLY | O_CREAT, 0644));
	wait_file_has(sout, "loaded", 20);
	assert_non_null(realpath(lib, real));
	snprintf(attached, sizeof(attached), "span hook attached: %s (pid %s", real, pids[0]);
	assert_true(agent_proc_wait_log(&agent, attached, 20));
	let_go(gate);
	/* The span log gets the service's ended spans: named, cleaned. */
	snprintf(spans, sizeof(spans), "%s/it-fair-esc__2J_z.spans.jsonl", out);
	for (t0 = now_s(); text_file_lines_with(spans, "\"name\":\"" CLEAN_SPAN "\"") < 1;)
		if (now_s() - t0 > 30) {
			agent_proc_print_log(&agent);
			fail_msg("no cleaned span record in %s", spans);
		}
	assert_true(text_file_lines_with(spans, "\"service\":\"" CLEAN_SERVICE "\"") > 0);
	assert_int_equal(text_file_lines_with(spans, "\\u001b"), 0);
	assert_int_equal(text_file_lines_with(spans, "\\n"), 0);
	port = metrics_scrape_port(agent.log_path);
	assert_true(port > 0);
	snprintf(metric, sizeof(metric),
		 "spanprof_spans_total{service_name=\"" CLEAN_SERVICE "\",span_name=\"" CLEAN_SPAN
		 "\"}");
	assert_int_equal(metrics_scrape(port, metric, &v), 0);
	assert_true(v > 0);
	assert_int_equal(workload_wait(f->kids[1], 60), 0);
	usleep(1500 * 1000); /* the python process's last window */
	assert_int_equal(agent_proc_stop(&agent), 0);
	/* Rescanned at every mmap of its imports: said once all the same. */
	assert_int_equal(agent_proc_log_count(&agent, line), 1);
	/* Profiles: the service's namespace and span names, the Python function and its file. */
	memset(&c, 0, sizeof(c));
	census_watch(&c, "fair_service_work", NULL);
	assert_true(census_read(&c, out, "it-fair-esc__2J_z") > 0);
	printf("  service: %llu samples, span name '%s', namespace '%s'\n",
	       (unsigned long long)census_get(&c, "fair_service_work")->samples,
	       census_get(&c, "fair_service_work")->seen_span_name, c.service_namespace);
	assert_string_equal(census_get(&c, "fair_service_work")->seen_span_name, CLEAN_SPAN);
	assert_string_equal(c.service_namespace, "ns??");
	memset(&c, 0, sizeof(c));
	census_watch_file(&c, "evil?[31m?spin", NULL, "/tmp/evil?]0;t??.py");
	census_watch(&c, "evil\x1b[31m\nspin", NULL);
	assert_true(census_read(&c, out, "it-fair-py") > 0);
	printf("  python: %llu samples in the renamed function, %llu with its cleaned file\n",
	       (unsigned long long)c.funcs[0].samples, (unsigned long long)c.funcs[0].right_file);
	assert_true(c.funcs[0].samples >= 50);
	assert_true(c.funcs[0].right_file >= 50);
	assert_int_equal(c.funcs[1].samples, 0);
}

static long long file_size(const char *path)
{
	struct stat st;

	return stat(path, &st) ? -1 : (long long)st.st_size;
}

/* An unprivileged user sets a new span name at every span, as fast as it can, beside an
 * ordinary root service: the service's span records keep their names, its span times keep
 * their own series, its windows keep coming, and the flood's span log stays under
 * --span-log-max-bytes (1 MiB) in every file. */
static void test_span_name_flood_leaves_other_services_intact(void **state)
{
	struct fair *f = *state;
	char workload[600], gate[600], sout[600], fout[600], out[600], root_lib[600];
	char flood_lib[600], path[700], pids[2][16], metric[300];
	const char *flood_argv[] = { workload, "flood", flood_lib, "14", NULL };
	const char *service_argv[] = {
		workload, "service", root_lib, gate, SERVICE_SPAN, "10", NULL
	};
	const char *argv[] = { "--output",
			       out,
			       "--interval",
			       "1",
			       "--metrics-addr",
			       "127.0.0.1:0",
			       "--span-log-max-bytes",
			       "1MiB",
			       "--pid",
			       pids[0],
			       "--pid",
			       pids[1],
			       NULL };
	struct agent_proc agent;
	long long spans, named, records, size;
	double v, gap, started;
	int port, windows;

	if (!f)
		skip();
	create_user(f);
	snprintf(workload, sizeof(workload), "%s/fair_workload", f->dir);
	snprintf(flood_lib, sizeof(flood_lib), "%s/flood.so", f->dir);
	snprintf(root_lib, sizeof(root_lib), "%s/root-hook.so", f->dir);
	assert_int_equal(fixture_sh("cp '%s' '%s' && cp '%s' '%s' && cp '%s' '%s' && chmod 0755 "
				    "'%s' '%s'",
				    build_path("tests/workloads/fair_workload"), workload,
				    build_path("libspanprof.so"), flood_lib,
				    build_path("libspanprof.so"), root_lib, workload, flood_lib),
			 0);
	snprintf(gate, sizeof(gate), "%s/gate", f->dir);
	snprintf(sout, sizeof(sout), "%s/service.out", f->dir);
	snprintf(fout, sizeof(fout), "%s/flood.out", f->dir);
	snprintf(out, sizeof(out), "%s/out", f->dir);
	assert_int_equal(mkdir(out, 0755), 0);
	snprintf(pids[1], 16, "%d", start_as(f, -1, "it-fair-root", sout, service_argv));
	snprintf(pids[0], 16, "%d", start_as(f, f->user.uid, "it-fair-flood", fout, flood_argv));
	wait_file_has(fout, "ready", 30);
	assert_int_equal(agent_proc_start(&agent, f->dir, argv), 0);
	snprintf(path, sizeof(path), "span hook attached: %s", flood_lib);
	assert_true(agent_proc_wait_log(&agent, path, 30));
	started = profile_windows_now_s();
	close(open(gate, O_WRONLY | O_CREAT, 0644));
	wait_file_has(sout, "loaded", 20);
	snprintf(path, sizeof(path), "span hook attached: %s (pid %s", root_lib, pids[1]);
	assert_true(agent_proc_wait_log(&agent, path, 20));
	let_go(gate);
	assert_int_equal(workload_wait(f->kids[0], 60), 0); /* the service ran its spans */
	usleep(1500 * 1000); /* its last window and records */
	spans = text_file_number(sout, "spans=");
	windows = profile_windows_since(out, "it-fair-root", started, &gap);
	port = metrics_scrape_port(agent.log_path);
	assert_true(port > 0);
	snprintf(metric, sizeof(metric),
		 "spanprof_spans_total{service_name=\"it-fair-root\",span_name=\"" SERVICE_SPAN
		 "\"}");
	/* The records of its spans (it started them once its uprobe was attached): each counted in
	 * its own series, none in "other". */
	snprintf(path, sizeof(path), "%s/it-fair-root.spans.jsonl", out);
	records = text_file_lines_with(path, "\"service\":");
	v = 0;
	assert_int_equal(metrics_scrape(port, metric, &v), 0);
	printf("  service: %lld spans, %lld records, %.0f in its own series; %d windows, longest "
	       "gap %.1f s\n",
	       spans, records, v, windows, gap);
	assert_true(spans > 50);
	assert_true(records >= 0.98 * spans);
	assert_true(v >= 0.99 * records);
	snprintf(metric, sizeof(metric),
		 "spanprof_spans_total{service_name=\"it-fair-root\",span_name=\"other\"}");
	assert_int_equal(metrics_scrape(port, metric, &v), -1);
	assert_int_equal(
		metrics_scrape(port, "spanprof_fair_share_limited_total{bound=\"span_names\"}", &v),
		0);
	assert_true(v > 0);
	assert_true(windows >= 8);
	assert_true(gap < 3.0);
	assert_int_equal(workload_wait(f->kids[1], 60), 0); /* the flood is over */
	assert_int_equal(agent_proc_stop(&agent), 0);
	/* Every one of the service's records, with its name. */
	snprintf(path, sizeof(path), "%s/it-fair-root.spans.jsonl", out);
	named = text_file_lines_with(path, "\"name\":\"" SERVICE_SPAN "\"");
	records = text_file_lines_with(path, "\"service\":");
	printf("  service: %lld span records, %lld named, of %lld spans; flood: %lld spans\n",
	       records, named, spans, text_file_number(fout, "spans="));
	assert_true(records >= 0.98 * spans);
	assert_true(named >= 0.99 * records);
	snprintf(path, sizeof(path), "%s/it-fair-flood.spans.jsonl", out);
	size = file_size(path);
	assert_true(size > 0 && size <= 1 << 20);
	snprintf(path, sizeof(path), "%s/it-fair-flood.spans.jsonl.1", out);
	size = file_size(path);
	printf("  flood span log: %lld bytes in .1\n", size);
	assert_true(size <= 1 << 20);
}

#define UNWIND_COPIES 40 /* distinct ELF files of the user, many times its share of the budget */

/* Value of metric at /metrics, or -1. */
static double scrape(int port, const char *metric)
{
	double v;

	return metrics_scrape(port, metric, &v) ? -1 : v;
}

/* An unprivileged user maps 40 distinct copies of a large library (no build id, so each is its
 * own file) while a root service runs, with a 2 MiB unwind table budget: the user's tables do
 * not evict the service's, whose samples keep their CFI tables (no sample falls back to frame
 * pointers for an evicted table). */
static void test_unwind_budget_shared_fairly(void **state)
{
	struct fair *f = *state;
	char workload[600], gate[600], sout[600], mout[600], out[600], pids[2][16];
	char files[UNWIND_COPIES][600];
	const char *spin_argv[] = { build_path("tests/workloads/fair_workload"), "spin", "40",
				    NULL };
	const char *maps_argv[UNWIND_COPIES + 4];
	const char *argv[] = { "--output",
			       out,
			       "--interval",
			       "1",
			       "--metrics-addr",
			       "127.0.0.1:0",
			       "--unwind-table-bytes",
			       "2MiB",
			       "--pid",
			       pids[0],
			       "--pid",
			       pids[1],
			       NULL };
	struct agent_proc agent;
	double stale0, stale1, gap, t0, from;
	int i, port, windows;

	if (!f)
		skip();
	if (!UNWIND_SUPPORTED_HERE) {
		printf("  no BPF unwinder on this architecture: skipped\n");
		skip();
	}
	create_user(f);
	snprintf(workload, sizeof(workload), "%s/fair_workload", f->dir);
	assert_int_equal(fixture_sh("cp '%s' '%s' && chmod 0755 '%s' && mkdir -m 0755 '%s/libs' && "
				    "for i in $(seq 0 %d); do objcopy --remove-section "
				    ".note.gnu.build-id '%s' \"%s/libs/big-$i.so\"; done && "
				    "chmod 0644 '%s'/libs/*",
				    build_path("tests/workloads/fair_workload"), workload, workload,
				    f->dir, UNWIND_COPIES - 1,
				    "/usr/lib/x86_64-linux-gnu/libstdc++.so.6", f->dir, f->dir),
			 0);
	snprintf(gate, sizeof(gate), "%s/gate", f->dir);
	snprintf(sout, sizeof(sout), "%s/spin.out", f->dir);
	snprintf(mout, sizeof(mout), "%s/maps.out", f->dir);
	snprintf(out, sizeof(out), "%s/out", f->dir);
	assert_int_equal(mkdir(out, 0755), 0);
	maps_argv[0] = workload;
	maps_argv[1] = "maps";
	maps_argv[2] = gate;
	for (i = 0; i < UNWIND_COPIES; i++) {
		snprintf(files[i], sizeof(files[i]), "%s/libs/big-%d.so", f->dir, i);
		maps_argv[i + 3] = files[i];
	}
	maps_argv[UNWIND_COPIES + 3] = NULL;
	snprintf(pids[0], 16, "%d", start_as(f, -1, "it-fair-victim", sout, spin_argv));
	wait_file_has(sout, "ready", 30);
	snprintf(pids[1], 16, "%d", start_as(f, f->user.uid, "it-fair-maps", mout, maps_argv));
	assert_int_equal(agent_proc_start(&agent, f->dir, argv), 0);
	port = metrics_scrape_port(agent.log_path);
	assert_true(port > 0);
	/* The service's tables are in (its executable, libc, the loader), then the user maps. */
	for (t0 = now_s(); scrape(port, "spanprof_unwind_files{state=\"ready\"}") < 3;)
		if (now_s() - t0 > 60)
			fail_msg("the service's unwind tables were never built");
	close(open(gate, O_WRONLY | O_CREAT, 0644));
	wait_file_has(mout, "mapped", 30);
	/* Every copy built: stored, refused or evicted, none still building. */
	for (t0 = now_s(); scrape(port, "spanprof_unwind_table_evictions_total") +
					   scrape(port, "spanprof_fair_share_limited_total{bound="
							"\"unwind_table_refused\"}") <
				   UNWIND_COPIES / 2 ||
			   scrape(port, "spanprof_unwind_files{state=\"building\"}") > 0;)
		if (now_s() - t0 > 120) {
			agent_proc_print_log(&agent);
			fail_msg("the user's files were not all built");
		}
	stale0 = scrape(port, "spanprof_samples_dropped_total{reason=\"unwind_table_evicted\"}");
	from = profile_windows_now_s();
	for (t0 = now_s();
	     (windows = profile_windows_since(out, "it-fair-victim", from, &gap)) < 4;)
		if (now_s() - t0 > 30)
			break;
	stale1 = scrape(port, "spanprof_samples_dropped_total{reason=\"unwind_table_evicted\"}");
	printf("  %d windows of the service after the user's %d files; samples on an evicted "
	       "table: %.0f (%.0f before); evictions %.0f, refused %.0f\n",
	       windows, UNWIND_COPIES, stale1 - stale0, stale0,
	       scrape(port, "spanprof_unwind_table_evictions_total"),
	       scrape(port, "spanprof_fair_share_limited_total{bound=\"unwind_table_refused\"}"));
	assert_true(windows >= 4);
	assert_true(stale0 >= 0 && stale1 >= 0);
	assert_true(stale0 + (stale1 - stale0) < 5);
	assert_int_equal(agent_proc_stop(&agent), 0);
}

/* The user's services of one window in dir, by window start: the most any window held, and the
 * windows of the user's services in all (files "<start>Z-<seq>-it-fair-uN.pb.gz", CPU only). */
static int user_services_per_window(const char *dir, double from, int *total)
{
	char starts[256][32], *z;
	int counts[256] = { 0 }, nstarts = 0, i, most = 0;
	struct dirent *e;
	size_t n;
	DIR *d = opendir(dir);

	*total = 0;
	assert_non_null(d);
	while ((e = readdir(d))) {
		z = strstr(e->d_name, "-it-fair-u");
		if (!z || profile_window_start_s(e->d_name) < from)
			continue;
		z += strlen("-it-fair-u");
		n = strspn(z, "0123456789");
		if (!n || strcmp(z + n, ".pb.gz"))
			continue;
		n = strcspn(e->d_name, "Z");
		for (i = 0; i < nstarts; i++)
			if (strlen(starts[i]) == n && !strncmp(starts[i], e->d_name, n))
				break;
		if (i == nstarts && nstarts < 256)
			snprintf(starts[nstarts++], sizeof(starts[0]), "%.*s", (int)n, e->d_name);
		if (i < 256) {
			counts[i]++;
			most = counts[i] > most ? counts[i] : most;
		}
		(*total)++;
	}
	closedir(d);
	return most;
}

/* An unprivileged user runs SERVICE_HOGS processes, each naming its own service, next to a root
 * service, with --max-services 4: in every window the user holds at most 2 of the 4 services
 * (half), the root service has a profile in each window, and the counter shows the share bit. */
static void test_services_per_window_fair_per_user(void **state)
{
	struct fair *f = *state;
	char workload[600], out[600], rout[600], uout[SERVICE_HOGS][600], svc[32];
	char pids[SERVICE_HOGS + 1][16];
	const char *root_argv[] = { build_path("tests/workloads/fair_workload"), "tick", "90", "10",
				    NULL };
	const char *user_argv[] = { workload, "tick", "90", "2", NULL };
	const char *argv[8 + 2 * (SERVICE_HOGS + 1) + 1] = { "--output",       out,
							     "--interval",     "1",
							     "--metrics-addr", "127.0.0.1:0",
							     "--max-services", "4" };
	struct agent_proc agent;
	double refused, from, t0, gap;
	int i, port, windows, most, total;

	if (!f)
		skip();
	create_user(f);
	snprintf(workload, sizeof(workload), "%s/fair_workload", f->dir);
	assert_int_equal(fixture_sh("cp '%s' '%s' && chmod 0755 '%s'",
				    build_path("tests/workloads/fair_workload"), workload,
				    workload),
			 0);
	snprintf(out, sizeof(out), "%s/out", f->dir);
	assert_int_equal(mkdir(out, 0755), 0);
	snprintf(rout, sizeof(rout), "%s/root.out", f->dir);
	snprintf(pids[0], 16, "%d", start_as(f, -1, "it-fair-root", rout, root_argv));
	for (i = 0; i < SERVICE_HOGS; i++) {
		snprintf(uout[i], sizeof(uout[i]), "%s/u%d.out", f->dir, i);
		snprintf(svc, sizeof(svc), "it-fair-u%d", i);
		snprintf(pids[i + 1], 16, "%d", start_as(f, f->user.uid, svc, uout[i], user_argv));
	}
	wait_file_has(rout, "ready", 30);
	for (i = 0; i < SERVICE_HOGS; i++)
		wait_file_has(uout[i], "ready", 30);
	for (i = 0; i <= SERVICE_HOGS; i++) {
		argv[8 + 2 * i] = "--pid";
		argv[9 + 2 * i] = pids[i];
	}
	assert_int_equal(agent_proc_start(&agent, f->dir, argv), 0);
	port = metrics_scrape_port(agent.log_path);
	assert_true(port > 0);
	for (t0 = now_s(); (refused = scrape(port, "spanprof_fair_share_limited_total{bound="
						   "\"service_slot_refused\"}")) <= 0;)
		if (now_s() - t0 > 60) {
			agent_proc_print_log(&agent);
			fail_msg("the user's services were never refused a slot (%.0f)", refused);
		}
	from = profile_windows_now_s() + 1;
	for (t0 = now_s(); (windows = profile_windows_since(out, "it-fair-root", from, &gap)) < 5;)
		if (now_s() - t0 > 60)
			break;
	most = user_services_per_window(out, from, &total);
	printf("  root service: %d windows (longest gap %.2f s); user's services: at most %d in a "
	       "window, %d profiles; samples refused %.0f\n",
	       windows, gap, most, total,
	       scrape(port, "spanprof_fair_share_limited_total{bound=\"service_slot_refused\"}"));
	assert_true(windows >= 5);
	assert_true(gap < 3.5);
	assert_in_range(most, 1, 2);
	assert_true(agent_proc_wait_log(&agent, "not profiled this window: uid", 5));
	assert_int_equal(agent_proc_stop(&agent), 0);
}

/* A Ruby method whose label the process rewrites in its own memory (ESC, newline) and whose
 * eval'd file name carries ESC, BEL and a newline; called through its Method object, since its
 * name no longer matches the rewritten string. */
static const char rb_script[] =
	"require 'fiddle'\n"
	"ev = eval(\"def evil_x31m_spin(t_end)\\n\" \\\n"
	"          \"  x = 0\\n\" \\\n"
	"          \"  x += 1 while Process.clock_gettime(Process::CLOCK_MONOTONIC) < t_end\\n\" \\\n"
	"          \"  x\\nend\\n\" \\\n"
	"          \"RubyVM::InstructionSequence.of(method(:evil_x31m_spin))\",\n"
	"          binding, \"/tmp/evil\\e]0;t\\a\\n.rb\", 1)\n"
	"m = method(:evil_x31m_spin)\n"
	"label = Fiddle::Pointer[ev.label]\n"
	"label[4] = 27\n"
	"label[9] = 10\n"
	"puts 'ready'\n"
	"$stdout.flush\n"
	"sleep 0.02 until File.exist?(ARGV[0])\n"
	"m.call(Process.clock_gettime(Process::CLOCK_MONOTONIC) + ARGV[1].to_f)\n";

/* The same for Debian's Ruby: its profiles name the method and its file with '?' in place of
 * each control character, and never the raw name. */
static void test_ruby_control_characters_cleaned_at_entry(void **state)
{
	struct fair *f = *state;
	char gate[600], rout[600], out[600], script[600], pids[1][16], line[64];
	const char *rb_argv[] = { "/usr/bin/ruby", script, gate, "8", NULL };
	const char *argv[] = { "--output", out, "--interval", "1", "--pid", pids[0], NULL };
	struct agent_proc agent;
	struct census c;

	if (!f)
		skip();
	if (access("/usr/bin/ruby", X_OK)) {
		printf("  no /usr/bin/ruby: skipped\n");
		skip();
	}
	snprintf(gate, sizeof(gate), "%s/gate", f->dir);
	snprintf(rout, sizeof(rout), "%s/ruby.out", f->dir);
	snprintf(script, sizeof(script), "%s/evil.rb", f->dir);
	snprintf(out, sizeof(out), "%s/out", f->dir);
	assert_int_equal(mkdir(out, 0755), 0);
	text_file_write(script, rb_script);
	snprintf(pids[0], 16, "%d", start_as(f, -1, "it-fair-rb", rout, rb_argv));
	wait_file_has(rout, "ready", 30);
	assert_int_equal(agent_proc_start(&agent, f->dir, argv), 0);
	snprintf(line, sizeof(line), "pid %s: reading CRuby", pids[0]);
	if (!agent_proc_wait_log(&agent, line, 30)) {
		agent_proc_print_log(&agent);
		fail_msg("the agent never read the Ruby process's frames");
	}
	close(open(gate, O_WRONLY | O_CREAT, 0644));
	assert_int_equal(workload_wait(f->kids[0], 60), 0);
	usleep(1500 * 1000); /* the ruby process's last window */
	assert_int_equal(agent_proc_stop(&agent), 0);
	memset(&c, 0, sizeof(c));
	census_watch_file(&c, "evil?x31m?spin", NULL, "/tmp/evil?]0;t??.rb");
	census_watch(&c, "evil\x1bx31m\nspin", NULL);
	assert_true(census_read(&c, out, "it-fair-rb") > 0);
	printf("  ruby: %llu samples in the renamed method, %llu with its cleaned file, %llu with "
	       "the raw name\n",
	       (unsigned long long)c.funcs[0].samples, (unsigned long long)c.funcs[0].right_file,
	       (unsigned long long)c.funcs[1].samples);
	assert_true(c.funcs[0].samples >= 50);
	assert_true(c.funcs[0].right_file >= 50);
	assert_int_equal(c.funcs[1].samples, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_hook_slots_fair_and_detached_off_the_run_loop,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_control_characters_cleaned_at_entry, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_span_name_flood_leaves_other_services_intact,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_unwind_budget_shared_fairly, setup, teardown),
		cmocka_unit_test_setup_teardown(test_services_per_window_fair_per_user, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_ruby_control_characters_cleaned_at_entry,
						setup, teardown),
	};

	if (getenv("FAIR_ONLY")) /* one test by name pattern, while working on it */
		cmocka_set_test_filter(getenv("FAIR_ONLY"));
	return cmocka_run_group_tests_name("fair_share", tests, NULL, NULL);
}
