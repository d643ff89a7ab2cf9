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

#include "util/self_memory.h"

/* /proc/self/status is about 1.5 KiB, a map's fdinfo a few hundred bytes: what does not fit is
 * past the lines read here. */
#define SELF_FILE_MAX 4096

void self_memory_file_close(struct self_memory_file *f)
{
	if (f->fd >= 0)
		close(f->fd);
	f->fd = -1;
	f->of_fd = -1;
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

int self_memory_bpf_map_in(struct self_memory_file *f, int fd, uint64_t *bytes)
{
	char path[64];

	if (f->fd >= 0 && f->of_fd != fd)
		self_memory_file_close(f);
	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	f->of_fd = fd;
	return read_field(f, path, "memlock:", 1, bytes);
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
