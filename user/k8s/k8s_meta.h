/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Kubernetes labels for a process (namespace, pod, container) from its cgroup and the node's
 * pod cache, and the service name "<namespace>/<container>" derived from them. */
#ifndef SPANPROF_K8S_META_H
#define SPANPROF_K8S_META_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "k8s/cgroup_id.h"
#include "k8s/k8s_pods.h"

#define K8S_META_TOKEN_PATH "/var/run/secrets/kubernetes.io/serviceaccount/token"
#define K8S_META_CA_PATH "/var/run/secrets/kubernetes.io/serviceaccount/ca.crt"

struct k8s_meta_options {
	/* API server; NULL: https://$KUBERNETES_SERVICE_HOST:$KUBERNETES_SERVICE_PORT, and
	 * Kubernetes is off (k8s_meta_new() gives NULL, errno ENOENT) when that is unset. */
	const char *api_url;
	/* Whose pods; NULL: $NODE_NAME (the chart sets it from spec.nodeName). Required. */
	const char *node_name;
	const char *token_path; /* NULL: K8S_META_TOKEN_PATH */
	const char *ca_path; /* NULL: K8S_META_CA_PATH when it exists, else the system CAs */
	/* Passed to the pod cache: 0 takes k8s_pods' defaults (see k8s_pods.h). */
	unsigned int max_pods;
	unsigned int connect_timeout_ms;
	unsigned int backoff_initial_ms, backoff_max_ms;
	unsigned int watch_timeout_s;
};

struct k8s_labels {
	char namespace[K8S_NAMESPACE_LEN]; /* "" until known */
	char pod[K8S_POD_NAME_LEN]; /* "" until known */
	char container[K8S_CONTAINER_NAME_LEN]; /* "" when only the pod is known */
	char container_id[CGROUP_ID_CONTAINER_LEN + 1]; /* from the cgroup; "" for a host process */
	char pod_uid[CGROUP_ID_POD_UID_MAX + 1]; /* from the cgroup, when it names one */
};

struct k8s_meta_stats {
	struct k8s_pods_stats pods;
	uint64_t lookups; /* k8s_meta_lookup() calls */
	uint64_t hits; /* namespace and pod found (container too, or only the pod) */
	uint64_t host; /* processes in no container */
	uint64_t misses; /* in a container the cache does not know (yet) */
	uint64_t cgroup_errors; /* gone processes and unreadable or malformed cgroup files */
};

/* Starts following the pods of this node. Returns NULL with errno ENOENT when not on Kubernetes
 * (no API address, node name or token file: logged at info, not an error), or NULL with another
 * errno (EINVAL, ENOMEM, ...) when it should work but cannot start (logged). */
struct k8s_meta *k8s_meta_new(const struct k8s_meta_options *opts);

/* NULL-safe; stops the watch thread. */
void k8s_meta_free(struct k8s_meta *m);

/* Labels of process pid as seen under proc_root (NULL: "/proc"). Never waits for the network:
 * thread-safe and answered from memory. Returns 0 when at least namespace and pod are known
 * (container is "" when only the pod UID matched, e.g. a container that started since the last
 * watch event); -ENOENT for a host process or a container not (yet) in the cache (out's
 * container_id then tells which: retry such misses when k8s_meta_generation() has changed);
 * -ESRCH when the process is gone; another -errno when its cgroup file cannot be read or
 * parsed. *out is always filled, with "" for what is not known. */
int k8s_meta_lookup(struct k8s_meta *m, const char *proc_root, pid_t pid, struct k8s_labels *out);

/* Goes up whenever the pod cache changes. */
uint64_t k8s_meta_generation(struct k8s_meta *m);

/* Waits up to timeout_ms for the first pod list (e.g. at start, so that the first profiles are
 * labelled). Returns 0 or -ETIMEDOUT. */
int k8s_meta_wait_synced(struct k8s_meta *m, unsigned int timeout_ms);

void k8s_meta_stats(struct k8s_meta *m, struct k8s_meta_stats *out);

/* Writes "<namespace>/<container>" into buf: the service name of a process that sets no OTel
 * service name. Returns 0, -ENOENT when namespace or container is not known, or -ENAMETOOLONG
 * when buf is too small (buf then holds ""). */
int k8s_meta_service_name(const struct k8s_labels *l, char *buf, size_t size);

#endif /* SPANPROF_K8S_META_H */
