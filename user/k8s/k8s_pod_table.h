/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The pods of one node as the API server describes them: a Pod object (json-c) parsed into
 * names and container ids, kept in a bounded table indexed by container id. Not locked. */
#ifndef SPANPROF_K8S_POD_TABLE_H
#define SPANPROF_K8S_POD_TABLE_H

#include <stddef.h>

struct json_object;

/* Sizes include the NUL. The API server validates names to these lengths: a namespace and a
 * container name are DNS labels (63), a pod name a DNS subdomain (253). */
#define K8S_NAMESPACE_LEN 64
#define K8S_POD_NAME_LEN 254
#define K8S_CONTAINER_NAME_LEN 64
#define K8S_POD_UID_LEN 37
#define K8S_CONTAINER_ID_LEN 65
#define K8S_POD_MAX_CONTAINERS 64 /* further statuses of one pod are ignored and counted */

struct k8s_container {
	char id[K8S_CONTAINER_ID_LEN]; /* 64 hex digits, without "containerd://" and the like */
	char name[K8S_CONTAINER_NAME_LEN];
};

struct k8s_pod {
	char uid[K8S_POD_UID_LEN];
	char config_hash[K8S_POD_UID_LEN]; /* static pods: the UID their cgroups carry, else "" */
	char namespace[K8S_NAMESPACE_LEN];
	char name[K8S_POD_NAME_LEN];
	unsigned int n_containers;
	struct k8s_container *containers; /* owned; NULL when n_containers is 0 */
};

struct k8s_container_ref {
	const char *id; /* points into the table's pods */
	unsigned int pod, container;
};

struct k8s_pod_table {
	struct k8s_pod *pods;
	size_t n_pods, cap, max_pods;
	struct k8s_container_ref
		*index; /* sorted by id; rebuilt on the first find after a change */
	size_t n_index;
	int index_stale;
	unsigned long ignored_containers; /* statuses beyond K8S_POD_MAX_CONTAINERS, or bad ids */
};

/* Parses a Pod (metadata.uid/namespace/name, the config hash annotation, and the containerID of
 * status.containerStatuses, initContainerStatuses and ephemeralContainerStatuses; statuses
 * without a running container's id are skipped). *ignored counts statuses dropped as malformed
 * or over the limit. Returns 0, -EINVAL when obj is not a pod with uid, namespace and name of
 * valid lengths, or -ENOMEM. On error *out holds nothing to release. */
int k8s_pod_parse(struct json_object *obj, struct k8s_pod *out, unsigned long *ignored);

/* Frees what a parsed pod owns. */
void k8s_pod_release(struct k8s_pod *pod);

void k8s_pod_table_init(struct k8s_pod_table *t, size_t max_pods);
void k8s_pod_table_release(struct k8s_pod_table *t); /* t can be initialised again */

/* Adds a pod, or replaces the one with the same UID. Takes what *pod owns in every case and
 * clears it. Returns 0, -ENOSPC when max_pods pods are already held (the pod is dropped), or
 * -ENOMEM. */
int k8s_pod_table_put(struct k8s_pod_table *t, struct k8s_pod *pod);

/* Removes the pod with this UID. Returns 0 or -ENOENT. */
int k8s_pod_table_remove(struct k8s_pod_table *t, const char *uid);

/* The pod running a container id (64 hex digits), and that container in *ctr; NULL when none.
 * Valid until the table next changes. */
const struct k8s_pod *k8s_pod_table_find_container(struct k8s_pod_table *t, const char *id,
						   const struct k8s_container **ctr);

/* The pod with this UID, or with this config hash (a static pod); NULL when none. */
const struct k8s_pod *k8s_pod_table_find_pod(const struct k8s_pod_table *t, const char *uid);

/* Container ids held, over every pod. */
size_t k8s_pod_table_containers(const struct k8s_pod_table *t);

#endif /* SPANPROF_K8S_POD_TABLE_H */
