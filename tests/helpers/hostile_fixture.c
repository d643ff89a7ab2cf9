// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Test-only: the stage of attacks by a local user on the agent (see hostile_fixture.h). */
#define _GNU_SOURCE
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "agent/map_budget.h"
#include "config/config.h"
#include "fixture_build.h"
#include "hostile_fixture.h"
#include "metrics_scrape.h"
#include "profile_windows.h"
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
	if (unpriv_stage_begin(&f->user, &f->dir, name)) {
		free(f);
		return -1;
	}
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
	if (!f)
		return;
	/* A check failed while the agent ran: stop it (an agent already reaped is no child). */
	if (f->agent_started && waitpid(f->agent.pid, NULL, WNOHANG) == 0)
		agent_proc_stop(&f->agent);
	unpriv_stage_end(f->pids, f->npids, &f->user, f->dir, "HOSTILE_KEEP");
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

int hostile_windows(const char *dir, const char *service, double *max_gap_s)
{
	return profile_windows_since(dir, service, 0, max_gap_s);
}

static uint64_t chart_memory_limit(void)
{
	char line[256], unit[8] = "";
	unsigned long long v = 0;
	int in_limits = 0;
	FILE *fp = fopen(build_path("../helm/spanprof/values.yaml"), "r");

	while (fp && fgets(line, sizeof(line), fp)) {
		if (!strncmp(line, "  limits:", 9))
			in_limits = 1;
		else if (in_limits && sscanf(line, "    memory: %llu%7s", &v, unit) >= 1)
			break;
		else if (in_limits && strncmp(line, "    ", 4))
			in_limits = 0;
	}
	if (fp)
		fclose(fp);
	if (!strcmp(unit, "Mi"))
		return (uint64_t)v << 20;
	if (!strcmp(unit, "Gi"))
		return (uint64_t)v << 30;
	return 0;
}

uint64_t hostile_chart_rss_limit(void)
{
	uint64_t limit = chart_memory_limit(), maps;
	struct spanprof_config cfg;
	int err;

	config_init(&cfg);
	err = map_budget_worst(&cfg, MAP_BUDGET_NODE_CPUS, MAP_BUDGET_NODE_SPAN_THREADS, &maps,
			       NULL, NULL);
	config_release(&cfg);
	return err || maps >= limit ? 0 : limit - maps;
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
