// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The span explorer end to end, in a real browser: the agent profiles a workload with two span
 * kinds ("GET /report": CPU in build_report, then a wait in wait_for_disk; "GET /health": CPU in
 * check_health), `spanprof view` serves the directory, and headless Chromium driven by
 * playwright-core (tests/view/browser_check.cjs) opens the page, finds the slowest span the
 * workload measured at the top of the table, clicks it, and checks the flame graph's CPU and
 * off-CPU parts. Skips, saying why, where node, Chromium or playwright-core is missing. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "agent_proc.h"
#include "profiled_run.h"
#include "tmpdir.h"

#define BROWSER_SKIP 77 /* browser_check.cjs: the browser cannot run here */
#define CHROMIUM_DEFAULT "/usr/bin/chromium"
#define PLAYWRIGHT_DEFAULT "/opt/spanprof-test/node_modules/playwright-core"

static const char *env_or(const char *name, const char *def)
{
	const char *v = getenv(name);

	return v && *v ? v : def;
}

/* 1 when node, Chromium and playwright-core are installed; otherwise prints what is missing. */
static int browser_available(void)
{
	const char *chromium = env_or("SPANPROF_CHROMIUM", CHROMIUM_DEFAULT);
	const char *pw = env_or("SPANPROF_PLAYWRIGHT_CORE", PLAYWRIGHT_DEFAULT);

	if (system("command -v node >/dev/null 2>&1")) {
		printf("  skip: node is not installed (scripts/setup-debian.sh installs nodejs)\n");
		return 0;
	}
	if (access(chromium, X_OK)) {
		printf("  skip: no Chromium at %s (scripts/setup-debian.sh installs Debian's "
		       "chromium)\n",
		       chromium);
		return 0;
	}
	if (access(pw, R_OK)) {
		printf("  skip: no playwright-core at %s (scripts/setup-debian.sh installs it)\n",
		       pw);
		return 0;
	}
	return 1;
}

/* The span the workload measured as the slowest: "span <id> <name...> <wall_ns>" lines. */
static long long slowest_span(const char *out_path, char id[17], char *name, size_t name_size)
{
	char line[256], sid[32];
	long long wall, best = -1;
	char *last;
	FILE *f = fopen(out_path, "r");

	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "span %16s", sid) != 1 || !(last = strrchr(line, ' ')))
			continue;
		wall = atoll(last + 1);
		if (wall > best) {
			best = wall;
			memcpy(id, sid, 17);
			*last = '\0';
			snprintf(name, name_size, "%.63s", line + strlen("span ") + 17);
		}
	}
	fclose(f);
	return best;
}

/* Starts `spanprof view dir --port 0`; its first stdout line, the URL, goes into url. */
static pid_t start_viewer(const char *dir, const char *log_path, char *url, size_t url_size)
{
	int fds[2], logfd, n = 0;
	struct pollfd pfd;
	pid_t pid;
	char c;

	assert_int_equal(pipe2(fds, O_CLOEXEC), 0);
	logfd = open(log_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	assert_true(logfd >= 0);
	pid = fork();
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGTERM);
		dup2(fds[1], 1);
		dup2(logfd, 2);
		execl(build_path("spanprof"), "spanprof", "view", dir, "--port", "0", (char *)NULL);
		_exit(127);
	}
	close(fds[1]);
	close(logfd);
	pfd = (struct pollfd){ .fd = fds[0], .events = POLLIN };
	/* The first line: printed once the directory is read and the socket listens. */
	while ((size_t)n + 1 < url_size && poll(&pfd, 1, 60000) == 1 && read(fds[0], &c, 1) == 1 &&
	       c != '\n')
		url[n++] = c;
	url[n] = '\0';
	close(fds[0]);
	return pid;
}

static int run_browser(const char *url, const char *span_id, const char *shot)
{
	pid_t pid;
	int status;

	fflush(stdout); /* before the child's lines */
	pid = fork();
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGTERM);
		execlp("node", "node", build_path("../tests/view/browser_check.cjs"), url, span_id,
		       shot, (char *)NULL);
		_exit(127);
	}
	assert_true(pid > 0);
	status = workload_wait(pid, 180);
	return status;
}

static void test_view_shows_the_slowest_spans_flame_graph(void **state)
{
	char *dir, url[256], out_path[1024], log_path[1024], id[17], name[64];
	const char *shot = env_or("SPANPROF_VIEW_SCREENSHOT", build_path("tests/view.png"));
	const char *argv[] = { "--output", NULL, "--interval", "1", NULL };
	const char *wargv[] = { build_path("tests/workloads/view_workload"), NULL };
	const char *env[] = { "OTEL_SERVICE_NAME=view-it", NULL };
	struct profiled_run r = { .workload_argv = wargv,
				  .workload_env = env,
				  .agent_args = argv,
				  .hook_file = build_path("libspanprof.so") };
	struct stat st;
	long long wall;
	pid_t viewer;
	int rc;

	(void)state;
	if (!agent_proc_can_run() || !browser_available())
		skip();
	dir = tmpdir_new("it-view");
	assert_non_null(dir);
	argv[1] = r.dir = dir;
	assert_int_equal(profiled_run(&r), 0);
	snprintf(out_path, sizeof(out_path), "%s/workload-%d.out", dir, r.pid);
	wall = slowest_span(out_path, id, name, sizeof(name));
	printf("  the workload's slowest span: %s (%s), %.1f ms\n", id, name, wall / 1e6);
	assert_string_equal(name, "GET /report");

	snprintf(log_path, sizeof(log_path), "%s/view.log", dir);
	viewer = start_viewer(dir, log_path, url, sizeof(url));
	printf("  spanprof view serves %s\n", url);
	assert_true(!strncmp(url, "http://127.0.0.1:", 17));
	unlink(shot);
	rc = run_browser(url, id, shot);
	kill(viewer, SIGINT);
	assert_int_equal(workload_wait(viewer, 30), 0);
	if (rc == BROWSER_SKIP) {
		printf("  skip: the browser could not start here (see above)\n");
		tmpdir_remove(dir);
		skip();
	}
	assert_int_equal(rc, 0);
	assert_int_equal(stat(shot, &st), 0);
	assert_true(st.st_size > 10000);
	tmpdir_remove(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_view_shows_the_slowest_spans_flame_graph),
	};

	return cmocka_run_group_tests_name("view_browser", tests, NULL, NULL);
}
