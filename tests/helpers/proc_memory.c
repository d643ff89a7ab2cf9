// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Test-only: a process's memory from /proc (proc_memory.h). */
#define _GNU_SOURCE
#include <dirent.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "proc_memory.h"

static uint64_t fdinfo_memlock(pid_t pid, const char *fd)
{
	char path[PATH_MAX], line[256];
	uint64_t v = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/fdinfo/%s", pid, fd);
	f = fopen(path, "r");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "memlock: %" SCNu64, &v) == 1)
			break;
	fclose(f);
	return v;
}

int proc_memory_read(pid_t pid, struct proc_memory *out)
{
	char path[PATH_MAX], link[64], line[256];
	struct dirent *de;
	uint64_t v;
	FILE *f;
	DIR *d;

	memset(out, 0, sizeof(*out));
	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "VmRSS: %" SCNu64, &v) == 1)
			out->rss = v * 1024;
		else if (sscanf(line, "VmHWM: %" SCNu64, &v) == 1)
			out->peak_rss = v * 1024;
	}
	fclose(f);
	snprintf(path, sizeof(path), "/proc/%d/fd", pid);
	d = opendir(path);
	if (!d)
		return -1;
	while ((de = readdir(d))) {
		ssize_t n;

		snprintf(path, sizeof(path), "/proc/%d/fd/%s", pid, de->d_name);
		n = readlink(path, link, sizeof(link) - 1);
		if (n < 0)
			continue;
		link[n] = '\0';
		if (strcmp(link, "anon_inode:bpf-map"))
			continue;
		out->bpf_maps += fdinfo_memlock(pid, de->d_name);
		out->nmaps++;
	}
	closedir(d);
	return 0;
}
