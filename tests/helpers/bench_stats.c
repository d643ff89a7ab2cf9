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

/* Adds one fd's statistics when it is a perf_event program. */
static void add_prog_fd(const char *path, unsigned long long *ns, unsigned long long *cnt)
{
	unsigned long long t = 0, c = 0;
	char line[256];
	int type = -1;
	FILE *f = fopen(path, "r");

	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		sscanf(line, "prog_type: %d", &type);
		sscanf(line, "run_time_ns: %llu", &t);
		sscanf(line, "run_cnt: %llu", &c);
	}
	fclose(f);
	if (type == PROG_TYPE_PERF_EVENT) {
		*ns += t;
		*cnt += c;
	}
}

void bench_stats_bpf_progs(pid_t pid, unsigned long long *ns, unsigned long long *cnt)
{
	char path[300];
	struct dirent *de;
	DIR *d;

	*ns = *cnt = 0;
	snprintf(path, sizeof(path), "/proc/%d/fdinfo", pid);
	d = opendir(path);
	if (!d)
		return;
	while ((de = readdir(d))) {
		snprintf(path, sizeof(path), "/proc/%d/fdinfo/%s", pid, de->d_name);
		add_prog_fd(path, ns, cnt);
	}
	closedir(d);
}

/* Whether the fdinfo at path is a program called name; its statistics into *ns and *cnt. */
static int prog_fd_named(const char *path, const char *name, unsigned long long *ns,
			 unsigned long long *cnt)
{
	struct bpf_prog_info info;
	__u32 len = sizeof(info);
	unsigned int id = 0;
	char line[256];
	FILE *f = fopen(path, "r");
	int fd, match;

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		sscanf(line, "prog_id: %u", &id);
		sscanf(line, "run_time_ns: %llu", ns);
		sscanf(line, "run_cnt: %llu", cnt);
	}
	fclose(f);
	if (!id)
		return 0;
	fd = bpf_prog_get_fd_by_id(id);
	if (fd < 0)
		return 0;
	memset(&info, 0, sizeof(info));
	match = !bpf_obj_get_info_by_fd(fd, &info, &len) &&
		!strncmp(info.name, name, sizeof(info.name) - 1);
	close(fd);
	return match;
}

void bench_stats_bpf_prog(pid_t pid, const char *name, unsigned long long *ns,
			  unsigned long long *cnt)
{
	unsigned long long t, c;
	char path[300];
	struct dirent *de;
	DIR *d;

	*ns = *cnt = 0;
	snprintf(path, sizeof(path), "/proc/%d/fdinfo", pid);
	d = opendir(path);
	if (!d)
		return;
	while ((de = readdir(d))) {
		snprintf(path, sizeof(path), "/proc/%d/fdinfo/%s", pid, de->d_name);
		t = c = 0;
		if (prog_fd_named(path, name, &t, &c)) {
			*ns = t;
			*cnt = c;
			break;
		}
	}
	closedir(d);
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
