// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Pod objects to a bounded table: only the few fields labels need are kept, and a sorted
 * container-id index answers lookups; it is rebuilt lazily so a relist of many pods sorts once. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <json-c/json.h>

#include "k8s/k8s_pod_table.h"

static const char *member_str(struct json_object *o, const char *key)
{
	struct json_object *v;

	if (!o || !json_object_object_get_ex(o, key, &v) ||
	    !json_object_is_type(v, json_type_string))
		return NULL;
	return json_object_get_string(v);
}

static struct json_object *member(struct json_object *o, const char *key, enum json_type type)
{
	struct json_object *v;

	if (!o || !json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, type))
		return NULL;
	return v;
}

static int copy_str(char *dst, size_t size, const char *src)
{
	size_t n = src ? strlen(src) : 0;

	if (!src || n >= size)
		return -EINVAL;
	memcpy(dst, src, n + 1);
	return 0;
}

/* "containerd://<id>", "cri-o://<id>", "docker://<id>": any runtime, as long as the id is the
 * 64 hex digits its cgroup names carry. */
static int parse_container_id(const char *s, char *id)
{
	const char *p = s ? strstr(s, "://") : NULL;
	int i;

	if (!p)
		return -EINVAL;
	p += 3;
	for (i = 0; i < K8S_CONTAINER_ID_LEN - 1; i++)
		if (!((p[i] >= '0' && p[i] <= '9') || (p[i] >= 'a' && p[i] <= 'f')))
			return -EINVAL;
	if (p[i])
		return -EINVAL;
	memcpy(id, p, K8S_CONTAINER_ID_LEN);
	return 0;
}

static void parse_statuses(struct json_object *list, struct k8s_pod *pod, unsigned long *ignored)
{
	size_t i, n = list ? json_object_array_length(list) : 0;
	struct k8s_container *c;
	struct json_object *st;
	const char *cid;

	for (i = 0; i < n; i++) {
		st = json_object_array_get_idx(list, i);
		cid = member_str(st, "containerID");
		if (!cid || !*cid)
			continue; /* waiting: no container created yet */
		if (pod->n_containers == K8S_POD_MAX_CONTAINERS) {
			(*ignored)++;
			continue;
		}
		c = &pod->containers[pod->n_containers];
		if (parse_container_id(cid, c->id) ||
		    copy_str(c->name, sizeof(c->name), member_str(st, "name"))) {
			(*ignored)++;
			continue;
		}
		pod->n_containers++;
	}
}

int k8s_pod_parse(struct json_object *obj, struct k8s_pod *out, unsigned long *ignored)
{
	static const char *const lists[] = { "containerStatuses", "initContainerStatuses",
					     "ephemeralContainerStatuses" };
	struct json_object *meta = member(obj, "metadata", json_type_object);
	struct json_object *status = member(obj, "status", json_type_object);
	struct json_object *ann = member(meta, "annotations", json_type_object);
	const char *hash = member_str(ann, "kubernetes.io/config.hash");
	size_t i, total = 0;

	memset(out, 0, sizeof(*out));
	if (copy_str(out->uid, sizeof(out->uid), member_str(meta, "uid")) ||
	    copy_str(out->namespace, sizeof(out->namespace), member_str(meta, "namespace")) ||
	    copy_str(out->name, sizeof(out->name), member_str(meta, "name")))
		return -EINVAL;
	if (hash && copy_str(out->config_hash, sizeof(out->config_hash), hash))
		out->config_hash[0] = '\0';
	for (i = 0; i < sizeof(lists) / sizeof(lists[0]); i++) {
		struct json_object *l = member(status, lists[i], json_type_array);

		total += l ? json_object_array_length(l) : 0;
	}
	if (!total)
		return 0;
	if (total > K8S_POD_MAX_CONTAINERS)
		total = K8S_POD_MAX_CONTAINERS;
	out->containers = calloc(total, sizeof(*out->containers));
	if (!out->containers)
		return -ENOMEM;
	for (i = 0; i < sizeof(lists) / sizeof(lists[0]); i++)
		parse_statuses(member(status, lists[i], json_type_array), out, ignored);
	return 0;
}

void k8s_pod_release(struct k8s_pod *pod)
{
	free(pod->containers);
	pod->containers = NULL;
	pod->n_containers = 0;
}

void k8s_pod_table_init(struct k8s_pod_table *t, size_t max_pods)
{
	memset(t, 0, sizeof(*t));
	t->max_pods = max_pods;
}

void k8s_pod_table_release(struct k8s_pod_table *t)
{
	size_t i;

	for (i = 0; i < t->n_pods; i++)
		k8s_pod_release(&t->pods[i]);
	free(t->pods);
	free(t->index);
	k8s_pod_table_init(t, t->max_pods);
}

static struct k8s_pod *find_uid(const struct k8s_pod_table *t, const char *uid)
{
	size_t i;

	for (i = 0; i < t->n_pods; i++)
		if (!strcmp(t->pods[i].uid, uid))
			return &t->pods[i];
	return NULL;
}

int k8s_pod_table_put(struct k8s_pod_table *t, struct k8s_pod *pod)
{
	struct k8s_pod *slot = find_uid(t, pod->uid), *grown;
	size_t cap;

	if (!slot) {
		if (t->n_pods >= t->max_pods) {
			k8s_pod_release(pod);
			return -ENOSPC;
		}
		if (t->n_pods == t->cap) {
			cap = t->cap ? t->cap * 2 : 16;
			grown = realloc(t->pods, cap * sizeof(*grown));
			if (!grown) {
				k8s_pod_release(pod);
				return -ENOMEM;
			}
			t->pods = grown;
			t->cap = cap;
		}
		slot = &t->pods[t->n_pods++];
	} else {
		k8s_pod_release(slot);
	}
	*slot = *pod;
	pod->containers = NULL;
	pod->n_containers = 0;
	t->index_stale = 1;
	return 0;
}

int k8s_pod_table_remove(struct k8s_pod_table *t, const char *uid)
{
	struct k8s_pod *slot = find_uid(t, uid);

	if (!slot)
		return -ENOENT;
	k8s_pod_release(slot);
	*slot = t->pods[--t->n_pods];
	t->index_stale = 1;
	return 0;
}

static int cmp_ref(const void *a, const void *b)
{
	return strcmp(((const struct k8s_container_ref *)a)->id,
		      ((const struct k8s_container_ref *)b)->id);
}

static int reindex(struct k8s_pod_table *t)
{
	size_t n = k8s_pod_table_containers(t), k = 0, i;
	struct k8s_container_ref *idx = NULL;
	unsigned int j;

	if (n) {
		idx = malloc(n * sizeof(*idx));
		if (!idx)
			return -ENOMEM;
	}
	for (i = 0; i < t->n_pods; i++) {
		for (j = 0; j < t->pods[i].n_containers; j++) {
			idx[k].id = t->pods[i].containers[j].id;
			idx[k].pod = i;
			idx[k++].container = j;
		}
	}
	if (n)
		qsort(idx, n, sizeof(*idx), cmp_ref);
	free(t->index);
	t->index = idx;
	t->n_index = n;
	t->index_stale = 0;
	return 0;
}

static const struct k8s_pod *scan_container(const struct k8s_pod_table *t, const char *id,
					    const struct k8s_container **ctr)
{
	size_t i;
	unsigned int j;

	for (i = 0; i < t->n_pods; i++) {
		for (j = 0; j < t->pods[i].n_containers; j++) {
			if (!strcmp(t->pods[i].containers[j].id, id)) {
				*ctr = &t->pods[i].containers[j];
				return &t->pods[i];
			}
		}
	}
	return NULL;
}

const struct k8s_pod *k8s_pod_table_find_container(struct k8s_pod_table *t, const char *id,
						   const struct k8s_container **ctr)
{
	struct k8s_container_ref key = { .id = id }, *hit;

	/* Out of memory for the index: a linear scan still answers, only slower. */
	if (t->index_stale && reindex(t))
		return scan_container(t, id, ctr);
	hit = t->n_index ? bsearch(&key, t->index, t->n_index, sizeof(key), cmp_ref) : NULL;
	if (!hit)
		return NULL;
	*ctr = &t->pods[hit->pod].containers[hit->container];
	return &t->pods[hit->pod];
}

const struct k8s_pod *k8s_pod_table_find_pod(const struct k8s_pod_table *t, const char *uid)
{
	size_t i;

	if (!uid || !*uid)
		return NULL;
	for (i = 0; i < t->n_pods; i++)
		if (!strcmp(t->pods[i].uid, uid) || !strcmp(t->pods[i].config_hash, uid))
			return &t->pods[i];
	return NULL;
}

size_t k8s_pod_table_containers(const struct k8s_pod_table *t)
{
	size_t i, n = 0;

	for (i = 0; i < t->n_pods; i++)
		n += t->pods[i].n_containers;
	return n;
}
