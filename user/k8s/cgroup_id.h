/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Finds the container a process runs in (and its Kubernetes pod's UID) from the text of
 * /proc/PID/cgroup, for containerd, CRI-O and docker paths under cgroup v1 and v2. */
#ifndef SPANPROF_CGROUP_ID_H
#define SPANPROF_CGROUP_ID_H

#include <sys/types.h>

#define CGROUP_ID_CONTAINER_LEN 64 /* hex digits of a container id */
#define CGROUP_ID_POD_UID_MAX 36 /* a UID with dashes; static pods use 32 hex digits */

struct cgroup_id {
	char container_id[CGROUP_ID_CONTAINER_LEN + 1]; /* 64 lower-case hex digits */
	char pod_uid[CGROUP_ID_POD_UID_MAX + 1]; /* with dashes; "" when no pod is named */
};

/* Parses the text of a /proc/PID/cgroup file (NUL-terminated). Understands
 *   cgroupfs:  /kubepods/burstable/pod<uid>/<id>, /kubepods/pod<uid>/crio-<id>, /docker/<id>
 *   systemd:   .../kubepods-burstable-pod<uid_with_underscores>.slice/cri-containerd-<id>.scope,
 *              crio-<id>.scope, docker-<id>.scope, libpod-<id>.scope
 * on any hierarchy line; when lines disagree (cgroup v1), memory wins, then cpu/cpuacct, pids,
 * name=systemd and the v2 line. The deepest component naming a container wins (a runtime's own
 * sub-cgroup below the scope is skipped; nested containers give the innermost). CRI-O's conmon
 * (crio-conmon-<id>.scope) is not a container. Paths seen from another cgroup namespace
 * ("/../../kubepods...") work too.
 * Returns 0 and fills *out, -ENOENT when no line names a container (a host process), or
 * -EINVAL when no line has the "ID:CONTROLLERS:PATH" shape. */
int cgroup_id_parse(const char *text, struct cgroup_id *out);

/* Reads and parses <proc_root>/<pid>/cgroup (proc_root NULL means "/proc"). Returns what
 * cgroup_id_parse() returns, -ESRCH when the process is gone, or another -errno from reading. */
int cgroup_id_read(const char *proc_root, pid_t pid, struct cgroup_id *out);

#endif /* SPANPROF_CGROUP_ID_H */
