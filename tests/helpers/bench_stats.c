// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Test-only: process CPU time and BPF program run-time statistics (bench_stats.h). */
#define _GNU_SOURCE
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "bench_stats.h"

#define BPF_STATS "/proc/sys/kernel/bpf_stats_enabled"
#define PROG_TYPE_PERF_EVENT 7 /* BPF_PROG_TYPE_PERF_EVENT in fdinfo's prog_type */

double bench_stats_cpu_s(pid_t pid)
{
	unsigned long utime = 0, stime = 0;
	char path[64], buf[4096], *p;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	f = fopen(path, "r");
	if (!f || !fgets(buf, sizeof(buf), f)) {
		if (f)
			fclose(f);
		return -1;
	}
	fclose(f);
	p = strrchr(buf, ')'); /* comm may hold spaces */
	if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &utime,
			 &stime) != 2)
		return -1;
	return (double)(utime + stime) / sysconf(_SC_CLK_TCK);
}

/* What fdinfo says of one descriptor: a BPF program's type, id and run-time statistics. */
struct prog_fd {
	int type; /* prog_type; -1: not a program */
	unsigned int id; /* prog_id; 0: not a program */
	unsigned long long ns, cnt;
};

static void read_prog_fd(const char *path, struct prog_fd *p)
{
	char line[256];
	FILE *f = fopen(path, "r");

	*p = (struct prog_fd){ .type = -1 };
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		sscanf(line, "prog_type: %d", &p->type);
		sscanf(line, "prog_id: %u", &p->id);
		sscanf(line, "run_time_ns: %llu", &p->ns);
		sscanf(line, "run_cnt: %llu", &p->cnt);
	}
	fclose(f);
}

/* Calls fn on each descriptor pid holds, until fn returns nonzero. */
static void each_fd(pid_t pid, int (*fn)(const struct prog_fd *p, void *arg), void *arg)
{
	char path[300];
	struct dirent *de;
	struct prog_fd p;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/fdinfo", pid);
	d = opendir(path);
	if (!d)
		return;
	while ((de = readdir(d))) {
		snprintf(path, sizeof(path), "/proc/%d/fdinfo/%s", pid, de->d_name);
		read_prog_fd(path, &p);
		if (fn(&p, arg))
			break;
	}
	closedir(d);
}

struct prog_stats {
	const char *name; /* bench_stats_bpf_prog(): the program's */
	unsigned long long *ns, *cnt;
};

static int add_perf_event_prog(const struct prog_fd *p, void *arg)
{
	struct prog_stats *s = arg;

	if (p->type == PROG_TYPE_PERF_EVENT) {
		*s->ns += p->ns;
		*s->cnt += p->cnt;
	}
	return 0;
}

void bench_stats_bpf_progs(pid_t pid, unsigned long long *ns, unsigned long long *cnt)
{
	struct prog_stats s = { .ns = ns, .cnt = cnt };

	*ns = *cnt = 0;
	each_fd(pid, add_perf_event_prog, &s);
}

/* Whether program id is called name. */
static int prog_named(unsigned int id, const char *name)
{
	struct bpf_prog_info info;
	__u32 len = sizeof(info);
	int fd = bpf_prog_get_fd_by_id(id);
	int match;

	if (fd < 0)
		return 0;
	memset(&info, 0, sizeof(info));
	match = !bpf_obj_get_info_by_fd(fd, &info, &len) &&
		!strncmp(info.name, name, sizeof(info.name) - 1);
	close(fd);
	return match;
}

static int take_named_prog(const struct prog_fd *p, void *arg)
{
	struct prog_stats *s = arg;

	if (!p->id || !prog_named(p->id, s->name))
		return 0;
	*s->ns = p->ns;
	*s->cnt = p->cnt;
	return 1;
}

void bench_stats_bpf_prog(pid_t pid, const char *name, unsigned long long *ns,
			  unsigned long long *cnt)
{
	struct prog_stats s = { .name = name, .ns = ns, .cnt = cnt };

	*ns = *cnt = 0;
	each_fd(pid, take_named_prog, &s);
}

void bench_stats_bpf_prog_fd(int fd, unsigned long long *ns, unsigned long long *cnt)
{
	struct bpf_prog_info info;
	__u32 len = sizeof(info);

	memset(&info, 0, sizeof(info));
	*ns = *cnt = 0;
	if (fd >= 0 && !bpf_obj_get_info_by_fd(fd, &info, &len)) {
		*ns = info.run_time_ns;
		*cnt = info.run_cnt;
	}
}

int bench_stats_write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	if (!f)
		return -1;
	fputs(text, f);
	return fclose(f) ? -1 : 0;
}

int bench_stats_enable(void)
{
	char buf[8] = "0";
	FILE *f = fopen(BPF_STATS, "r");

	if (f) {
		if (!fgets(buf, sizeof(buf), f))
			buf[0] = '0';
		fclose(f);
	}
	bench_stats_write_file(BPF_STATS, "1");
	return atoi(buf);
}

void bench_stats_restore(int was)
{
	bench_stats_write_file(BPF_STATS, was ? "1" : "0");
}
