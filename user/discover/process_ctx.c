// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* OTEP 4719 process context reader: /proc/PID/maps -> OTEL_CTX mapping -> header + payload read
 * from /proc/PID/mem -> service.name and service.namespace of the resource. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "discover/process_ctx.h"
#include "util/utf8.h"

#define MAPS_LINE_MAX 512
#define MAPS_LINES_MAX (1 << 20) /* a process has at most vm.max_map_count (65530) mappings */
#define READ_ATTEMPTS 3

static const char *const ctx_names[] = { "[anon:OTEL_CTX]", "[anon_shmem:OTEL_CTX]",
					 "/memfd:OTEL_CTX" };

static int open_proc_file(const char *proc_root, pid_t pid, const char *name)
{
	char path[4096];
	int fd;

	snprintf(path, sizeof(path), "%s/%d/%s", proc_root, (int)pid, name);
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

/* 1 when the maps line (NUL-terminated, no newline) is a readable OTEL_CTX mapping. */
static int parse_ctx_line(const char *line, uint64_t *start, uint64_t *end)
{
	char perms[5];
	int name_at = -1;
	size_t i;

	if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %4s %*x %*x:%*x %*u %n", start, end, perms,
		   &name_at) < 3 ||
	    name_at < 0 || perms[0] != 'r' || *end <= *start)
		return 0;
	for (i = 0; i < sizeof(ctx_names) / sizeof(ctx_names[0]); i++)
		if (!strncmp(line + name_at, ctx_names[i], strlen(ctx_names[i])))
			return 1;
	return 0;
}

/* The first OTEL_CTX mapping in maps. Lines longer than MAPS_LINE_MAX (long file paths) are
 * skipped whole. Returns 0, -ENOENT, or -errno. */
static int find_mapping(const char *proc_root, pid_t pid, uint64_t *start, uint64_t *end)
{
	char line[MAPS_LINE_MAX];
	int fd = open_proc_file(proc_root, pid, "maps"), err = -ENOENT, skipping = 0;
	size_t lines = 0, n;
	FILE *f;

	if (fd < 0)
		return fd;
	f = fdopen(fd, "r");
	if (!f) {
		err = -errno;
		close(fd);
		return err;
	}
	while (fgets(line, sizeof(line), f) && lines < MAPS_LINES_MAX) {
		n = strlen(line);
		if (!n || line[n - 1] != '\n') {
			skipping = 1; /* the rest of this line comes in the next chunk(s) */
			continue;
		}
		line[n - 1] = '\0';
		lines++;
		if (skipping) {
			skipping = 0;
			continue;
		}
		if (parse_ctx_line(line, start, end)) {
			err = 0;
			break;
		}
	}
	if (err && ferror(f))
		err = -EIO;
	fclose(f);
	return err;
}

static int read_exact(int fd, void *buf, size_t len, uint64_t addr)
{
	ssize_t n;

	if (addr > (uint64_t)INT64_MAX - len)
		return -EFAULT;
	n = pread(fd, buf, len, (off_t)addr);
	if (n < 0)
		return errno == EIO ? -EFAULT : -errno;
	return (size_t)n == len ? 0 : -EFAULT;
}

static int read_header(int fd, uint64_t at, struct process_ctx_header *h)
{
	int err = read_exact(fd, h, sizeof(*h), at);

	if (err)
		return err;
	if (memcmp(h->signature, PROCESS_CTX_SIGNATURE, sizeof(h->signature)) ||
	    h->version != PROCESS_CTX_VERSION)
		return -EBADMSG;
	return 0;
}

/* One consistent read of the payload into buf; -EAGAIN when an update raced with it. */
static int read_once(int fd, uint64_t at, uint8_t *buf, size_t *len, uint64_t *published)
{
	struct process_ctx_header h, again;
	int err = read_header(fd, at, &h);

	if (err)
		return err;
	if (!h.published_at_ns)
		return -EAGAIN; /* being written */
	if (!h.payload_size || !h.payload)
		return -EBADMSG;
	if (h.payload_size > PROCESS_CTX_PAYLOAD_MAX)
		return -EMSGSIZE;
	err = read_exact(fd, buf, h.payload_size, h.payload);
	if (err)
		return err == -EFAULT ? -EBADMSG : err;
	err = read_header(fd, at, &again);
	if (err)
		return err;
	if (again.published_at_ns != h.published_at_ns)
		return -EAGAIN;
	*len = h.payload_size;
	*published = h.published_at_ns;
	return 0;
}

int process_ctx_read(const char *proc_root, pid_t pid, struct process_ctx *out)
{
	uint64_t start, end, published = 0;
	uint8_t *buf;
	size_t len = 0;
	int fd, err, i;

	memset(out, 0, sizeof(*out));
	err = find_mapping(proc_root, pid, &start, &end);
	if (err)
		return err;
	if (end - start < PROCESS_CTX_HEADER_SIZE)
		return -EBADMSG;
	fd = open_proc_file(proc_root, pid, "mem");
	if (fd < 0)
		return fd;
	buf = malloc(PROCESS_CTX_PAYLOAD_MAX);
	if (!buf) {
		err = -ENOMEM;
		goto out_close;
	}
	for (i = 0, err = -EAGAIN; i < READ_ATTEMPTS && err == -EAGAIN; i++)
		err = read_once(fd, start, buf, &len, &published);
	if (!err)
		err = process_ctx_decode(buf, len, out);
	if (!err)
		out->published_at_ns = published;
	free(buf);
out_close:
	close(fd);
	return err;
}
