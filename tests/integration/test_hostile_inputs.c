// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Hostile local processes against the real agent: FIFO and /dev/zero perf maps, a crafted ELF
 * with a million section headers, a FIFO named like a deleted mapping, a library truncated while
 * the agent reads it, a perf map pointing at a root-only file (from a real unprivileged user),
 * and /healthz when windows stop being written. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <dirent.h>
#include <elf.h>
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
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "agent_proc.h"
#include "fixture_build.h"
#include "profile_census.h"
#include "profile_windows.h"
#include "tmpdir.h"
#include "unpriv_user.h"
#include "crafted_elf.h"
#include "metrics_scrape.h"

#define CRAFTED_SECTIONS 1000000
#define RUN_S 12

static const char lib_source[] =
	"#include <time.h>\n"
	"static volatile unsigned long lib_sink;\n"
	"static double lib_now(void)\n"
	"{ struct timespec ts; clock_gettime(CLOCK_MONOTONIC, &ts);\n"
	"  return ts.tv_sec + ts.tv_nsec / 1e9; }\n"
	"__attribute__((noinline)) void hostile_lib_spin(double end)\n"
	"{ while (lib_now() < end) for (int i = 0; i < 2000; i++) lib_sink += i; }\n";

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int setup(void **state)
{
	return agent_proc_dir_setup(state, "it-hostile");
}

/* The unprivileged user a test created, removed in teardown even when the test failed. */
static struct unpriv_user created_user = { .uid = -1 };

static int teardown(void **state)
{
	unpriv_user_remove(&created_user);
	if (getenv("HOSTILE_KEEP")) {
		printf("  kept %s\n", (char *)*state);
		free(*state);
		return 0;
	}
	tmpdir_remove(*state);
	return 0;
}

static void wait_file_has(const char *path, const char *text, double timeout_s)
{
	if (unpriv_wait_file_has(path, text, timeout_s))
		fail_msg("%s never said '%s'", path, text);
}

/* Sends SIGTERM and returns the seconds the agent took to exit (status 0 asserted). */
static double stop_with_sigterm(pid_t pid)
{
	double start = now_s();
	int status;

	kill(pid, SIGTERM);
	while (waitpid(pid, &status, WNOHANG) == 0) {
		if (now_s() - start > 30) {
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);
			fail_msg("agent ignored SIGTERM for 30 s");
		}
		usleep(10000);
	}
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	return now_s() - start;
}

/* Number of profiles service wrote into dir; *max_gap_s (may be NULL) gets the longest time
 * between the starts of two consecutive ones (seconds since the epoch, so a run across midnight
 * measures the real gap). */
static int profiles_gap(const char *dir, const char *service, double *max_gap_s)
{
	return profile_windows_since(dir, service, 0, max_gap_s);
}

static int profiles_of(const char *dir, const char *service)
{
	return profiles_gap(dir, service, NULL);
}

static void build_lib(const char *dir, char *lib, size_t len)
{
	char src[512];
	FILE *f;

	snprintf(src, sizeof(src), "%s/hostile_lib.c", dir);
	f = fopen(src, "w");
	assert_non_null(f);
	fputs(lib_source, f);
	fclose(f);
	snprintf(lib, len, "%s/libhostile.so", dir);
	assert_int_equal(fixture_sh("cc -shared -fPIC -g -O1 -fno-omit-frame-pointer "
				    "-Wl,--build-id -o %s %s",
				    lib, src),
			 0);
}

static void perf_map_cleanup(pid_t pid)
{
	char path[64];

	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)pid);
	unlink(path);
}

/* A FIFO perf map, a /dev/zero perf map, a crafted ELF and a FIFO named like a deleted mapping
 * are all present while an ordinary workload runs: its profiles arrive every window, and the
 * agent stops within 2 s of SIGTERM. */
static void test_hostile_files_neither_stall_windows_nor_shutdown(void **state)
{
	const char *dir = *state;
	char out[512], crafted[512], lib[512], deleted[600], logs[5][512], pids[5][16];
	const char *hostile = build_path("tests/workloads/hostile_workload");
	const char *work[] = { build_path("tests/workloads/span_workload"), "spans", "1", "30",
			       NULL };
	const char *fifo_map[] = { hostile, "jit", "fifo", "30", NULL };
	const char *zero_map[] = { hostile, "jit", "devzero", "30", NULL };
	const char *elf_map[] = { hostile, "map", crafted, "30", NULL };
	const char *del_map[] = { hostile, "map", lib, "30", NULL };
	const char *const *argvs[] = { work, fifo_map, zero_map, elf_map, del_map };
	const char *argv[] = { "--output", out,	    "--interval", "1",	   "--pid",
			       pids[0],	   "--pid", pids[1],	  "--pid", pids[2],
			       "--pid",	   pids[3], "--pid",	  pids[4], NULL };
	static const char *const refusals[3] = { "not a regular file", "a symlink",
						 "over a header or table cap" };
	struct agent_proc agent;
	pid_t w[5];
	double start, elapsed, took, gap;
	int i, windows, refused[3];

	if (!dir)
		skip();
	snprintf(out, sizeof(out), "%s/out", dir);
	snprintf(crafted, sizeof(crafted), "%s/crafted.so", dir);
	assert_int_equal(mkdir(out, 0755), 0);
	assert_int_equal(crafted_elf_extend_sections(build_path("tests/workloads/hostile_workload"),
						     crafted, CRAFTED_SECTIONS),
			 0);
	build_lib(dir, lib, sizeof(lib));
	for (i = 0; i < 5; i++) {
		snprintf(logs[i], sizeof(logs[i]), "%s/work%d.out", dir, i);
		w[i] = unpriv_user_start(-1, i ? "it-hostile-attacker" : "it-hostile-normal", NULL,
					 logs[i], argvs[i]);
		assert_true(w[i] > 0);
		snprintf(pids[i], sizeof(pids[i]), "%d", w[i]);
		if (i)
			wait_file_has(logs[i], "ready", 20);
	}
	/* The library is mapped; now it is deleted and a FIFO takes its "(deleted)" name. */
	snprintf(deleted, sizeof(deleted), "%s (deleted)", lib);
	assert_int_equal(unlink(lib), 0);
	assert_int_equal(mkfifo(deleted, 0644), 0);
	assert_int_equal(agent_proc_start(&agent, dir, argv), 0);
	start = now_s();
	while (now_s() - start < 8)
		usleep(100000);
	elapsed = now_s() - start;
	windows = profiles_gap(out, "it-hostile-normal", &gap);
	/* The hostile inputs are met when the attackers' samples are symbolized: on a loaded
	 * machine that may take longer than the 8 s measured above, so wait for each (30 s). */
	for (i = 0; i < 3; i++)
		refused[i] = agent_proc_wait_log(&agent, refusals[i], 30);
	took = stop_with_sigterm(agent.pid);
	printf("  %d windows of the normal workload in %.1f s, at most %.2f s apart; "
	       "stopped %.2f s after SIGTERM\n",
	       windows, elapsed, gap, took);
	for (i = 0; i < 5; i++) {
		kill(w[i], SIGKILL);
		waitpid(w[i], NULL, 0);
		perf_map_cleanup(w[i]);
	}
	/* One window per second of the run, give or take the first and the one in progress. */
	assert_true(windows >= (int)elapsed - 2);
	assert_true(gap < 1.9); /* no window skipped */
	assert_true(took < 2.0);
	/* The hostile inputs were met, and refused. */
	for (i = 0; i < 3; i++)
		if (!refused[i])
			fail_msg("the agent's log never said \"%s\"", refusals[i]);
}

/* Pid of the first entry of /proc/PID/fd pointing at path, 1 when found. */
static int has_open(pid_t pid, const char *path)
{
	char fd_dir[64], link[600], target[600];
	struct dirent *de;
	ssize_t n;
	int found = 0;
	DIR *d;

	snprintf(fd_dir, sizeof(fd_dir), "/proc/%d/fd", (int)pid);
	d = opendir(fd_dir);
	if (!d)
		return 0;
	while (!found && (de = readdir(d))) {
		snprintf(link, sizeof(link), "%s/%s", fd_dir, de->d_name);
		n = readlink(link, target, sizeof(target) - 1);
		if (n > 0) {
			target[n] = '\0';
			found = !strcmp(target, path);
		}
	}
	closedir(d);
	return found;
}

/* The workload truncates its library (cutting off the symbol table and DWARF) after the agent
 * opened it and before the agent reads its DWARF: the agent lives on, and keeps writing the
 * windows of an ordinary workload profiled alongside. */
static void test_library_truncated_under_the_agent(void **state)
{
	const char *dir = *state;
	char out[512], lib[512], go[512], logs[2][512], pids[2][16];
	const char *trunc[] = {
		build_path("tests/workloads/hostile_workload"), "truncate", lib, go, "6", NULL
	};
	const char *work[] = { build_path("tests/workloads/span_workload"), "spans", "1", "60",
			       NULL };
	/* The unwinder is off: its worker may open the file first, and the wait below must see the
	 * symbolizer's open (the symbol table read before the truncation). */
	const char *argv[] = { "--output", out,	    "--interval", "1",	   "--unwind-table-bytes",
			       "0",	   "--pid", pids[0],	  "--pid", pids[1],
			       NULL };
	struct census c = { 0 };
	struct agent_proc agent;
	double end;
	int status, before;
	pid_t w[2];

	if (!dir)
		skip();
	snprintf(out, sizeof(out), "%s/out", dir);
	snprintf(go, sizeof(go), "%s/go", dir);
	assert_int_equal(mkdir(out, 0755), 0);
	build_lib(dir, lib, sizeof(lib));
	snprintf(logs[0], sizeof(logs[0]), "%s/trunc.out", dir);
	snprintf(logs[1], sizeof(logs[1]), "%s/work.out", dir);
	w[0] = unpriv_user_start(-1, "it-truncate", NULL, logs[0], trunc);
	w[1] = unpriv_user_start(-1, "it-truncate-normal", NULL, logs[1], work);
	wait_file_has(logs[0], "ready", 20);
	snprintf(pids[0], sizeof(pids[0]), "%d", w[0]);
	snprintf(pids[1], sizeof(pids[1]), "%d", w[1]);
	assert_int_equal(agent_proc_start(&agent, dir, argv), 0);
	for (end = now_s() + 30; !has_open(agent.pid, lib); usleep(20000))
		if (now_s() > end)
			fail_msg("the agent never opened %s", lib);
	close(open(go, O_WRONLY | O_CREAT, 0644));
	assert_int_equal(workload_wait(w[0], 30), 0); /* it survived its own truncation */
	/* Two more windows of the other workload after the truncating one ended. */
	before = profiles_of(out, "it-truncate-normal");
	for (end = now_s() + 20; profiles_of(out, "it-truncate-normal") < before + 2;
	     usleep(100000))
		if (now_s() > end || waitpid(agent.pid, &status, WNOHANG) == agent.pid)
			fail_msg("the agent (pid %d) stopped writing after the truncation (log %s)",
				 agent.pid, agent.log_path);
	assert_int_equal(agent_proc_stop(&agent), 0);
	kill(w[1], SIGKILL);
	waitpid(w[1], NULL, 0);
	census_watch(&c, "hostile_lib_spin", NULL);
	assert_true(census_read(&c, out, "it-truncate") >= 3);
	printf("  hostile_lib_spin: %llu samples of %llu\n",
	       (unsigned long long)census_get(&c, "hostile_lib_spin")->samples,
	       (unsigned long long)c.total_samples);
	/* Its symbol table was read (copied) when the agent opened it, before the truncation. */
	assert_true(census_get(&c, "hostile_lib_spin")->samples >= 20);
}

/* A real unprivileged user points its perf map at a root-only file: nothing of it may reach the
 * profile. Its own perf map (owned by it) is used, a root-owned one is not. */
static void test_perf_map_is_read_as_the_process_owner(void **state)
{
	const char *dir = *state;
	char secret[512], out[512], logs[3][512], pids[3][16], link_kind[600];
	char hostile[600]; /* a copy the user can run (see below) */
	const char *via_link[] = { hostile, "jit", link_kind, "30", NULL };
	const char *own[] = { hostile, "jit", "own", "30", NULL };
	const char *none[] = { hostile, "jit", "none", "30", NULL };
	const char *const *argvs[] = { via_link, own, none };
	const char *services[] = { "it-owner-link", "it-owner-own", "it-owner-root" };
	const char *argv[] = { "--output", out,	    "--interval", "60",	   "--pid", pids[0],
			       "--pid",	   pids[1], "--pid",	  pids[2], NULL };
	struct census c[3];
	struct agent_proc agent;
	char path[64];
	FILE *f;
	pid_t w[3];
	int uid, i;

	if (!dir)
		skip();
	memset(c, 0, sizeof(c));
	if (unpriv_user_create(&created_user)) {
		printf("  useradd unavailable: skipped\n");
		skip();
	}
	uid = created_user.uid;
	snprintf(secret, sizeof(secret), "%s/secret", dir);
	f = fopen(secret, "w");
	assert_non_null(f);
	fprintf(f, "7e5500000000 1000 ROOT_SECRET_LINE\n");
	fclose(f);
	assert_int_equal(chmod(secret, 0600), 0);
	snprintf(link_kind, sizeof(link_kind), "link:%s", secret);
	snprintf(out, sizeof(out), "%s/out", dir);
	assert_int_equal(mkdir(out, 0755), 0);
	chmod(dir, 0755); /* the user writes its stdout here */
	/* The checkout may sit in a home no other user may enter (root's is 0700 on Debian): the
	 * user runs a copy of the workload, and of the hook library it loads, from here. */
	snprintf(hostile, sizeof(hostile), "%s/hostile_workload", dir);
	assert_int_equal(fixture_sh("cp '%s' '%s' '%s' && chmod 0755 '%s'",
				    build_path("tests/workloads/hostile_workload"),
				    build_path("libspanprof.so"), dir, hostile),
			 0);
	setenv("LD_LIBRARY_PATH", dir, 1); /* for the workloads only: unset after they start */
	for (i = 0; i < 3; i++) {
		snprintf(logs[i], sizeof(logs[i]), "%s/user%d.out", dir, i);
		close(open(logs[i], O_WRONLY | O_CREAT, 0666));
		chmod(logs[i], 0666);
		w[i] = unpriv_user_start(uid, services[i], NULL, logs[i], argvs[i]);
		snprintf(pids[i], sizeof(pids[i]), "%d", w[i]);
		wait_file_has(logs[i], "ready", 20);
	}
	unsetenv("LD_LIBRARY_PATH");
	/* A perf map written by root for the user's process: not the owner's file either. */
	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)w[2]);
	f = fopen(path, "w");
	assert_non_null(f);
	fprintf(f, "7e5500000000 1000 ROOT_OWNED_MAP\n");
	fclose(f);
	assert_int_equal(agent_proc_start(&agent, dir, argv), 0);
	for (double end = now_s() + 5; now_s() < end;)
		usleep(100000);
	assert_int_equal(agent_proc_stop(&agent), 0);
	for (i = 0; i < 3; i++) {
		kill(w[i], SIGKILL);
		waitpid(w[i], NULL, 0);
	}
	for (i = 0; i < 3; i++)
		perf_map_cleanup(w[i]);
	census_watch(&c[0], "ROOT_SECRET_LINE", NULL);
	census_watch(&c[1], "jit_spin_code", NULL);
	census_watch(&c[2], "ROOT_OWNED_MAP", NULL);
	for (i = 0; i < 3; i++) {
		assert_int_equal(census_read(&c[i], out, services[i]), 1);
		printf("  %-14s %5llu samples, %5llu in %s\n", services[i],
		       (unsigned long long)c[i].total_samples,
		       (unsigned long long)c[i].funcs[0].samples, c[i].funcs[0].name);
		assert_true(c[i].total_samples >= 5); /* it was profiled */
	}
	assert_int_equal(c[0].funcs[0].samples, 0);
	assert_true(c[1].funcs[0].samples >= 0.5 * c[1].total_samples);
	assert_int_equal(c[2].funcs[0].samples, 0);
}

/* Status code of GET path on 127.0.0.1:port, or -1. */
static int http_status(int port, const char *path)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(port) };
	char req[128], resp[256];
	int fd, status = -1;
	ssize_t n;

	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	if (!connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		n = snprintf(req, sizeof(req), "GET %s HTTP/1.0\r\n\r\n", path);
		if (write(fd, req, n) == n && (n = read(fd, resp, sizeof(resp) - 1)) > 0) {
			resp[n] = '\0';
			sscanf(resp, "HTTP/1.%*d %d", &status);
		}
	}
	close(fd);
	return status;
}

static double wait_status(int port, const char *path, int want, double timeout_s)
{
	double start = now_s();

	while (http_status(port, path) != want) {
		if (now_s() - start > timeout_s)
			fail_msg("%s never answered %d", path, want);
		usleep(50000);
	}
	return now_s() - start;
}

/* The output directory becomes a plain file, so no window can be written: /healthz and /readyz
 * fail after 3 intervals, and recover when windows are written again. */
static void test_healthz_fails_when_no_window_is_written(void **state)
{
	const char *dir = *state;
	char out[512], moved[512], pid_arg[16], log[512];
	const char *work[] = { build_path("tests/workloads/span_workload"), "spans", "1", "40",
			       NULL };
	const char *argv[] = { "--output",	 out,		"--interval", "1", "--pid", pid_arg,
			       "--metrics-addr", "127.0.0.1:0", NULL };
	struct agent_proc agent;
	double went_bad;
	int port, fd;
	pid_t w;

	if (!dir)
		skip();
	snprintf(out, sizeof(out), "%s/out", dir);
	snprintf(moved, sizeof(moved), "%s/out.moved", dir);
	snprintf(log, sizeof(log), "%s/work.out", dir);
	assert_int_equal(mkdir(out, 0755), 0);
	w = unpriv_user_start(-1, "it-health", NULL, log, work);
	snprintf(pid_arg, sizeof(pid_arg), "%d", w);
	assert_int_equal(agent_proc_start(&agent, dir, argv), 0);
	port = metrics_scrape_port(agent.log_path);
	assert_true(port > 0);
	wait_status(port, "/healthz", 200, 10);
	wait_status(port, "/readyz", 200, 10);
	while (profiles_of(out, "it-health") < 1)
		usleep(50000);
	/* Block the output: windows now fail to be written. */
	assert_int_equal(rename(out, moved), 0);
	fd = open(out, O_WRONLY | O_CREAT, 0644);
	assert_true(fd >= 0);
	close(fd);
	went_bad = wait_status(port, "/healthz", 503, 15);
	assert_int_equal(http_status(port, "/readyz"), 503);
	printf("  /healthz failed %.1f s after the output was blocked (interval 1 s)\n", went_bad);
	/* The last good window was at most one interval before the block; 3 intervals must pass. */
	assert_true(went_bad >= 1.9);
	assert_true(went_bad <= 6.0);
	assert_int_equal(unlink(out), 0);
	assert_int_equal(rename(moved, out), 0);
	wait_status(port, "/healthz", 200, 5);
	wait_status(port, "/readyz", 200, 5);
	assert_int_equal(agent_proc_stop(&agent), 0);
	kill(w, SIGKILL);
	waitpid(w, NULL, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(
			test_hostile_files_neither_stall_windows_nor_shutdown, setup, teardown),
		cmocka_unit_test_setup_teardown(test_library_truncated_under_the_agent, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_perf_map_is_read_as_the_process_owner, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_healthz_fails_when_no_window_is_written, setup,
						teardown),
	};

	/* HOSTILE_TEST=<name> runs one test; HOSTILE_KEEP=1 keeps the temp dirs (agent logs). */
	if (getenv("HOSTILE_TEST"))
		cmocka_set_test_filter(getenv("HOSTILE_TEST"));
	return cmocka_run_group_tests_name("hostile_inputs", tests, NULL, NULL);
}
