// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The facade the agent calls for Kubernetes labels: finds the API server and credentials the
 * way in-cluster clients do, and joins a process's cgroup to the pod cache. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "k8s/cgroup_id.h"
#include "k8s/k8s_meta.h"
#include "k8s/k8s_pods.h"
#include "util/log.h"

struct k8s_meta {
	struct k8s_pods *pods;
	atomic_uint_fast64_t lookups, hits, host, misses, cgroup_errors;
};

/* https://$KUBERNETES_SERVICE_HOST:$KUBERNETES_SERVICE_PORT, as client-go's in-cluster
 * config builds it (an IPv6 service address gets brackets). NULL when the host is unset. */
static char *in_cluster_url(void)
{
	const char *host = getenv("KUBERNETES_SERVICE_HOST");
	const char *port = getenv("KUBERNETES_SERVICE_PORT");
	char *url;

	if (!host || !*host)
		return NULL;
	if (asprintf(&url, strchr(host, ':') ? "https://[%s]:%s" : "https://%s:%s", host,
		     port && *port ? port : "443") < 0)
		return NULL;
	return url;
}

/* Fills what opts leaves out. Returns 0, -ENOENT (not on Kubernetes, logged) or -ENOMEM. */
static int resolve(const struct k8s_meta_options *opts, struct k8s_pods_options *po, char **url)
{
	*url = NULL;
	if (!opts->api_url) {
		*url = in_cluster_url();
		if (!*url && getenv("KUBERNETES_SERVICE_HOST") &&
		    *getenv("KUBERNETES_SERVICE_HOST"))
			return -ENOMEM;
		if (!*url) {
			log_info("kubernetes: KUBERNETES_SERVICE_HOST is not set: no pod labels");
			return -ENOENT;
		}
	}
	po->api_url = opts->api_url ? opts->api_url : *url;
	po->node_name = opts->node_name ? opts->node_name : getenv("NODE_NAME");
	if (!po->node_name || !*po->node_name) {
		/* In a cluster but told no node: the chart sets NODE_NAME, so this is a setup slip.
		 */
		log_warn(0, "kubernetes: no node name (set NODE_NAME from spec.nodeName): no pod "
			    "labels");
		return -ENOENT;
	}
	po->token_path = opts->token_path ? opts->token_path : K8S_META_TOKEN_PATH;
	if (access(po->token_path, R_OK)) {
		log_info("kubernetes: no service account token at %s (%s): no pod labels",
			 po->token_path, strerror(errno));
		return -ENOENT;
	}
	po->ca_path = opts->ca_path;
	if (!po->ca_path && !access(K8S_META_CA_PATH, R_OK))
		po->ca_path = K8S_META_CA_PATH;
	po->max_pods = opts->max_pods;
	po->connect_timeout_ms = opts->connect_timeout_ms;
	po->backoff_initial_ms = opts->backoff_initial_ms;
	po->backoff_max_ms = opts->backoff_max_ms;
	po->watch_timeout_s = opts->watch_timeout_s;
	return 0;
}

struct k8s_meta *k8s_meta_new(const struct k8s_meta_options *opts)
{
	struct k8s_pods_options po = { 0 };
	struct k8s_meta *m;
	char *url;
	int err;

	m = calloc(1, sizeof(*m));
	if (!m) {
		errno = ENOMEM;
		return NULL;
	}
	err = resolve(opts, &po, &url);
	if (err)
		goto out_free;
	m->pods = k8s_pods_new(&po);
	if (!m->pods) {
		err = log_err(-errno, "kubernetes: start the pod watch on %s", po.api_url);
		goto out_free;
	}
	log_info("kubernetes: following pods of node %s on %s", po.node_name, po.api_url);
	free(url);
	return m;

out_free:
	free(url);
	free(m);
	errno = -err;
	return NULL;
}

void k8s_meta_free(struct k8s_meta *m)
{
	if (!m)
		return;
	k8s_pods_free(m->pods);
	free(m);
}

static void copy_ref(struct k8s_labels *out, const struct k8s_pod_ref *ref)
{
	memcpy(out->namespace, ref->namespace, sizeof(out->namespace));
	memcpy(out->pod, ref->pod, sizeof(out->pod));
	memcpy(out->container, ref->container, sizeof(out->container));
}

int k8s_meta_lookup(struct k8s_meta *m, const char *proc_root, pid_t pid, struct k8s_labels *out)
{
	struct cgroup_id cg;
	struct k8s_pod_ref ref;
	int err;

	memset(out, 0, sizeof(*out));
	atomic_fetch_add(&m->lookups, 1);
	err = cgroup_id_read(proc_root, pid, &cg);
	if (err == -ENOENT) {
		atomic_fetch_add(&m->host, 1);
		return err;
	}
	if (err) {
		atomic_fetch_add(&m->cgroup_errors, 1);
		return err;
	}
	memcpy(out->container_id, cg.container_id, sizeof(out->container_id));
	memcpy(out->pod_uid, cg.pod_uid, sizeof(out->pod_uid));
	err = k8s_pods_lookup_container(m->pods, cg.container_id, &ref);
	if (err && cg.pod_uid[0])
		err = k8s_pods_lookup_pod(m->pods, cg.pod_uid, &ref);
	if (err) {
		atomic_fetch_add(&m->misses, 1);
		return -ENOENT;
	}
	copy_ref(out, &ref);
	atomic_fetch_add(&m->hits, 1);
	return 0;
}

uint64_t k8s_meta_generation(struct k8s_meta *m)
{
	struct k8s_pods_stats st;

	k8s_pods_stats(m->pods, &st);
	return st.generation;
}

int k8s_meta_wait_synced(struct k8s_meta *m, unsigned int timeout_ms)
{
	return k8s_pods_wait_synced(m->pods, timeout_ms);
}

void k8s_meta_stats(struct k8s_meta *m, struct k8s_meta_stats *out)
{
	k8s_pods_stats(m->pods, &out->pods);
	out->lookups = atomic_load(&m->lookups);
	out->hits = atomic_load(&m->hits);
	out->host = atomic_load(&m->host);
	out->misses = atomic_load(&m->misses);
	out->cgroup_errors = atomic_load(&m->cgroup_errors);
}

int k8s_meta_service_name(const struct k8s_labels *l, char *buf, size_t size)
{
	int n;

	if (!l->namespace[0] || !l->container[0])
		return -ENOENT;
	n = snprintf(buf, size, "%s/%s", l->namespace, l->container);
	if (n < 0 || (size_t)n >= size) {
		if (size)
			buf[0] = '\0';
		return -ENAMETOOLONG;
	}
	return 0;
}
