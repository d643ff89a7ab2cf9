// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Test-only: the stage of attacks by a local user on the agent (see hostile_fixture.h). */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "fixture_build.h"
#include "hostile_fixture.h"
#include "metrics_scrape.h"
#include "tmpdir.h"

int hostile_fixture_new(const char *name, struct hostile_fixture **out)
{
	struct hostile_fixture *f;

	*out = NULL;
	if (!agent_proc_can_run())
		return 0;
	f = calloc(1, sizeof(*f));
	if (!f)
		return -1;
	f->user.uid = -1;
	f->dir = tmpdir_new(name);
	if (!f->dir) {
		free(f);
		return -1;
	}
	chmod(f->dir, 0755);
	if (unpriv_user_create(&f->user)) {
		printf("  useradd unavailable: these attacks need an unprivileged user\n");
		hostile_fixture_free(f);
		return 0;
	}
	/* The checkout may sit in a home no other user may enter: the user runs a copy, and of the
	 * hook library it may load (sanitizer builds keep it linked). */
	snprintf(f->workload, sizeof(f->workload), "%s/hostile_workload", f->dir);
	if (fixture_sh("cp '%s' '%s' '%s' && chmod 0755 '%s'",
		       build_path("tests/workloads/hostile_workload"), build_path("libspanprof.so"),
		       f->dir, f->workload)) {
		hostile_fixture_free(f);
		return -1;
	}
	*out = f;
	return 0;
}

void hostile_fixture_free(struct hostile_fixture *f)
{
	int i;

	if (!f)
		return;
	/* A check failed while the agent ran: stop it (an agent already reaped is no child). */
	if (f->agent_started && waitpid(f->agent.pid, NULL, WNOHANG) == 0)
		agent_proc_stop(&f->agent);
	for (i = 0; i < f->npids; i++) {
		kill(f->pids[i], SIGKILL);
		waitpid(f->pids[i], NULL, 0);
	}
	unpriv_user_remove(&f->user);
	if (getenv("HOSTILE_KEEP")) {
		printf("  kept %s\n", f->dir);
		free(f->dir);
	} else {
		tmpdir_remove(f->dir); /* frees the path */
	}
	free(f);
}

pid_t hostile_fixture_spawn(struct hostile_fixture *f, int uid, const char *service,
			    const char *out_name, const char *const *argv, double timeout_s)
{
	char out[700];
	pid_t pid;

	if (f->npids == HOSTILE_MAX_PIDS)
		return -1;
	snprintf(out, sizeof(out), "%s/%s", f->dir, out_name);
	pid = unpriv_user_start(uid, service, f->dir, out, argv);
	if (pid < 0)
		return -1;
	f->pids[f->npids++] = pid;
	if (timeout_s > 0 && unpriv_wait_file_has(out, "ready", timeout_s))
		return -1;
	return pid;
}

int hostile_fixture_start_agent(struct hostile_fixture *f, struct agent_proc *agent,
				const char *const *argv)
{
	if (agent_proc_start(agent, f->dir, argv))
		return -1;
	f->agent = *agent;
	f->agent_started = 1;
	return 0;
}

double hostile_now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* A window's start in seconds since the epoch, from its file name ("20261122T121314.567Z-..."),
 * so that windows on both sides of midnight compare right. */
static double window_start_s(const char *name)
{
	struct tm tm = { 0 };
	double sec;

	if (sscanf(name, "%4d%2d%2dT%2d%2d%lf", &tm.tm_year, &tm.tm_mon, &tm.tm_mday, &tm.tm_hour,
		   &tm.tm_min, &sec) != 6)
		return -1;
	tm.tm_year -= 1900;
	tm.tm_mon -= 1;
	return (double)timegm(&tm) + sec;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

int hostile_windows(const char *dir, const char *service, double *max_gap_s)
{
	char suffix[128];
	double starts[512];
	struct dirent *de;
	size_t len, slen;
	int n = 0, i;
	DIR *d = opendir(dir);

	snprintf(suffix, sizeof(suffix), "-%s.pb.gz", service);
	slen = strlen(suffix);
	while (d && (de = readdir(d)) && n < 512) {
		len = strlen(de->d_name);
		if (len > slen && !strcmp(de->d_name + len - slen, suffix))
			starts[n++] = window_start_s(de->d_name);
	}
	if (d)
		closedir(d);
	qsort(starts, n, sizeof(starts[0]), cmp_double);
	*max_gap_s = 0;
	for (i = 1; i < n; i++)
		if (starts[i] - starts[i - 1] > *max_gap_s)
			*max_gap_s = starts[i] - starts[i - 1];
	return n;
}

double hostile_sigterm(pid_t pid, int *status)
{
	double start = hostile_now_s();

	kill(pid, SIGTERM);
	while (waitpid(pid, status, WNOHANG) == 0) {
		if (hostile_now_s() - start > 30) {
			kill(pid, SIGKILL);
			waitpid(pid, status, 0);
			return -1;
		}
		usleep(10000);
	}
	return hostile_now_s() - start;
}

uint64_t hostile_peak_rss(pid_t pid)
{
	char path[64], line[256];
	unsigned long long kb = 0;
	FILE *fp;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	fp = fopen(path, "r");
	while (fp && fgets(line, sizeof(line), fp))
		if (sscanf(line, "VmHWM: %llu kB", &kb) == 1)
			break;
	if (fp)
		fclose(fp);
	return (uint64_t)kb << 10;
}

double hostile_cpu_seconds(pid_t pid)
{
	char path[64], buf[1024], *p;
	unsigned long long ut, st;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	p = strrchr(buf, ')'); /* comm may hold spaces and parentheses */
	if (!p ||
	    sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut, &st) != 2)
		return -1;
	return (double)(ut + st) / sysconf(_SC_CLK_TCK);
}

int hostile_guard(int port, const char *guard, double *value)
{
	char metric[128];

	snprintf(metric, sizeof(metric), "spanprof_input_guards_total{guard=\"%s\"}", guard);
	return metrics_scrape(port, metric, value);
}
