// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Crafted interpreter files an unprivileged user maps, against the real agent: many processes,
 * each mapping its own file named like libpython or libruby whose symbol table claims 60 MiB
 * (a hole on disk), all appearing at once while the agent runs. An ordinary service keeps its
 * windows on time, the parses beyond the run loop's budget are put off and counted, and a real
 * Python process started at the same moment still has its Python frames read. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <setjmp.h>
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
#include "hostile_fixture.h"
#include "metrics_scrape.h"
#include "parser_bombs.h"
#include "profile_census.h"
#include "profile_windows.h"

/* Attacker processes, one crafted file each: half libpython, half libruby. */
#define ATTACKERS 12
/* Each file's claimed symbol table: about 0.1-0.4 s to walk here, so that all of them parsed
 * on the run loop at once would hold it for well over a window. */
#define SYMTAB_BYTES (60ull << 20)
/* How long the attack is watched, in 1 s windows. */
#define RUN_S 8.0
#define VICTIM_PYTHON "/usr/bin/python3.11"
#define VICTIM_SERVICE "it-interp-victim"
#define NORMAL_SERVICE "it-interp-normal"

static int setup(void **state)
{
	struct hostile_fixture *f;

	if (hostile_fixture_new("it-hostile-interp", &f))
		return -1;
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	hostile_fixture_free(*state);
	return 0;
}

/* A root process that waits for gate, then execs argv0 (keeping its pid, so --pid names it). */
static pid_t spawn_gated(struct hostile_fixture *f, const char *service, const char *out,
			 const char *gate, const char *script, const char *prog, const char *arg)
{
	const char *argv[] = { "/bin/sh", "-c", script, gate, prog, arg, NULL };

	return hostile_fixture_spawn(f, -1, service, out, argv, 0);
}

static double guard_count(int port, const char *guard)
{
	double v = -1;

	if (hostile_guard(port, guard, &v))
		fail_msg("/metrics has no guard %s", guard);
	return v;
}

/* Windows the agent logged as written from wall time from_s on, and the longest time between two
 * of them (from from_s to the first included): the run loop's own cadence, which a workload
 * starved of CPU on a loaded machine does not blur (it may have no sample in some window). */
static int logged_windows(const char *log, double from_s, double *max_gap_s)
{
	char line[1024];
	double prev = from_s, t, ms;
	struct tm tm;
	int n = 0;
	FILE *fp = fopen(log, "r");

	*max_gap_s = 0;
	assert_non_null(fp);
	while (fgets(line, sizeof(line), fp)) {
		memset(&tm, 0, sizeof(tm));
		if (!strstr(line, "window written") ||
		    sscanf(line, "ts=%d-%d-%dT%d:%d:%lfZ", &tm.tm_year, &tm.tm_mon, &tm.tm_mday,
			   &tm.tm_hour, &tm.tm_min, &ms) != 6)
			continue;
		tm.tm_year -= 1900;
		tm.tm_mon -= 1;
		t = (double)timegm(&tm) + ms;
		if (t < from_s)
			continue;
		if (t - prev > *max_gap_s)
			*max_gap_s = t - prev;
		prev = t;
		n++;
	}
	fclose(fp);
	return n;
}

static double wall_now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Writes the crafted files and starts one attacker per file as the user, each holding until
 * gate exists and then mapping its file. */
static void start_attackers(struct hostile_fixture *f, const char *gate)
{
	char dir[700], path[800], out[64];
	int i;

	for (i = 0; i < ATTACKERS; i++) {
		const char *map[] = { f->workload, "mapafter", path, gate, "60", NULL };

		snprintf(dir, sizeof(dir), "%s/interp%02d", f->dir, i);
		assert_int_equal(mkdir(dir, 0755), 0);
		snprintf(path, sizeof(path), "%s/%s", dir,
			 i % 2 ? "libruby.so.3.1" : "libpython3.11.so.1.0");
		assert_int_equal(parser_bomb_symtab(path, SYMTAB_BYTES), 0);
		/* The user's own file, as if the user had written it. */
		assert_int_equal(chown(path, (uid_t)f->user.uid, (gid_t)-1), 0);
		snprintf(out, sizeof(out), "attacker%d.out", i);
		if (hostile_fixture_spawn(f, f->user.uid, "it-interp-attacker", out, map, 20) < 0)
			fail_msg("attacker %d never started", i);
	}
}

static void test_many_crafted_interpreter_files_do_not_delay_windows(void **state)
{
	struct hostile_fixture *f = *state;
	char out[600], gate[700], normal_gate[700], victim_gate[700], seen[64];
	char pids[HOSTILE_MAX_PIDS][16];
	const char *argv[2 * HOSTILE_MAX_PIDS + 8] = { "--output",	 out,
						       "--interval",	 "1",
						       "--metrics-addr", "127.0.0.1:0" };
	const char *wait_then_exec =
		"while [ ! -e \"$0\" ]; do sleep 0.05; done; exec \"$1\" \"$2\" 1 60";
	const char *victim_code = "import time\n"
				  "def victim_spin(end):\n"
				  "    n = 0\n"
				  "    while time.time() < end:\n"
				  "        n += 1\n"
				  "victim_spin(time.time() + 30)\n";
	double deferred0, deferred, since, opened, wall_opened, gap, normal_gap, took;
	double victim_seen_s = -1;
	struct agent_proc agent;
	struct census c;
	pid_t victim;
	int i, argc = 6, port, windows, normal_windows, status;

	if (!f)
		skip();
	if (access(VICTIM_PYTHON, X_OK)) {
		printf("  skip: %s is absent\n", VICTIM_PYTHON);
		skip();
	}
	snprintf(out, sizeof(out), "%s/out", f->dir);
	snprintf(gate, sizeof(gate), "%s/attack-go", f->dir);
	snprintf(normal_gate, sizeof(normal_gate), "%s/normal-go", f->dir);
	snprintf(victim_gate, sizeof(victim_gate), "%s/victim-go", f->dir);
	assert_int_equal(mkdir(out, 0755), 0);
	assert_true(spawn_gated(f, NORMAL_SERVICE, "normal.out", normal_gate, wait_then_exec,
				build_path("tests/workloads/span_workload"), "spans") > 0);
	start_attackers(f, gate);
	victim = spawn_gated(f, VICTIM_SERVICE, "victim.out", victim_gate,
			     "while [ ! -e \"$0\" ]; do sleep 0.05; done; exec \"$1\" -c \"$2\"",
			     VICTIM_PYTHON, victim_code);
	assert_true(victim > 0);
	for (i = 0; i < f->npids; i++) {
		snprintf(pids[i], sizeof(pids[i]), "%d", (int)f->pids[i]);
		argv[argc++] = "--pid";
		argv[argc++] = pids[i];
	}
	assert_int_equal(hostile_fixture_start_agent(f, &agent, argv), 0);
	close(open(normal_gate, O_WRONLY | O_CREAT, 0644));
	port = metrics_scrape_port(agent.log_path);
	assert_true(port > 0);
	while (hostile_windows(out, NORMAL_SERVICE, NULL) < 2)
		usleep(50000);
	deferred0 = guard_count(port, "interp_file_deferred");
	/* Every attacker maps its file, and the victim execs Python, at the same moment. */
	since = profile_windows_now_s() - 1;
	opened = hostile_now_s();
	wall_opened = wall_now_s();
	close(open(gate, O_WRONLY | O_CREAT, 0644));
	close(open(victim_gate, O_WRONLY | O_CREAT, 0644));
	snprintf(seen, sizeof(seen), "pid %d: reading CPython", (int)victim);
	while (hostile_now_s() - opened < RUN_S) {
		if (victim_seen_s < 0 && agent_proc_log_contains(&agent, seen))
			victim_seen_s = hostile_now_s() - opened;
		usleep(100000);
	}
	windows = logged_windows(agent.log_path, wall_opened, &gap);
	normal_windows = profile_windows_since(out, NORMAL_SERVICE, since, &normal_gap);
	deferred = guard_count(port, "interp_file_deferred") - deferred0;
	took = hostile_sigterm(agent.pid, &status);
	memset(&c, 0, sizeof(c));
	census_watch(&c, "victim_spin", NULL);
	assert_true(census_read(&c, out, VICTIM_SERVICE) > 0);
	printf("  %d crafted interpreter files (%llu MiB symbol tables) mapped at once: %d windows "
	       "written in %.0f s, at most %.2f s apart (window 1 s; the normal service's: %d, "
	       "%.2f s); %.0f scans found their file not parsed yet; the victim's CPython read "
	       "%.2f s after its exec, %llu of its %llu samples in victim_spin; stopped %.2f s "
	       "after SIGTERM\n",
	       ATTACKERS, (unsigned long long)(SYMTAB_BYTES >> 20), windows, RUN_S, gap,
	       normal_windows, normal_gap, deferred, victim_seen_s,
	       (unsigned long long)census_get(&c, "victim_spin")->samples,
	       (unsigned long long)c.total_samples, took);
	if (took < 0)
		fail_msg("agent ignored SIGTERM for 30 s");
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	/* Parsed on the loop all at once, the files held it for seconds. */
	assert_true(gap < 1.9);
	assert_true(windows >= (int)RUN_S - 2);
	/* The files were parsed off the loop, the scans answered "not yet". */
	assert_true(deferred > 0);
	/* The victim's interpreter is root's: it is read at once, and its frames are Python's. */
	assert_true(victim_seen_s >= 0 && victim_seen_s < 2.0);
	assert_true(census_get(&c, "victim_spin")->samples > 0);
	assert_true(took < 2.0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(
			test_many_crafted_interpreter_files_do_not_delay_windows, setup, teardown),
	};

	return cmocka_run_group_tests_name("hostile_interp", tests, NULL, NULL);
}
