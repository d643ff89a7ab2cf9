/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* What the agent remembers per process: its service name, read while the process lives, and
 * whether it has exited (so its entry goes once its last samples are written). Bounded. */
#ifndef SPANPROF_PROC_TABLE_H
#define SPANPROF_PROC_TABLE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "discover/labels.h"
#include "k8s/k8s_meta.h"

/* service.namespace kept per process (Kubernetes namespaces are at most 63 bytes). */
#define PROC_NAMESPACE_MAX 128

struct proc_info {
	pid_t pid;
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
 * exists), so a process found without one is looked at again 1, 2, 4, ... 32 s later. When the table is full,
 * an exited entry is evicted; if there is none, the entry is filled in `scratch` (not kept).
 * Never NULL: a process already gone gets the service name "unknown_service". */
const struct proc_info *proc_table_get(struct proc_table *t, pid_t pid, struct proc_info *scratch);

/* With k8s set (not owned), entries also carry their pod's namespace/pod/container, and the
 * service name of a process that names no OTel service is "<namespace>/<container>". */
void proc_table_set_k8s(struct proc_table *t, struct k8s_meta *k8s);

/* Re-reads pid's service name and placement (after exec), adding pid if it is not known yet. */
void proc_table_refresh(struct proc_table *t, pid_t pid);

/* Marks pid exited. */
void proc_table_mark_exited(struct proc_table *t, pid_t pid);

/* Removes every exited entry, calling fn(ctx, pid) for each (e.g. to release caches). */
void proc_table_sweep_exited(struct proc_table *t, void (*fn)(void *ctx, pid_t pid), void *ctx);

size_t proc_table_count(const struct proc_table *t);

#endif /* SPANPROF_PROC_TABLE_H */
