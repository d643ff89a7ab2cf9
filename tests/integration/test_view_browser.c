// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The span explorer end to end: the agent profiles a workload with two span kinds ("GET /report":
 * CPU in build_report, then a wait in wait_for_disk; "GET /health": CPU in check_health) once
 * for the group, and `spanprof view` serves the directory. Over HTTP: the slowest span first,
 * its profile, and the same answers once damaged files are added beside the agent's (skipped and
 * listed, never fatal). In a real browser: headless Chromium driven by playwright-core
 * (tests/view/browser_check.cjs) opens the page, finds the slowest span at the top of the table,
 * clicks it, and checks the flame graph's CPU and off-CPU parts; it skips, saying why, where
 * node, Chromium or playwright-core is missing. */
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

#include <curl/curl.h>
#include <dirent.h>

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

/* One profiled run for the group: the directory and the slowest span. */
struct run {
	char *dir;
	char slowest[17];
};

static int group_setup(void **state)
{
	static struct run run;
	char out_path[1024], name[64];
	const char *argv[] = { "--output", NULL, "--interval", "1", NULL };
	const char *wargv[] = { build_path("tests/workloads/view_workload"), NULL };
	const char *env[] = { "OTEL_SERVICE_NAME=view-it", NULL };
	struct profiled_run r = { .workload_argv = wargv,
				  .workload_env = env,
				  .agent_args = argv,
				  .hook_file = build_path("libspanprof.so") };
	long long wall;

	*state = NULL;
	if (!agent_proc_can_run())
		return 0;
	run.dir = tmpdir_new("it-view");
	if (!run.dir)
		return -1;
	argv[1] = r.dir = run.dir;
	if (profiled_run(&r))
		return -1;
	snprintf(out_path, sizeof(out_path), "%s/workload-%d.out", run.dir, r.pid);
	wall = slowest_span(out_path, run.slowest, name, sizeof(name));
	printf("  the workload's slowest span: %s (%s), %.1f ms\n", run.slowest, name, wall / 1e6);
	if (strcmp(name, "GET /report"))
		return -1;
	*state = &run;
	return 0;
}

static int group_teardown(void **state)
{
	struct run *run = *state;

	if (run)
		tmpdir_remove(run->dir);
	return 0;
}

struct body {
	char *p;
	size_t len;
};

static size_t collect(char *p, size_t size, size_t n, void *arg)
{
	struct body *b = arg;
	char *q = realloc(b->p, b->len + size * n + 1);

	if (!q)
		return 0;
	memcpy(q + b->len, p, size * n);
	b->p = q;
	b->len += size * n;
	b->p[b->len] = '\0';
	return size * n;
}

/* GET url + path: the body (malloc'ed) of a 200 answer, or NULL. */
static char *get(const char *url, const char *path)
{
	struct body b = { calloc(1, 1), 0 };
	char full[512];
	CURL *c = curl_easy_init();
	long code = 0;

	snprintf(full, sizeof(full), "%s%s", url, path + 1);
	curl_easy_setopt(c, CURLOPT_URL, full);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, collect);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, &b);
	curl_easy_setopt(c, CURLOPT_TIMEOUT, 60L);
	if (curl_easy_perform(c) != CURLE_OK ||
	    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code) != CURLE_OK || code != 200) {
		free(b.p);
		b.p = NULL;
	}
	curl_easy_cleanup(c);
	return b.p;
}

/* The slowest span's profile holds its own functions and not the other span kind's. */
static void check_profile(const char *url, const char *span_id)
{
	char path[128], *body;

	snprintf(path, sizeof(path), "/api/profile?span_id=%s", span_id);
	body = get(url, path);
	assert_non_null(body);
	assert_non_null(strstr(body, "\"build_report\""));
	assert_non_null(strstr(body, "\"wait_for_disk\""));
	assert_null(strstr(body, "\"check_health\""));
	free(body);
}

/* Beside every profile of the agent's, a truncated copy in the same window, a garbage off-CPU
 * profile and an empty one; a span log with bad lines and a half-written last line. Returns the
 * number of damaged profiles written. */
static int damage(const char *dir)
{
	char path[1024], copy[1024], buf[4096];
	struct dirent *de;
	DIR *d = opendir(dir);
	int n = 0, seq = 0;
	ssize_t len;
	FILE *f;

	assert_non_null(d);
	while ((de = readdir(d))) {
		const char *dash = strstr(de->d_name, "Z-");
		int fd;

		if (!dash || !strstr(de->d_name, "-view-it.pb.gz"))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		fd = open(path, O_RDONLY);
		len = fd >= 0 ? read(fd, buf, sizeof(buf)) : -1;
		close(fd);
		assert_true(len > 16);
		snprintf(copy, sizeof(copy), "%s/%.*s-%06d-view-it.pb.gz", dir,
			 (int)(dash + 1 - de->d_name), de->d_name, 900000 + seq++);
		f = fopen(copy, "w");
		assert_non_null(f);
		fwrite(buf, 1, (size_t)len / 2, f);
		fclose(f);
		n++;
		snprintf(copy, sizeof(copy), "%s/%.*s-%06d-view-it.off_cpu.pb.gz", dir,
			 (int)(dash + 1 - de->d_name), de->d_name, 900000 + seq++);
		f = fopen(copy, "w");
		fputs("this is not a profile", f);
		fclose(f);
		n++;
	}
	closedir(d);
	snprintf(path, sizeof(path), "%s/20300101T000000.000Z-000001-view-it.pb.gz", dir);
	fclose(fopen(path, "w"));
	snprintf(path, sizeof(path), "%s/damaged.spans.jsonl", dir);
	f = fopen(path, "w");
	fputs("{\"service\":\"x\"}\nnot json\n{\"service\":\"half", f);
	fclose(f);
	return n;
}

static int count(const char *s, const char *what)
{
	int n = 0;

	for (; (s = strstr(s, what)); s += strlen(what))
		n++;
	return n;
}

static void test_view_serves_the_agents_directory_and_skips_bad_files(void **state)
{
	struct run *run = *state;
	char url[256], log_path[1024], *body, first[64];
	pid_t viewer;
	int damaged;

	if (!run)
		skip();
	snprintf(log_path, sizeof(log_path), "%s/view-http.log", run->dir);
	viewer = start_viewer(run->dir, log_path, url, sizeof(url));
	assert_true(!strncmp(url, "http://127.0.0.1:", 17));
	body = get(url, "/api/spans?limit=1");
	assert_non_null(body);
	snprintf(first, sizeof(first), "\"span_id\":\"%s\"", run->slowest);
	assert_non_null(strstr(body, first));
	assert_non_null(strstr(body, "\"total\":30,"));
	free(body);
	check_profile(url, run->slowest);

	damaged = damage(run->dir);
	printf("  %d damaged profiles, an empty one and a bad span log added\n", damaged);
	body = get(url, "/api/reload");
	assert_non_null(body);
	free(body);
	check_profile(url, run->slowest); /* reads the damaged copies of its windows too */
	body = get(url, "/api/profile?service=view-it&name=GET%20/health");
	assert_non_null(body);
	assert_non_null(strstr(body, "\"check_health\""));
	assert_null(strstr(body, "\"build_report\""));
	free(body);
	body = get(url, "/api/status");
	assert_non_null(body);
	printf("  status: %.300s...\n", body);
	assert_true(count(body, "truncated gzip stream") >= 1);
	assert_true(count(body, "not a pprof profile") >= 1);
	assert_int_equal(count(body, "empty file"), 1);
	assert_non_null(strstr(body, "2 of 2 lines are not span records"));
	assert_non_null(strstr(body, "\"spans\":30,"));
	free(body);
	kill(viewer, SIGINT);
	assert_int_equal(workload_wait(viewer, 30), 0);
}

static void test_view_in_a_real_browser(void **state)
{
	struct run *run = *state;
	const char *shot = env_or("SPANPROF_VIEW_SCREENSHOT", build_path("tests/view.png"));
	char url[256], log_path[1024];
	struct stat st;
	pid_t viewer;
	int rc;

	if (!run || !browser_available())
		skip();
	snprintf(log_path, sizeof(log_path), "%s/view-browser.log", run->dir);
	viewer = start_viewer(run->dir, log_path, url, sizeof(url));
	printf("  spanprof view serves %s\n", url);
	assert_true(!strncmp(url, "http://127.0.0.1:", 17));
	unlink(shot);
	rc = run_browser(url, run->slowest, shot);
	kill(viewer, SIGINT);
	assert_int_equal(workload_wait(viewer, 30), 0);
	if (rc == BROWSER_SKIP) {
		printf("  skip: the browser could not start here (see above)\n");
		skip();
	}
	assert_int_equal(rc, 0);
	assert_int_equal(stat(shot, &st), 0);
	assert_true(st.st_size > 10000);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_view_in_a_real_browser),
		cmocka_unit_test(test_view_serves_the_agents_directory_and_skips_bad_files),
	};

	return cmocka_run_group_tests_name("view_browser", tests, group_setup, group_teardown);
}
