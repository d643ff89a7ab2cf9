// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The agent's own memory (self_memory.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <malloc.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "util/self_memory.h"

/* /proc/self/status is about 1.5 KiB, a map's fdinfo a few hundred bytes: what does not fit is
 * past the lines read here. */
#define SELF_FILE_MAX 4096

void self_memory_file_close(struct self_memory_file *f)
{
	if (f->fd >= 0)
		close(f->fd);
	*f = (struct self_memory_file)SELF_MEMORY_FILE_INIT;
}

static const char *next_line(const char *line)
{
	const char *nl = strchr(line, '\n');

	return nl ? nl + 1 : NULL;
}

/* The value of the first line of f's file (path, opened when f is not open) starting with key
 * (a number, times scale). A seq file read again from offset 0 is generated anew. */
static int read_field(struct self_memory_file *f, const char *path, const char *key, uint64_t scale,
		      uint64_t *out)
{
	size_t klen = strlen(key);
	char buf[SELF_FILE_MAX];
	const char *line;
	uint64_t v;
	ssize_t n;

	if (f->fd < 0) {
		f->fd = open(path, O_RDONLY | O_CLOEXEC);
		if (f->fd < 0)
			return -errno;
	}
	n = pread(f->fd, buf, sizeof(buf) - 1, 0);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	for (line = buf; line; line = next_line(line)) {
		if (strncmp(line, key, klen))
			continue;
		if (sscanf(line + klen, " %" SCNu64, &v) != 1)
			return -ENOENT;
		*out = v * scale;
		return 0;
	}
	return -ENOENT;
}

int self_memory_rss_in(struct self_memory_file *f, uint64_t *bytes)
{
	return read_field(f, "/proc/self/status", "VmRSS:", 1024, bytes);
}

/* 1 for a map whose memory the kernel allocates whole when it is created: its memlock never
 * changes. Hashes without preallocation, tries, storage maps and the rest grow and shrink. */
static int allocated_whole(const struct bpf_map_info *info)
{
	switch (info->type) {
	case BPF_MAP_TYPE_ARRAY:
	case BPF_MAP_TYPE_PERCPU_ARRAY:
	case BPF_MAP_TYPE_PROG_ARRAY:
	case BPF_MAP_TYPE_PERF_EVENT_ARRAY:
	case BPF_MAP_TYPE_ARRAY_OF_MAPS:
	case BPF_MAP_TYPE_STACK_TRACE:
	case BPF_MAP_TYPE_RINGBUF:
	case BPF_MAP_TYPE_LRU_HASH:
	case BPF_MAP_TYPE_LRU_PERCPU_HASH:
		return 1;
	case BPF_MAP_TYPE_HASH:
	case BPF_MAP_TYPE_PERCPU_HASH:
		return !(info->map_flags & BPF_F_NO_PREALLOC);
	default:
		return 0;
	}
}

int self_memory_bpf_map_in(struct self_memory_file *f, int fd, uint64_t *bytes)
{
	struct bpf_map_info info;
	__u32 len = sizeof(info);
	char path[64];
	int err;

	memset(&info, 0, sizeof(info));
	if (bpf_obj_get_info_by_fd(fd, &info, &len))
		info.id = 0;
	if (f->fixed_id && info.id == f->fixed_id) {
		*bytes = f->fixed_bytes;
		return 0;
	}
	if (f->fd >= 0 && f->of_fd != fd)
		self_memory_file_close(f);
	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	f->of_fd = fd;
	err = read_field(f, path, "memlock:", 1, bytes);
	f->fixed_id = !err && info.id && allocated_whole(&info) ? info.id : 0;
	f->fixed_bytes = *bytes;
	return err;
}

int self_memory_rss(uint64_t *bytes)
{
	struct self_memory_file f = SELF_MEMORY_FILE_INIT;
	int err = self_memory_rss_in(&f, bytes);

	self_memory_file_close(&f);
	return err;
}

int self_memory_bpf_map(int fd, uint64_t *bytes)
{
	struct self_memory_file f = SELF_MEMORY_FILE_INIT;
	int err = self_memory_bpf_map_in(&f, fd, bytes);

	self_memory_file_close(&f);
	return err;
}

uint64_t self_memory_heap(void)
{
	struct mallinfo2 mi = mallinfo2();

	return (uint64_t)mi.uordblks + mi.hblkhd;
}
