// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Test-only: a process's memory from /proc (proc_memory.h). */
#define _GNU_SOURCE
#include <dirent.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/bpf.h>

#include "proc_memory.h"

/* memlock, map_id and max_entries of /proc/pid/fdinfo/fd (0 when missing). */
static uint64_t fdinfo_memlock(pid_t pid, const char *fd, uint32_t *id, uint32_t *max_entries)
{
	char path[PATH_MAX], line[256];
	uint64_t v = 0;
	unsigned int u;
	FILE *f;

	if (id)
		*id = *max_entries = 0;
	snprintf(path, sizeof(path), "/proc/%d/fdinfo/%s", pid, fd);
	f = fopen(path, "r");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "memlock: %" SCNu64, &v) == 1)
			continue;
		if (id && sscanf(line, "map_id: %u", &u) == 1)
			*id = u;
		if (id && sscanf(line, "max_entries: %u", &u) == 1)
			*max_entries = u;
	}
	fclose(f);
	return v;
}

/* pid's fd named by the directory entry is a BPF map. */
static int is_bpf_map(pid_t pid, const char *fd)
{
	char path[PATH_MAX], link[64];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/fd/%s", pid, fd);
	n = readlink(path, link, sizeof(link) - 1);
	if (n < 0)
		return 0;
	link[n] = '\0';
	return !strcmp(link, "anon_inode:bpf-map");
}

/* The kernel's name of map id (into name[16]); -1 when the map is gone. */
static int map_name(uint32_t id, char *name)
{
	struct bpf_map_info info;
	union bpf_attr attr;
	int fd, err;

	memset(&attr, 0, sizeof(attr));
	attr.map_id = id;
	fd = syscall(__NR_bpf, BPF_MAP_GET_FD_BY_ID, &attr, sizeof(attr));
	if (fd < 0)
		return -1;
	memset(&info, 0, sizeof(info));
	memset(&attr, 0, sizeof(attr));
	attr.info.bpf_fd = fd;
	attr.info.info_len = sizeof(info);
	attr.info.info = (uint64_t)(uintptr_t)&info;
	err = syscall(__NR_bpf, BPF_OBJ_GET_INFO_BY_FD, &attr, sizeof(attr));
	close(fd);
	if (err)
		return -1;
	memcpy(name, info.name, 16);
	name[15] = '\0';
	return 0;
}

/* Calls fn(ctx, fd) for every BPF map fd pid holds (fd: its name under /proc/pid/fd). Returns
 * 0, or -1 when pid's fd directory cannot be read. */
static int each_map_fd(pid_t pid, void (*fn)(void *ctx, pid_t pid, const char *fd), void *ctx)
{
	char path[PATH_MAX];
	struct dirent *de;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/fd", pid);
	d = opendir(path);
	if (!d)
		return -1;
	while ((de = readdir(d)))
		if (is_bpf_map(pid, de->d_name))
			fn(ctx, pid, de->d_name);
	closedir(d);
	return 0;
}

struct map_list {
	struct proc_bpf_map *out;
	int max, n;
};

static void list_map(void *ctx, pid_t pid, const char *fd)
{
	struct map_list *l = ctx;
	struct proc_bpf_map m;

	m.memlock = fdinfo_memlock(pid, fd, &m.id, &m.max_entries);
	if (!m.id || map_name(m.id, m.name))
		return;
	if (l->n < l->max)
		l->out[l->n] = m;
	l->n++;
}

int proc_memory_maps(pid_t pid, struct proc_bpf_map *out, int max)
{
	struct map_list l = { out, max, 0 };

	return each_map_fd(pid, list_map, &l) ? -1 : l.n;
}

uint64_t proc_memory_fd_memlock(int fd)
{
	char name[16];

	snprintf(name, sizeof(name), "%d", fd);
	return fdinfo_memlock(getpid(), name, NULL, NULL);
}

static void add_map(void *ctx, pid_t pid, const char *fd)
{
	struct proc_memory *out = ctx;

	out->bpf_maps += fdinfo_memlock(pid, fd, NULL, NULL);
	out->nmaps++;
}

int proc_memory_read(pid_t pid, struct proc_memory *out)
{
	char path[PATH_MAX], line[256];
	uint64_t v;
	FILE *f;

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
	return each_map_fd(pid, add_map, out);
}
