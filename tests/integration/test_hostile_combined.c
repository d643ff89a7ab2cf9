// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Every attack of a local user at once, against the real agent: crafted files (a .gopclntab
 * whose rows all name one 4 MB string, sections claiming gigabytes of a sparse file, an
 * .eh_frame FDE of 200,000 rows), processes holding every hook-file slot, and a span-name
 * flood, while an ordinary root service with its own hook library runs. The service's profiles
 * arrive every window with its spans, its span names intact and its native stacks whole; the
 * agent's RSS stays under its share of the Helm chart's memory limit, and the agent stops within
 * 2 s of SIGTERM. */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
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
#include <unistd.h>
#include <cmocka.h>

#include "agent_proc.h"
#include "fixture_build.h"
#include "hook_hogs.h"
#include "hostile_fixture.h"
#include "metrics_scrape.h"
#include "parser_bombs.h"
#include "profile_census.h"
#include "profile_windows.h"
#include "text_file.h"

#define SERVICE "it-combined-root"
#define SERVICE_SPAN "GET /checkout"
#define SERVICE_S 12 /* seconds the root service runs its spans */
#define FILE_ATTACKS 4
/* An ASan build (make sanitize) keeps shadow memory and a quarantine of freed blocks besides:
 * there the RSS share of the chart's memory limit is taken 4 times, still far below the
 * gigabytes the attacks made the agent allocate. */
#if defined(__SANITIZE_ADDRESS__)
#define MEMORY_LIMIT_FACTOR 4
#else
#define MEMORY_LIMIT_FACTOR 1
#endif

static int setup(void **state)
{
	struct hostile_fixture *f;

	if (hostile_fixture_new("it-hostile-combined", &f))
		return -1;
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	hostile_fixture_free(*state);
	return 0;
}

/* The crafted files, each mapped by a process of the user (hostile_workload map). */
static void start_file_attacks(struct hostile_fixture *f, char (*files)[600])
{
	char out[64];
	int i;

	snprintf(files[0], 600, "%s/gopclntab-4mb-name.so", f->dir);
	snprintf(files[1], 600, "%s/gopclntab-60kb-name.so", f->dir);
	snprintf(files[2], 600, "%s/sparse-sections.so", f->dir);
	snprintf(files[3], 600, "%s/libcfibomb.so", f->dir);
	assert_int_equal(parser_bomb_gopclntab(files[0], 500000, 4u << 20), 0);
	assert_int_equal(parser_bomb_gopclntab(files[1], 500000, 60000), 0);
	assert_int_equal(
		parser_bomb_sparse(files[2], SPARSE_GOPCLNTAB | SPARSE_BUILDINFO | SPARSE_EH_FRAME),
		0);
	assert_int_equal(parser_bomb_cfi(f->dir, files[3], 200000), 0);
	for (i = 0; i < FILE_ATTACKS; i++) {
		const char *map[] = { f->workload, "map", files[i], "120", NULL };

		snprintf(out, sizeof(out), "attacker%d.out", i);
		if (hostile_fixture_spawn(f, f->user.uid, "it-combined-files", out, map, 20) < 0)
			fail_msg("the attacker never mapped %s", files[i]);
	}
}

/* Waits for the agent's line for the file attacks it logs: each was met, and refused. The
 * rows naming a 4 MB string (over the name cap) are passed over without a line; the 60 KB ones
 * spend the search budget. */
static void wait_file_attacks_refused(struct agent_proc *agent, char (*files)[600])
{
	char want[3][1900];
	int i;

	snprintf(want[0], sizeof(want[0]), "span hook candidate %s (pid ", files[1]);
	snprintf(want[1], sizeof(want[1]), "span hook candidate %s (pid ", files[2]);
	snprintf(want[2], sizeof(want[2]),
		 "unwind table of %s not built: its CFI spent the build budget", files[3]);
	for (i = 0; i < 3; i++)
		if (!agent_proc_wait_log(agent, want[i], 60)) {
			agent_proc_print_log(agent);
			fail_msg("the agent never logged \"%s\"", want[i]);
		}
}

/* Windows of the service since from_s in which its work carried no span: each profile is read
 * on its own (linked alone into dir/one). */
static int windows_without_spans(const char *out, double from_s, int *read)
{
	char one[700], from[1400], to[1400];
	struct dirent *de;
	struct census c;
	int missing = 0;
	DIR *d = opendir(out);

	snprintf(one, sizeof(one), "%s/one", out);
	assert_int_equal(mkdir(one, 0755), 0);
	*read = 0;
	while (d && (de = readdir(d))) {
		if (!strstr(de->d_name, "-" SERVICE ".pb.gz") ||
		    profile_window_start_s(de->d_name) < from_s)
			continue;
		snprintf(from, sizeof(from), "%s/%s", out, de->d_name);
		snprintf(to, sizeof(to), "%s/%s", one, de->d_name);
		assert_int_equal(link(from, to), 0);
		memset(&c, 0, sizeof(c));
		census_watch(&c, "fair_service_work", NULL);
		assert_int_equal(census_read(&c, one, SERVICE), 1);
		missing += census_get(&c, "fair_service_work")->with_trace == 0;
		(*read)++;
		unlink(to);
	}
	if (d)
		closedir(d);
	rmdir(one);
	return missing;
}

static void test_every_attack_at_once_leaves_a_root_service_whole(void **state)
{
	struct hostile_fixture *f = *state;
	char files[FILE_ATTACKS][600], workload[600], root_lib[600], flood_lib[600], gate[600];
	char go[700], sout[700], out[600], line[800], spans_log[700];
	char pids[HOSTILE_MAX_PIDS][16];
	const char *flood_argv[] = { workload, "flood", flood_lib, "120", NULL };
	const char *service_argv[] = { workload, "service",    root_lib,
				       gate,	 SERVICE_SPAN, "12" /* SERVICE_S */,
				       NULL };
	const char *argv[2 * HOSTILE_MAX_PIDS + 8];
	struct agent_proc agent;
	struct census c;
	uint64_t rss, limit = MEMORY_LIMIT_FACTOR * hostile_chart_rss_limit();
	double t0, started, gap, took, flood_limited = 0;
	long long spans, records, named;
	int i, n = 0, started_hogs, windows, bare, read, status, port;
	pid_t service;

	if (!f)
		skip();
	assert_true(limit > 0);
	snprintf(out, sizeof(out), "%s/out", f->dir);
	assert_int_equal(mkdir(out, 0755), 0);
	/* The user's processes: every hook-file slot, the crafted files, the flood (through one
	 * of the hogs' copies, so all 256 slots stay the user's). */
	assert_int_equal(hook_hogs_stage(f->dir), 0);
	i = hook_hogs_start(f->dir, f->user.uid, 30, f->pids + f->npids, &started_hogs);
	f->npids += started_hogs;
	assert_int_equal(i, 0);
	start_file_attacks(f, files);
	snprintf(workload, sizeof(workload), "%s/fair_workload", f->dir);
	snprintf(flood_lib, sizeof(flood_lib), "%s/libs/hog-0.so", f->dir);
	if (hostile_fixture_spawn(f, f->user.uid, "it-combined-flood", "flood.out", flood_argv,
				  20) < 0)
		fail_msg("the span-name flood never started");
	/* The root service maps its own hook library once GATE exists, and runs its spans once
	 * GATE.go exists (the test saw its uprobe attached). */
	snprintf(root_lib, sizeof(root_lib), "%s/root-hook.so", f->dir);
	snprintf(gate, sizeof(gate), "%s/gate", f->dir);
	snprintf(go, sizeof(go), "%s.go", gate);
	snprintf(sout, sizeof(sout), "%s/service.out", f->dir);
	service = hostile_fixture_spawn(f, -1, SERVICE, "service.out", service_argv, 0);
	assert_true(service > 0);
	argv[n++] = "--output";
	argv[n++] = out;
	argv[n++] = "--interval";
	argv[n++] = "1";
	argv[n++] = "--metrics-addr";
	argv[n++] = "127.0.0.1:0";
	for (i = 0; i < f->npids; i++) {
		snprintf(pids[i], sizeof(pids[i]), "%d", (int)f->pids[i]);
		argv[n++] = "--pid";
		argv[n++] = pids[i];
	}
	argv[n] = NULL;
	assert_int_equal(hostile_fixture_start_agent(f, &agent, argv), 0);
	for (t0 = hostile_now_s();
	     agent_proc_log_count(&agent, "span hook attached: ") < HOOK_SLOTS;)
		if (hostile_now_s() - t0 > 60) {
			agent_proc_print_log(&agent);
			fail_msg("the user's %d hook files were not all attached", HOOK_SLOTS);
		}
	wait_file_attacks_refused(&agent, files);
	/* Now the root service maps its hook, with every slot held and the flood going. */
	close(open(gate, O_WRONLY | O_CREAT, 0644));
	assert_int_equal(unpriv_wait_file_has(sout, "loaded", 20), 0);
	snprintf(line, sizeof(line), "span hook attached: %s (pid %d", root_lib, (int)service);
	if (!agent_proc_wait_log(&agent, line, 20)) {
		agent_proc_print_log(&agent);
		fail_msg("the root service's hook was never attached");
	}
	/* ... in a slot taken back from the user (the line names both). */
	snprintf(line, sizeof(line), "for %s (pid %d, uid 0", root_lib, (int)service);
	assert_true(agent_proc_log_contains(&agent, line));
	started = profile_windows_now_s();
	close(open(go, O_WRONLY | O_CREAT, 0644));
	assert_int_equal(workload_wait(service, SERVICE_S + 30), 0);
	usleep(1500 * 1000); /* its last window and span records */
	spans = text_file_number(sout, "spans=");
	windows = profile_windows_since(out, SERVICE, started, &gap);
	rss = hostile_peak_rss(agent.pid);
	port = metrics_scrape_port(agent.log_path);
	assert_true(port > 0);
	assert_int_equal(metrics_scrape(port,
					"spanprof_fair_share_limited_total{bound=\"span_names\"}",
					&flood_limited),
			 0);
	/* Stopped with every attack still in place: the hogs' uprobes, the flood, the files. */
	took = hostile_sigterm(agent.pid, &status);
	snprintf(spans_log, sizeof(spans_log), "%s/" SERVICE ".spans.jsonl", out);
	records = text_file_lines_with(spans_log, "\"service\":");
	named = text_file_lines_with(spans_log, "\"name\":\"" SERVICE_SPAN "\"");
	bare = windows_without_spans(out, started, &read);
	memset(&c, 0, sizeof(c));
	census_watch(&c, "fair_service_work", NULL);
	census_watch(&c, "service", NULL);
	census_watch(&c, "main", NULL);
	assert_true(census_read(&c, out, SERVICE) > 0);
	printf("  root service: %lld spans, %lld records (%lld named); %d windows in %d s, longest "
	       "gap %.2f s, %d of %d without spans\n",
	       spans, records, named, windows, SERVICE_S, gap, bare, read);
	printf("  its work: %llu samples, %llu with a trace, span name '%s'; under service() %llu, "
	       "under main() %llu\n",
	       (unsigned long long)census_get(&c, "fair_service_work")->samples,
	       (unsigned long long)census_get(&c, "fair_service_work")->with_trace,
	       census_get(&c, "fair_service_work")->seen_span_name,
	       (unsigned long long)census_get(&c, "service")->samples,
	       (unsigned long long)census_get(&c, "main")->samples);
	printf("  flood: %.0f span names over the user's share\n", flood_limited);
	printf("  agent: peak RSS %llu MiB (RSS share of the chart limit %llu MiB), stopped %.2f s after SIGTERM\n",
	       (unsigned long long)rss >> 20, (unsigned long long)limit >> 20, took);
	assert_true(flood_limited > 0); /* the flood was on */
	/* Every window, with its spans. */
	assert_true(windows >= SERVICE_S - 2);
	assert_true(gap < 1.9);
	assert_int_equal(bare, 0);
	/* Span names intact, in the records and the profiles. */
	assert_true(spans > 50);
	assert_true(records >= 0.98 * spans);
	assert_true(named >= 0.99 * records);
	assert_string_equal(census_get(&c, "fair_service_work")->seen_span_name, SERVICE_SPAN);
	assert_true(census_get(&c, "fair_service_work")->samples >= 5 * SERVICE_S);
	assert_true(census_get(&c, "fair_service_work")->with_trace >=
		    0.99 * census_get(&c, "fair_service_work")->samples);
	/* Native stacks whole: the work's callers down to main. */
	assert_true(census_get(&c, "service")->samples >=
		    0.95 * census_get(&c, "fair_service_work")->samples);
	assert_true(census_get(&c, "main")->samples >= census_get(&c, "service")->samples);
	/* Small, and prompt to stop. */
	assert_true(rss > 0 && rss < limit);
	if (took < 0)
		fail_msg("agent ignored SIGTERM for 30 s");
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	assert_true(took < 2.0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(
			test_every_attack_at_once_leaves_a_root_service_whole, setup, teardown),
	};

	/* HOSTILE_KEEP=1 keeps the temp dir (agent log, profiles). */
	return cmocka_run_group_tests_name("hostile_combined", tests, NULL, NULL);
}
