// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The agent's own memory (self_memory.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <malloc.h>
#include <stdio.h>
#include <string.h>

#include "util/self_memory.h"

/* The value of the first line of path starting with key (a number, times scale). */
static int read_field(const char *path, const char *key, uint64_t scale, uint64_t *out)
{
	size_t klen = strlen(key);
	char line[256];
	uint64_t v;
	int err = -ENOENT;
	FILE *f;

	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, key, klen))
			continue;
		if (sscanf(line + klen, " %" SCNu64, &v) == 1) {
			*out = v * scale;
			err = 0;
		}
		break;
	}
	fclose(f);
	return err;
}

int self_memory_rss(uint64_t *bytes)
{
	return read_field("/proc/self/status", "VmRSS:", 1024, bytes);
}

uint64_t self_memory_heap(void)
{
	struct mallinfo2 mi = mallinfo2();

	return (uint64_t)mi.uordblks + mi.hblkhd;
}

int self_memory_bpf_map(int fd, uint64_t *bytes)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	return read_field(path, "memlock:", 1, bytes);
}
