/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Test-only Kubernetes API server on 127.0.0.1 (libmicrohttpd): GET /api/v1/pods lists and
 * watches pods like the real one (fieldSelector on spec.nodeName, limit/continue, resource
 * versions, watch events with history replay, BOOKMARKs, 410 Expired) and demands a token. */
#ifndef SPANPROF_TEST_FAKE_KUBE_API_H
#define SPANPROF_TEST_FAKE_KUBE_API_H

#include <stddef.h>

struct fake_kube_api;

/* Starts serving on an ephemeral port of 127.0.0.1. Requests without the header
 * "Authorization: Bearer <token>" get 401 with a Status body. NULL with errno on failure. */
struct fake_kube_api *fake_kube_api_new(const char *token);

/* Stops the server, ending open watches first. NULL-safe. */
void fake_kube_api_free(struct fake_kube_api *api);

/* "http://127.0.0.1:PORT", owned by api. */
const char *fake_kube_api_url(const struct fake_kube_api *api);

/* The token later requests must carry (a rotation). */
void fake_kube_api_set_token(struct fake_kube_api *api, const char *token);

/* Changes the stored pods as a write through the API server would: "ADDED" and "MODIFIED" store
 * pod_json (a Pod; its metadata.uid is the key), "DELETED" removes the pod with that UID. The
 * resource version goes up by one and is written into the object's metadata; open watches on the
 * pod's node receive the event. Returns 0 or -EINVAL (bad JSON, no uid, unknown type). */
int fake_kube_api_apply(struct fake_kube_api *api, const char *type, const char *pod_json);

/* Forgets the event history, as etcd compaction does: a watch from an older resource version
 * then gets an ERROR event with a 410 "Expired" Status, over HTTP 200, and ends. */
void fake_kube_api_compact(struct fake_kube_api *api);

/* Sends a BOOKMARK carrying the current resource version to open watches that asked for them. */
void fake_kube_api_bookmark(struct fake_kube_api *api);

/* Answers the next `count` watch requests with this HTTP status and a Status body (410: Gone). */
void fake_kube_api_fail_watches(struct fake_kube_api *api, unsigned int http_status,
				unsigned int count);

/* While paused, open watches send nothing (a slow consumer): events wait in the history, where
 * fake_kube_api_compact() can drop them. */
void fake_kube_api_pause_watches(struct fake_kube_api *api, int paused);

/* Ends the open watch streams cleanly, as the server's timeoutSeconds would. */
void fake_kube_api_end_watches(struct fake_kube_api *api);

struct fake_kube_counts {
	unsigned int lists; /* list requests answered 200, counting each page */
	unsigned int watches; /* watch requests answered 200 */
	unsigned int unauthorized; /* requests answered 401 */
	unsigned int open_watches; /* streams being served now */
	unsigned int bookmarks; /* BOOKMARK events sent */
	char field_selector[256]; /* of the last request */
	char watch_rv[64]; /* resourceVersion of the last watch request */
};

void fake_kube_api_counts(struct fake_kube_api *api, struct fake_kube_counts *out);

/* One container status in a pod built by fake_kube_pod_json(). */
struct fake_kube_container {
	const char *name;
	const char *container_id; /* "containerd://<64 hex>"; NULL: still waiting, no id yet */
	const char *list; /* NULL: "containerStatuses"; or "initContainerStatuses", ... */
};

/* A Pod object in the API's JSON shape (metadata, spec.nodeName and containers, status with
 * phase and container statuses). Returns a malloc'ed string, or NULL. */
char *fake_kube_pod_json(const char *ns, const char *name, const char *uid, const char *node,
			 const struct fake_kube_container *ctrs, size_t n);

#endif /* SPANPROF_TEST_FAKE_KUBE_API_H */
