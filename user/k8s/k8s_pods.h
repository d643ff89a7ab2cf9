/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* A cache of the pods on this node, kept current by a thread that lists and watches them on the
 * API server; lookups by container id or pod UID never wait for the network. */
#ifndef SPANPROF_K8S_PODS_H
#define SPANPROF_K8S_PODS_H

#include <stdint.h>

#include "k8s/k8s_pod_table.h"

#define K8S_PODS_DEFAULT_MAX 1024 /* the kubelet's own default limit is 110 pods per node */

struct k8s_pods_options {
	const char *api_url; /* "https://10.96.0.1:443"; required */
	const char *node_name; /* only pods with this spec.nodeName; required */
	const char *token_path; /* bearer token, re-read per request; NULL: none */
	const char *ca_path; /* CA bundle for the API server; NULL: the system's */
	unsigned int max_pods; /* 0: K8S_PODS_DEFAULT_MAX; more are dropped, counted */
	unsigned int connect_timeout_ms; /* 0: 5000 */
	unsigned int list_timeout_ms; /* a whole list request; 0: 60000 */
	unsigned int watch_timeout_s; /* the server ends a watch after this; 0: 300 */
	unsigned int backoff_initial_ms; /* after a failure; 0: 500 */
	unsigned int backoff_max_ms; /* 0: 30000 */
	unsigned int page_size; /* items per list page (limit=); 0: 500 */
};

struct k8s_pod_ref {
	char namespace[K8S_NAMESPACE_LEN];
	char pod[K8S_POD_NAME_LEN];
	char container[K8S_CONTAINER_NAME_LEN]; /* "" from a lookup by pod UID */
};

struct k8s_pods_stats {
	uint64_t lists; /* complete lists (all pages) */
	uint64_t relists; /* lists after the first: 410 Gone or a failed watch resume */
	uint64_t watches; /* watch requests made */
	uint64_t watch_events; /* ADDED, MODIFIED, DELETED and BOOKMARK events applied */
	uint64_t errors; /* failed requests, ERROR events, pods that would not parse */
	uint64_t pods_dropped; /* pods not cached because max_pods were cached */
	uint64_t pods; /* cached now */
	uint64_t containers; /* container ids cached now */
	uint64_t generation; /* goes up whenever the cache changes: retry earlier misses */
	int synced; /* a list has completed since start */
};

/* Copies the options and starts the watch thread; the cache fills in the background. Returns
 * NULL with errno EINVAL (no api_url or node_name), ENOMEM, or as pthread_create() failed. */
struct k8s_pods *k8s_pods_new(const struct k8s_pods_options *opts);

/* Stops the thread (an open watch is interrupted at once) and frees everything. NULL-safe. */
void k8s_pods_free(struct k8s_pods *p);

/* The pod and container of a container id (64 hex digits, as cgroup_id gives). Thread-safe;
 * takes a mutex only the cache's in-memory updates hold. Returns 0 or -ENOENT. */
int k8s_pods_lookup_container(struct k8s_pods *p, const char *container_id,
			      struct k8s_pod_ref *out);

/* The pod with this UID (or a static pod's config hash); out->container is "". 0 or -ENOENT. */
int k8s_pods_lookup_pod(struct k8s_pods *p, const char *pod_uid, struct k8s_pod_ref *out);

/* Waits until the first list completed. Returns 0, or -ETIMEDOUT after timeout_ms. */
int k8s_pods_wait_synced(struct k8s_pods *p, unsigned int timeout_ms);

void k8s_pods_stats(struct k8s_pods *p, struct k8s_pods_stats *out);

#endif /* SPANPROF_K8S_PODS_H */
