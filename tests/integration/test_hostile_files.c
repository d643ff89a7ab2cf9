// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Crafted files an unprivileged user maps, against the real agent: a .gopclntab whose rows all
 * name one long string, sections that claim gigabytes of a sparse file, and an .eh_frame whose
 * one FDE has 200,000 rows. An ordinary service profiled alongside
 * keeps its windows, the agent stays small and stops promptly, and each refusal is logged with
 * the file's path and counted. */
#define _GNU_SOURCE
#include <errno.h>
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
#include "crafted_elf.h"
#include "fixture_build.h"
#include "hostile_fixture.h"
#include "metrics_scrape.h"
#include "parser_bombs.h"
#include "profile_windows.h"

/* An ASan build (make sanitize) keeps shadow memory and a quarantine of freed blocks besides:
 * there the RSS share of the chart's memory limit is taken 4 times, still far below the
 * gigabytes the attacks made the agent allocate. */
#if defined(__SANITIZE_ADDRESS__)
#define MEMORY_LIMIT_FACTOR 4
#else
#define MEMORY_LIMIT_FACTOR 1
#endif
#define MAX_ATTACKERS 8

static int setup(void **state)
{
	struct hostile_fixture *f;

	if (hostile_fixture_new("it-hostile-files", &f))
		return -1;
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	hostile_fixture_free(*state);
	return 0;
}

/* Starts the agent, then lets the normal workload (held by start_all) begin. */
static void start_agent(struct hostile_fixture *f, struct agent_proc *agent,
			const char *const *argv)
{
	char gate[700];

	assert_int_equal(hostile_fixture_start_agent(f, agent, argv), 0);
	snprintf(gate, sizeof(gate), "%s/normal-go", f->dir);
	close(open(gate, O_WRONLY | O_CREAT, 0644));
}

/* Starts an ordinary workload as root (service it-parsers-normal) and the attackers as the
 * user, each mapping one crafted file; fills pid_args for --pid. The workload gives up when no
 * agent attaches its hook within 10 s, so it is held (a shell that then execs it, keeping the
 * pid) until start_agent() opens its gate. */
static void start_all(struct hostile_fixture *f, const char *const *files, int n,
		      char pid_args[][16])
{
	char out[64], gate[700];
	const char *work[] = { "/bin/sh",
			       "-c",
			       "while [ ! -e \"$0\" ]; do sleep 0.05; done; exec \"$1\" spans 1 60",
			       gate,
			       build_path("tests/workloads/span_workload"),
			       NULL };
	int i;

	snprintf(gate, sizeof(gate), "%s/normal-go", f->dir);
	assert_true(n <= MAX_ATTACKERS);
	assert_true(hostile_fixture_spawn(f, -1, "it-parsers-normal", "normal.out", work, 0) > 0);
	for (i = 0; i < n; i++) {
		const char *map[] = { f->workload, "map", files[i], "60", NULL };

		snprintf(out, sizeof(out), "attacker%d.out", i);
		if (hostile_fixture_spawn(f, f->user.uid, "it-parsers-attacker", out, map, 20) < 0)
			fail_msg("attacker %d never mapped %s", i, files[i]);
	}
	for (i = 0; i < f->npids; i++)
		snprintf(pid_args[i], 16, "%d", f->pids[i]);
}

static int normal_windows(const char *dir, double *max_gap_s)
{
	return hostile_windows(dir, "it-parsers-normal", max_gap_s);
}

static double guard_count(int port, const char *guard)
{
	double v = -1;

	if (hostile_guard(port, guard, &v))
		fail_msg("/metrics has no guard %s", guard);
	return v;
}

/* Polls /metrics until guard counts at least want; returns the last value read. */
static double wait_guard(int port, const char *guard, double want, double timeout_s)
{
	double end = hostile_now_s() + timeout_s, v;

	while ((v = guard_count(port, guard)) < want && hostile_now_s() < end)
		usleep(100000);
	return v;
}

/* The agent profiles the normal workload and the attackers for run_s seconds: the normal
 * service's windows must come every second, and the agent must stop within 2 s of SIGTERM. */
static void check_windows_and_sigterm(const char *out, struct agent_proc *agent, double run_s)
{
	double start = hostile_now_s(), gap, took;
	int windows, status;

	while (hostile_now_s() - start < run_s)
		usleep(100000);
	windows = normal_windows(out, &gap);
	took = hostile_sigterm(agent->pid, &status);
	printf("  %d windows of the normal service, at most %.2f s apart; stopped %.2f s after "
	       "SIGTERM\n",
	       windows, gap, took);
	if (took < 0)
		fail_msg("agent ignored SIGTERM for 30 s");
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	assert_true(windows >= (int)run_s - 2);
	assert_true(gap < 1.9);
	assert_true(took < 2.0);
}

static void write_gopclntab_bomb(const char *path, uint64_t nfunc, size_t name_len)
{
	assert_int_equal(parser_bomb_gopclntab(path, nfunc, name_len), 0);
}

/* 500,000 functab rows naming one 4 MB string (each row made the agent scan the string), and
 * the same with a 60 KB string (under the name cap: the name budget stops it). */
static void test_gopclntab_bomb_does_not_stall_the_run_loop(void **state)
{
	struct hostile_fixture *f = *state;
	char out[600], long_name[600], budget[600], pids[3][16], want[800];
	const char *files[] = { long_name, budget };
	const char *argv[] = { "--output",    out,     "--interval", "1",     "--metrics-addr",
			       "127.0.0.1:0", "--pid", pids[0],	     "--pid", pids[1],
			       "--pid",	      pids[2], NULL };
	struct agent_proc agent;
	int port;

	if (!f)
		skip();
	snprintf(out, sizeof(out), "%s/out", f->dir);
	assert_int_equal(mkdir(out, 0755), 0);
	snprintf(long_name, sizeof(long_name), "%s/gopclntab-4mb-name.so", f->dir);
	snprintf(budget, sizeof(budget), "%s/gopclntab-60kb-name.so", f->dir);
	write_gopclntab_bomb(long_name, 500000, 4u << 20);
	write_gopclntab_bomb(budget, 500000, 60000);
	start_all(f, files, 2, pids);
	start_agent(f, &agent, argv);
	port = metrics_scrape_port(agent.log_path);
	assert_true(port > 0);
	snprintf(want, sizeof(want), "span hook candidate %s (pid %d) refused", budget,
		 (int)f->pids[2]);
	if (!agent_proc_wait_log(&agent, want, 30))
		fail_msg("the agent never logged \"%s\"", want);
	assert_true(wait_guard(port, "elf_section_refused", 1, 10) >= 1);
	check_windows_and_sigterm(out, &agent, 8);
}

/* Sections claiming gigabytes of files that hold a few kilobytes on disk: .gopclntab (read by
 * hook discovery), .go.buildinfo (Go version) and .eh_frame (unwind tables). */
static void test_sparse_sections_are_refused_before_allocation(void **state)
{
	struct hostile_fixture *f = *state;
	char out[600], pcln[600], info[600], pids[3][16], wants[3][800];
	const char *files[] = { pcln, info };
	int logged[3], i;
	const char *argv[] = { "--output",    out,     "--interval", "1",     "--metrics-addr",
			       "127.0.0.1:0", "--pid", pids[0],	     "--pid", pids[1],
			       "--pid",	      pids[2], NULL };
	struct agent_proc agent;
	uint64_t rss, limit = MEMORY_LIMIT_FACTOR * hostile_chart_rss_limit();
	int port;

	if (!f)
		skip();
	assert_true(limit > 0);
	snprintf(out, sizeof(out), "%s/out", f->dir);
	assert_int_equal(mkdir(out, 0755), 0);
	snprintf(pcln, sizeof(pcln), "%s/sparse-gopclntab.so", f->dir);
	snprintf(info, sizeof(info), "%s/sparse-buildinfo-ehframe.so", f->dir);
	assert_int_equal(parser_bomb_sparse(pcln, SPARSE_GOPCLNTAB), 0);
	assert_int_equal(parser_bomb_sparse(info, SPARSE_BUILDINFO | SPARSE_EH_FRAME), 0);
	printf("  %s: %llu KB on disk; %s: %llu KB\n", pcln,
	       (unsigned long long)crafted_elf_disk_bytes(pcln) >> 10, info,
	       (unsigned long long)crafted_elf_disk_bytes(info) >> 10);
	assert_true(crafted_elf_disk_bytes(pcln) < (1u << 20));
	assert_true(crafted_elf_disk_bytes(info) < (1u << 20));
	start_all(f, files, 2, pids);
	start_agent(f, &agent, argv);
	port = metrics_scrape_port(agent.log_path);
	assert_true(port > 0);
	snprintf(wants[0], sizeof(wants[0]), "span hook candidate %s (pid %d) refused", pcln,
		 (int)f->pids[1]);
	snprintf(wants[1], sizeof(wants[1]), "span hook candidate %s (pid %d) refused", info,
		 (int)f->pids[2]);
	snprintf(wants[2], sizeof(wants[2]), "unwind table of %s not built", info);
	for (i = 0; i < 3; i++)
		logged[i] = agent_proc_wait_log(&agent, wants[i], 30);
	rss = hostile_peak_rss(agent.pid);
	printf("  agent peak RSS %llu MB (RSS share of the chart limit %llu MB)\n",
	       (unsigned long long)rss >> 20, (unsigned long long)limit >> 20);
	assert_true(rss > 0 && rss < limit);
	for (i = 0; i < 3; i++)
		if (!logged[i])
			fail_msg("the agent never logged \"%s\"", wants[i]);
	assert_true(wait_guard(port, "elf_section_refused", 3, 10) >= 3);
	check_windows_and_sigterm(out, &agent, 4);
}

/* Polls the agent's count of built unwind tables until it reaches want (timeout_s). */
static double wait_tables_ready(int port, double want, double timeout_s)
{
	double end = hostile_now_s() + timeout_s, ready = 0;

	while (hostile_now_s() < end) {
		if (!metrics_scrape(port, "spanprof_unwind_files{state=\"ready\"}", &ready) &&
		    ready >= want)
			break;
		usleep(100000);
	}
	return ready;
}

/* One FDE of 200,000 rows: libdw replays it from its start for each row. The worker must give
 * up on it quickly (counted and logged, the file left to frame pointers), so that a victim
 * mapping a new library after it gets that library's table at once. */
static void test_cfi_bomb_does_not_starve_table_building(void **state)
{
	static const char victim_src[] = "int victim_fn(int x) { return x * 3 + 1; }\n";
	struct hostile_fixture *f = *state;
	char out[600], lib[600], victim_lib[600], src[600], gate[600], log[600], pids[3][16];
	char want[800];
	const char *files[] = { lib };
	const char *victim[] = { f ? f->workload : NULL, "mapafter", victim_lib, gate, "60", NULL };
	const char *argv[] = { "--output",    out,     "--interval", "1",     "--metrics-addr",
			       "127.0.0.1:0", "--pid", pids[1],	     "--pid", pids[0],
			       "--pid",	      pids[2], NULL };
	struct agent_proc agent;
	double before, after, took;
	struct stat st;
	FILE *fp;
	int port;

	if (!f)
		skip();
	snprintf(out, sizeof(out), "%s/out", f->dir);
	assert_int_equal(mkdir(out, 0755), 0);
	snprintf(lib, sizeof(lib), "%s/libcfibomb.so", f->dir);
	assert_int_equal(parser_bomb_cfi(f->dir, lib, 200000), 0);
	assert_int_equal(stat(lib, &st), 0);
	printf("  %s: %lld KB\n", lib, (long long)st.st_size >> 10);
	snprintf(src, sizeof(src), "%s/victim.c", f->dir);
	snprintf(victim_lib, sizeof(victim_lib), "%s/libvictim.so", f->dir);
	snprintf(gate, sizeof(gate), "%s/victim-go", f->dir);
	fp = fopen(src, "w");
	assert_non_null(fp);
	fputs(victim_src, fp);
	fclose(fp);
	assert_int_equal(fixture_sh("cc -shared -fPIC -O2 -o '%s' '%s'", victim_lib, src), 0);
	start_all(f, files, 1, pids);
	/* A root victim that maps its own library once the bomb is queued. */
	snprintf(log, sizeof(log), "%s/victim.out", f->dir);
	f->pids[f->npids++] = unpriv_user_start(-1, "it-parsers-victim", f->dir, log, victim);
	assert_int_equal(unpriv_wait_file_has(log, "ready", 20), 0);
	snprintf(pids[2], sizeof(pids[2]), "%d", (int)f->pids[2]);
	start_agent(f, &agent, argv);
	port = metrics_scrape_port(agent.log_path);
	assert_true(port > 0);
	/* Everything mapped at start (executables, libc, the loader, the hook library, the vDSO)
	 * is queued, the bomb among it; then the victim maps its library. */
	before = wait_tables_ready(port, 5, 20);
	sleep(1);
	metrics_scrape(port, "spanprof_unwind_files{state=\"ready\"}", &before);
	close(open(gate, O_WRONLY | O_CREAT, 0644));
	assert_int_equal(unpriv_wait_file_has(log, "ready\nready", 20), 0);
	took = hostile_now_s();
	after = wait_tables_ready(port, before + 1, 15);
	took = hostile_now_s() - took;
	printf("  %.0f tables ready before the victim mapped its library, %.0f %.1f s after\n",
	       before, after, took);
	if (after < before + 1)
		fail_msg("the victim's library got no table within 15 s: the worker is held");
	snprintf(want, sizeof(want), "unwind table of %s not built: its CFI spent the build budget",
		 lib);
	if (!agent_proc_wait_log(&agent, want, 10))
		fail_msg("the agent never logged \"%s\"", want);
	assert_true(wait_guard(port, "cfi_budget_spent", 1, 10) >= 1);
	check_windows_and_sigterm(out, &agent, 3);
}

/* Crafted hook files that an unprivileged user maps while the agent runs: each takes the
 * parser its whole budget (a 48 MiB .gopclntab, a hole after its 500,000 rows that all name one
 * 60 KB string: the name search may compare twice the table). Half of them are waited for. */
#define MANY_FILES 16
#define MANY_TABLE_BYTES (48ull << 20)

/* Parsing each file is bounded, but they come all at once, from one process: the run loop must
 * go on writing windows while they are parsed (off the loop), and stop within 2 s of SIGTERM
 * while the rest are still being parsed. */
static void test_many_crafted_hook_files_do_not_delay_windows(void **state)
{
	struct hostile_fixture *f = *state;
	char out[600], gate[700], log[700], pids[2][16], paths[MANY_FILES][700];
	const char *mapmany[MANY_FILES + 5] = { f ? f->workload : "", "mapmany", gate, "60" };
	const char *argv[] = { "--output",	 out,		"--interval", "1",
			       "--metrics-addr", "127.0.0.1:0", "--pid",      pids[0],
			       "--pid",		 pids[1],	NULL };
	double opened, parsed, refused, done, gap, took, since;
	struct agent_proc agent;
	int i, port, windows, status;

	if (!f)
		skip();
	snprintf(out, sizeof(out), "%s/out", f->dir);
	snprintf(gate, sizeof(gate), "%s/map-many-go", f->dir);
	snprintf(log, sizeof(log), "%s/many.out", f->dir);
	assert_int_equal(mkdir(out, 0755), 0);
	for (i = 0; i < MANY_FILES; i++) {
		snprintf(paths[i], sizeof(paths[i]), "%s/crafted-hook-%02d.so", f->dir, i);
		assert_int_equal(
			parser_bomb_gopclntab_sized(paths[i], 500000, 60000, MANY_TABLE_BYTES), 0);
		mapmany[4 + i] = paths[i];
	}
	start_all(f, NULL, 0, pids);
	if (hostile_fixture_spawn(f, f->user.uid, "it-parsers-attacker", "many.out", mapmany, 20) <
	    0)
		fail_msg("the attacker never started");
	snprintf(pids[1], sizeof(pids[1]), "%d", (int)f->pids[1]);
	start_agent(f, &agent, argv);
	port = metrics_scrape_port(agent.log_path);
	assert_true(port > 0);
	/* Windows are being written: then the user maps every file at once. */
	while (normal_windows(out, NULL) < 2)
		usleep(50000);
	refused = guard_count(port, "elf_section_refused");
	opened = hostile_now_s();
	since = profile_windows_now_s() - 1;
	close(open(gate, O_WRONLY | O_CREAT, 0644));
	assert_int_equal(unpriv_wait_file_has(log, "mapped", 20), 0);
	done = wait_guard(port, "elf_section_refused", refused + MANY_FILES / 2, 60) - refused;
	if (done < MANY_FILES / 2)
		fail_msg("the agent refused %.0f of the crafted files within 60 s", done);
	parsed = hostile_now_s() - opened;
	/* A window more, so that any gap of the parsing time is closed. */
	usleep(1200000);
	windows = profile_windows_since(out, "it-parsers-normal", since, &gap);
	/* The other half is still queued or being parsed. */
	done = guard_count(port, "elf_section_refused") - refused;
	took = hostile_sigterm(agent.pid, &status);
	printf("  %d of %d crafted hook files parsed in %.2f s (%.0f ms each); %d windows of the "
	       "normal service since they were mapped, at most %.2f s apart (window 1 s); stopped "
	       "%.2f s after SIGTERM with %.0f files parsed\n",
	       MANY_FILES / 2, MANY_FILES, parsed, 2000 * parsed / MANY_FILES, windows, gap, took,
	       done);
	if (took < 0)
		fail_msg("agent ignored SIGTERM for 30 s");
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	assert_true(took < 2.0);
	/* A loop that parsed them itself would miss windows for as long as the parsing took. */
	if (parsed < 2.0)
		printf("  (half the files parsed in under two windows here: a loop stalled that "
		       "long would hardly show)\n");
	assert_true(windows >= (int)parsed);
	assert_true(gap < 1.9);
}

/* More hook files from one user than the whole parse queue (64 jobs, half per user), each a
 * few tenths of a second of parsing (a 48 MiB .gopclntab: the name search spends its budget). */
#define HOG_FILES 72
#define HOG_HALF 32
#define HOG_TABLE_BYTES (48ull << 20)

static double fair_limited(int port, const char *bound)
{
	char metric[128];
	double v = -1;

	snprintf(metric, sizeof(metric), "spanprof_fair_share_limited_total{bound=\"%s\"}", bound);
	if (metrics_scrape(port, metric, &v))
		fail_msg("/metrics has no %s", metric);
	return v;
}

/* One user maps 72 slow-to-parse crafted hook files at once: 32 take the user's half of the
 * parse queue, the other 40 are refused at that scan (counted) and come back as room is made. A
 * root service started behind them maps its own hook library, new to the agent: it gets a place
 * in the queue at once, and users take turns at the parser, so it is parsed right after the
 * user's file in progress and attached while the user's other files still wait. Were the queue
 * first come, first served, the user's files would hold all 64 places and the root service's
 * would wait (logged); were the parser first come, first served, it would follow the user's 32
 * queued files. */
static void test_one_user_cannot_fill_the_hook_parse_queue(void **state)
{
	struct hostile_fixture *f = *state;
	char out[600], gate[700], victim_gate[700], victim_dir[700], victim_lib[800], log[700];
	char pids[2][16], attached[900], waited[900], paths[HOG_FILES][700];
	const char *mapmany[HOG_FILES + 5] = { f ? f->workload : "", "mapmany", gate, "60" };
	const char *victim[] = { "/bin/sh",
				 "-c",
				 "while [ ! -e \"$0\" ]; do sleep 0.05; done; "
				 "LD_LIBRARY_PATH=\"$2\" exec \"$1\" spans 1 60",
				 victim_gate,
				 build_path("tests/workloads/span_workload"),
				 victim_dir,
				 NULL };
	const char *argv[] = { "--output",    out,     "--interval", "1",     "--metrics-addr",
			       "127.0.0.1:0", "--pid", pids[0],	     "--pid", pids[1],
			       "--log-level", "debug", NULL };
	double deferred0, deferred, opened, attached_s = -1, took, refused0, refused = -1;
	struct agent_proc agent;
	int i, port, status;

	if (!f)
		skip();
	snprintf(out, sizeof(out), "%s/out", f->dir);
	snprintf(gate, sizeof(gate), "%s/map-many-go", f->dir);
	snprintf(victim_gate, sizeof(victim_gate), "%s/victim-go", f->dir);
	snprintf(victim_dir, sizeof(victim_dir), "%s/victim", f->dir);
	snprintf(victim_lib, sizeof(victim_lib), "%s/libspanprof.so", victim_dir);
	snprintf(log, sizeof(log), "%s/many.out", f->dir);
	assert_int_equal(mkdir(out, 0755), 0);
	assert_int_equal(mkdir(victim_dir, 0755), 0);
	/* The root service's own copy of the hook library: a file the agent has not parsed. */
	assert_int_equal(fixture_sh("cp '%s' '%s'", build_path("libspanprof.so"), victim_lib), 0);
	for (i = 0; i < HOG_FILES; i++) {
		snprintf(paths[i], sizeof(paths[i]), "%s/hog-hook-%02d.so", f->dir, i);
		assert_int_equal(
			parser_bomb_gopclntab_sized(paths[i], 100000, 60000, HOG_TABLE_BYTES), 0);
		mapmany[4 + i] = paths[i];
	}
	if (hostile_fixture_spawn(f, f->user.uid, "it-parsers-attacker", "many.out", mapmany, 20) <
	    0)
		fail_msg("the attacker never started");
	if (hostile_fixture_spawn(f, -1, "it-parsers-victim", "victim.out", victim, 0) < 0)
		fail_msg("the root service never started");
	snprintf(pids[0], sizeof(pids[0]), "%d", (int)f->pids[0]);
	snprintf(pids[1], sizeof(pids[1]), "%d", (int)f->pids[1]);
	assert_int_equal(hostile_fixture_start_agent(f, &agent, argv), 0);
	port = metrics_scrape_port(agent.log_path);
	assert_true(port > 0);
	deferred0 = fair_limited(port, "hook_parse_deferred");
	close(open(gate, O_WRONLY | O_CREAT, 0644));
	assert_int_equal(unpriv_wait_file_has(log, "mapped", 20), 0);
	/* The user's files fill its half of the queue: the ones beyond it are refused. */
	opened = hostile_now_s();
	while ((deferred = fair_limited(port, "hook_parse_deferred") - deferred0) <= 0 &&
	       hostile_now_s() - opened < 20)
		usleep(50000);
	if (deferred <= 0)
		fail_msg("the user's %d hook files never filled its half of the parse queue",
			 HOG_FILES);
	/* Its first scan queued its half and refused the rest, all counted at once (a queue
	 * without the half rule would have refused only the 8 beyond its 64 places). */
	printf("  first count of the user's files refused by the parse queue: %.0f\n", deferred);
	assert_true(deferred >= HOG_FILES - HOG_HALF);
	/* Now the root service starts and maps its own hook library. */
	refused0 = guard_count(port, "elf_section_refused");
	close(open(victim_gate, O_WRONLY | O_CREAT, 0644));
	opened = hostile_now_s();
	snprintf(attached, sizeof(attached), "span hook attached: %s (pid %s", victim_lib, pids[1]);
	snprintf(waited, sizeof(waited), "span hook candidate %s (pid %s, uid 0) waits", victim_lib,
		 pids[1]);
	while (hostile_now_s() - opened < 60) {
		if (agent_proc_log_contains(&agent, attached)) {
			attached_s = hostile_now_s() - opened;
			/* The user's files parsed meanwhile (published at drains: a second late
			 * at most, a few parses). */
			refused = guard_count(port, "elf_section_refused") - refused0;
			break;
		}
		usleep(50000);
	}
	took = hostile_sigterm(agent.pid, &status);
	printf("  %d crafted hook files of one user, %.0f refusals at its half of the queue before "
	       "the root service started; its hook attached %.2f s after it started, its file "
	       "never waiting, %.0f of the user's files parsed meanwhile; stopped %.2f s after "
	       "SIGTERM\n",
	       HOG_FILES, deferred, attached_s, refused, took);
	if (took < 0)
		fail_msg("agent ignored SIGTERM for 30 s");
	if (attached_s < 0)
		fail_msg("the root service's hook library was never attached");
	/* Its file got a place at once: the user held at most half the queue. First come, first
	 * served, the user's files would have held all of it and the root service's would have
	 * waited (logged at debug level). */
	assert_false(agent_proc_log_contains(&agent, waited));
	/* Parsed in its turn, not after the user's queued half. */
	assert_true(refused >= 0 && refused <= HOG_HALF / 4);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_gopclntab_bomb_does_not_stall_the_run_loop,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_sparse_sections_are_refused_before_allocation,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_cfi_bomb_does_not_starve_table_building, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_many_crafted_hook_files_do_not_delay_windows,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_one_user_cannot_fill_the_hook_parse_queue,
						setup, teardown),
	};

	/* HOSTILE_TEST=<name> runs one test; HOSTILE_KEEP=1 keeps the temp dirs (agent logs). */
	if (getenv("HOSTILE_TEST"))
		cmocka_set_test_filter(getenv("HOSTILE_TEST"));
	return cmocka_run_group_tests_name("hostile_files", tests, NULL, NULL);
}
