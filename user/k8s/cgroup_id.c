// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Container id and pod UID from /proc/PID/cgroup: each line's path is walked from its deepest
 * component up, matching the names container runtimes and the kubelet give their cgroups. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "k8s/cgroup_id.h"

/* Real files are a few KiB even with 13 v1 hierarchies and deep paths. */
#define CGROUP_FILE_MAX (64 * 1024)
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* Names of a cgroup that is one container, before an optional ".scope" (systemd driver). */
static const char *const runtime_prefixes[] = {
	"", /* cgroupfs driver: containerd and docker name the directory <id> */
	"cri-containerd-", /* containerd, systemd driver */
	"crio-", /* CRI-O; "crio-conmon-<id>" then fails the hex check, as it should */
	"docker-", /* docker and cri-dockerd, systemd driver */
	"libpod-", /* podman */
};

/* Preference among cgroup v1 hierarchies (lower wins): every runtime joins these. */
enum line_rank {
	RANK_MEMORY,
	RANK_CPU,
	RANK_PIDS,
	RANK_SYSTEMD,
	RANK_UNIFIED,
	RANK_OTHER,
};

static int is_hex(const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return 0;
	return 1;
}

static size_t strip_suffix(const char *s, size_t n, const char *suffix)
{
	size_t k = strlen(suffix);

	return n >= k && !memcmp(s + n - k, suffix, k) ? n - k : n;
}

static int component_container(const char *c, size_t n, char *id)
{
	size_t stem = strip_suffix(c, n, ".scope"), i;

	for (i = 0; i < ARRAY_SIZE(runtime_prefixes); i++) {
		size_t k = strlen(runtime_prefixes[i]);

		if (stem != k + CGROUP_ID_CONTAINER_LEN || memcmp(c, runtime_prefixes[i], k))
			continue;
		if (!is_hex(c + k, CGROUP_ID_CONTAINER_LEN))
			continue;
		memcpy(id, c + k, CGROUP_ID_CONTAINER_LEN);
		id[CGROUP_ID_CONTAINER_LEN] = '\0';
		return 1;
	}
	return 0;
}

/* A pod UID is 8-4-4-4-12 hex digits; a static pod's cgroup carries its 32-digit config hash. */
static int valid_pod_uid(const char *u, size_t n)
{
	size_t i;

	if (n == 32)
		return is_hex(u, n);
	if (n != 36)
		return 0;
	for (i = 0; i < n; i++) {
		int dash = i == 8 || i == 13 || i == 18 || i == 23;

		if (dash ? u[i] != '-' : !is_hex(u + i, 1))
			return 0;
	}
	return 1;
}

/* "pod<uid>" (cgroupfs) or "kubepods[-<qos>]-pod<uid_with_underscores>.slice" (systemd). */
static int component_pod_uid(const char *c, size_t n, char *uid)
{
	char tmp[CGROUP_ID_POD_UID_MAX + 1];
	const char *u = NULL;
	size_t len = 0, stem, i;

	stem = strip_suffix(c, n, ".slice");
	if (stem != n) {
		for (i = stem; i >= 4; i--) {
			if (!memcmp(c + i - 4, "-pod", 4)) {
				u = c + i;
				len = stem - i;
				break;
			}
		}
	} else if (n > 3 && !memcmp(c, "pod", 3)) {
		u = c + 3;
		len = n - 3;
	}
	if (!u || len > CGROUP_ID_POD_UID_MAX)
		return 0;
	for (i = 0; i < len; i++)
		tmp[i] = u[i] == '_' ? '-' : u[i];
	if (!valid_pod_uid(tmp, len))
		return 0;
	memcpy(uid, tmp, len);
	uid[len] = '\0';
	return 1;
}

/* Walks path[0..len) from the last component up; the first container found wins, and the pod
 * is the nearest ancestor naming one. */
static int parse_path(const char *path, size_t len, struct cgroup_id *out)
{
	size_t end = len, start;

	while (end > 0) {
		start = end;
		while (start > 0 && path[start - 1] != '/')
			start--;
		if (component_container(path + start, end - start, out->container_id)) {
			out->pod_uid[0] = '\0';
			end = start;
			while (end > 0) {
				end--; /* the '/' */
				start = end;
				while (start > 0 && path[start - 1] != '/')
					start--;
				if (component_pod_uid(path + start, end - start, out->pod_uid))
					break;
				end = start;
			}
			return 1;
		}
		end = start ? start - 1 : 0;
	}
	return 0;
}

static enum line_rank rank_controllers(const char *c, size_t n)
{
	enum line_rank best = n ? RANK_OTHER : RANK_UNIFIED;
	size_t start = 0, end, k;

	while (start < n) {
		for (end = start; end < n && c[end] != ','; end++)
			;
		k = end - start;
		if (k == 6 && !memcmp(c + start, "memory", 6))
			best = RANK_MEMORY;
		else if (((k == 3 && !memcmp(c + start, "cpu", 3)) ||
			  (k == 7 && !memcmp(c + start, "cpuacct", 7))) &&
			 best > RANK_CPU)
			best = RANK_CPU;
		else if (k == 4 && !memcmp(c + start, "pids", 4) && best > RANK_PIDS)
			best = RANK_PIDS;
		else if (k == 12 && !memcmp(c + start, "name=systemd", 12) && best > RANK_SYSTEMD)
			best = RANK_SYSTEMD;
		start = end + 1;
	}
	return best;
}

int cgroup_id_parse(const char *text, struct cgroup_id *out)
{
	enum line_rank best = RANK_OTHER + 1, rank;
	const char *line = text, *nl, *c1, *c2;
	struct cgroup_id cand;
	int shaped = 0;

	for (; *line; line = *nl ? nl + 1 : nl) {
		nl = strchrnul(line, '\n');
		c1 = memchr(line, ':', nl - line);
		c2 = c1 ? memchr(c1 + 1, ':', nl - c1 - 1) : NULL;
		if (!c1 || !c2 || c1 == line || c2 + 1 == nl || c2[1] != '/')
			continue;
		shaped = 1;
		rank = rank_controllers(c1 + 1, c2 - c1 - 1);
		if (rank >= best || !parse_path(c2 + 1, nl - c2 - 1, &cand))
			continue;
		*out = cand;
		best = rank;
	}
	if (!shaped)
		return -EINVAL;
	return best <= RANK_OTHER ? 0 : -ENOENT;
}

int cgroup_id_read(const char *proc_root, pid_t pid, struct cgroup_id *out)
{
	char path[4096], *buf;
	size_t len = 0;
	ssize_t n;
	int fd, err;

	snprintf(path, sizeof(path), "%s/%d/cgroup", proc_root ? proc_root : "/proc", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? -ESRCH : -errno;
	buf = malloc(CGROUP_FILE_MAX);
	if (!buf) {
		err = -ENOMEM;
		goto close_fd;
	}
	while ((n = read(fd, buf + len, CGROUP_FILE_MAX - 1 - len)) > 0)
		len += n;
	if (n < 0) {
		/* A process that exits between open and read reads as ESRCH already. */
		err = -errno;
		goto free_buf;
	}
	if (len == CGROUP_FILE_MAX - 1) {
		err = -EFBIG;
		goto free_buf;
	}
	buf[len] = '\0';
	err = cgroup_id_parse(buf, out);
free_buf:
	free(buf);
close_fd:
	close(fd);
	return err;
}
