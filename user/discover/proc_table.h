/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* What the agent remembers per process: its service name, read while the process lives (or taken
 * from its exec event when it is already gone), and whether it has exited, so its entry goes once
 * its last samples are written. Bounded, and reaped: entries of processes that died without an
 * exit event reaching the agent are found by a liveness check against /proc. */
#ifndef SPANPROF_PROC_TABLE_H
#define SPANPROF_PROC_TABLE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "discover/labels.h"
#include "k8s/k8s_meta.h"

/* service.namespace kept per process (Kubernetes namespaces are at most 63 bytes). */
#define PROC_NAMESPACE_MAX 128

/* proc_info.uid of a process whose uid could not be read: one party of its own, never root. */
#define PROC_UID_UNKNOWN ((uid_t)-1)

struct proc_info {
	pid_t pid;
	/* Real uid from /proc/PID/status when the entry was read (a fork inherits its parent's):
	 * whose share of a per-user bound the process's work takes. PROC_UID_UNKNOWN when the
	 * process was gone before it could be read. */
	uid_t uid;
	int exited; /* the process is gone; forget after the next drain */
	/* Up to LABELS_SERVICE_MAX - 1 bytes; owned by the table (by it too for a scratch entry,
	 * until the next call), so that an entry costs what its name needs, not 2 KiB. */
	const char *service;
	/* service.namespace of the OTel resource the process published ("" if none), cut at a
	 * character; Grafana maps it to the service_namespace label. */
	char service_namespace[PROC_NAMESPACE_MAX];
	/* Kubernetes placement ("" when unknown or not on Kubernetes). */
	char k8s_namespace[sizeof(((struct k8s_labels *)0)->namespace)];
	char k8s_pod[sizeof(((struct k8s_labels *)0)->pod)];
	char k8s_container[sizeof(((struct k8s_labels *)0)->container)];
	int k8s_pending; /* the pod or container was unknown: look again later */
	int ctx_checks; /* OTel process context looks so far */
	int ctx_named; /* the service name is the one the process context gives */
	int64_t ctx_next_ns; /* CLOCK_MONOTONIC time of the next look; 0: none due */
	uint64_t k8s_generation; /* pod cache generation at that lookup */
};

/* max_procs entries at most. NULL with errno on failure. */
struct proc_table *proc_table_new(size_t max_procs, const char *proc_root);
void proc_table_free(struct proc_table *t); /* NULL-safe */

/* The entry for pid, creating it (reading the service name) if needed. The name comes from the
 * resource the process published as OTel process context (process_ctx.h), else from its
 * environment (OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES), else Kubernetes or its executable.
 * SDKs publish that context some time after the process started (once their tracer provider
 * exists), so a process found without one is looked at again 1, 2, 4, ... 32 s later. When the
 * table is full, an exited entry is evicted; if there is none, the entry is filled in `scratch`
 * (not kept). A kernel thread (PF_KTHREAD in its stat flags) is named "kernel", all of them one
 * service. Never NULL: a process already gone gets the service name "unknown_service". */
const struct proc_info *proc_table_get(struct proc_table *t, pid_t pid, struct proc_info *scratch);

/* pid's OTel process context was just read by another of the agent's readers (its thread
 * context reader): an entry not yet named by it looks for it now rather than at its next
 * scheduled look, so that the samples of the next drain, the first that can carry spans from
 * its thread context records, carry its service name too. An unknown pid is read as
 * proc_table_get() does. One read of the context per call at most. */
void proc_table_ctx_found(struct proc_table *t, pid_t pid);

/* The entry proc_table_get() keeps for pid, or NULL; reads nothing (no file, no clock). */
const struct proc_info *proc_table_find(const struct proc_table *t, pid_t pid);

/* With k8s set (not owned), entries also carry their pod's namespace/pod/container, and the
 * service name of a process that names no OTel service is "<namespace>/<container>". */
void proc_table_set_k8s(struct proc_table *t, struct k8s_meta *k8s);

/* Re-reads pid's service name and placement (after exec), adding pid if it is not known yet. */
void proc_table_refresh(struct proc_table *t, pid_t pid);

/* pid just exec'd: as proc_table_refresh(), but when the process is already gone (or a zombie)
 * its service is `service` (derived from the exec event), not "unknown_service". With guess
 * set, `service` is only the program's name (the event's search of the environment ended
 * before it found an OTel name): a service the entry got from its parent at fork (most
 * environments are inherited) is kept instead. */
void proc_table_exec(struct proc_table *t, pid_t pid, const char *service, int guess);

/* child was forked by parent: until it execs it has its parent's service and placement (the
 * parent's entry is made if needed). A child already known (a reused pid) is overwritten. */
void proc_table_fork(struct proc_table *t, pid_t parent, pid_t child);

/* Marks pid exited. Returns 1 when pid was in the table (its entry goes at a later sweep), else 0.
 */
int proc_table_mark_exited(struct proc_table *t, pid_t pid);

/* Removes the entries marked exited before the previous sweep, calling fn(ctx, pid) for each
 * (e.g. to release caches). An exited entry thus survives one sweep: samples of a process that
 * a drain had not reached yet when it exited still find its service. Call once per drain. */
void proc_table_sweep_exited(struct proc_table *t, void (*fn)(void *ctx, pid_t pid), void *ctx);

/* Marks exited every entry whose process is gone or a zombie (its exit event was lost, or it
 * was added after that event). Returns how many; proc_table_reaped() sums them. */
size_t proc_table_reap(struct proc_table *t);
uint64_t proc_table_reaped(const struct proc_table *t);

/* 1 when <proc_root>/PID exists and is not a zombie (state Z or X in its stat), else 0. A PID
 * directory without a readable stat counts as alive. */
int proc_table_pid_alive(const char *proc_root, pid_t pid);

size_t proc_table_count(const struct proc_table *t);

#endif /* SPANPROF_PROC_TABLE_H */
