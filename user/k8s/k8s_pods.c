// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The node's pod cache: one thread lists the pods (then relists on 410 Gone) and follows the
 * watch from the list's resourceVersion; readers only ever take the mutex around memory. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <json-c/json.h>

#include "k8s/k8s_http.h"
#include "k8s/k8s_pods.h"
#include "util/backoff.h"
#include "util/clock.h"
#include "util/curl_lib.h"
#include "util/log.h"

#define RV_LEN 128
#define WATCH_FAILS_BEFORE_RELIST 3

struct k8s_pods {
	char *api_url, *node, *node_escaped;
	unsigned int max_pods, list_timeout_ms, watch_timeout_s, page_size;
	struct k8s_http *http;
	pthread_t thread;
	atomic_int stop;
	pthread_mutex_t lock; /* guards table and st */
	pthread_cond_t cond; /* synced, or stop */
	struct k8s_pod_table table;
	struct k8s_pods_stats st;
	/* Only the thread uses these. */
	char rv[RV_LEN];
	struct backoff backoff;
};

static struct json_object *member(struct json_object *o, const char *key, enum json_type type)
{
	struct json_object *v;

	if (!o || !json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, type))
		return NULL;
	return v;
}

static const char *member_str(struct json_object *o, const char *key)
{
	struct json_object *v = member(o, key, json_type_string);

	return v ? json_object_get_string(v) : NULL;
}

static void count(struct k8s_pods *p, uint64_t *counter, uint64_t n)
{
	pthread_mutex_lock(&p->lock);
	*counter += n;
	pthread_mutex_unlock(&p->lock);
}

/* libcurl percent-encodes all but RFC 3986's unreserved characters (letters, digits, "-._~");
 * it ignores the handle since 7.82. Returns text to free(), or NULL (no memory, no libcurl). */
static char *url_escape(const char *s)
{
	const struct curl_lib *cl = curl_lib();
	char *esc = cl ? cl->easy_escape(NULL, s, 0) : NULL, *copy = esc ? strdup(esc) : NULL;

	if (esc)
		cl->free(esc);
	return copy;
}

struct list_ctx {
	struct k8s_pods *p;
	struct k8s_pod_table fresh;
	char rv[RV_LEN];
	char *cont; /* continue token of the page just read, or NULL */
	unsigned long ignored, invalid, dropped;
};

static int on_list_page(void *arg, struct json_object *page)
{
	struct json_object *items = member(page, "items", json_type_array), *meta;
	struct list_ctx *c = arg;
	struct k8s_pod pod;
	const char *rv, *cont;
	size_t i, n;
	int err;

	meta = member(page, "metadata", json_type_object);
	rv = member_str(meta, "resourceVersion");
	if (!items || !rv || !*rv || strlen(rv) >= RV_LEN)
		return log_warn(-EBADMSG, "kubernetes: pod list without items or resourceVersion");
	snprintf(c->rv, sizeof(c->rv), "%s", rv);
	cont = member_str(meta, "continue");
	free(c->cont);
	c->cont = cont && *cont ? strdup(cont) : NULL;
	if (cont && *cont && !c->cont)
		return -ENOMEM;
	n = json_object_array_length(items);
	for (i = 0; i < n; i++) {
		err = k8s_pod_parse(json_object_array_get_idx(items, i), &pod, &c->ignored);
		if (err == -EINVAL) {
			c->invalid++;
			continue;
		}
		if (!err)
			err = k8s_pod_table_put(&c->fresh, &pod);
		if (err == -ENOSPC)
			c->dropped++;
		else if (err)
			return err;
	}
	return 0;
}

static char *list_url(struct k8s_pods *p, const char *cont)
{
	char *url = NULL, *esc = NULL;
	int rc;

	if (cont) {
		esc = url_escape(cont);
		if (!esc)
			return NULL;
		rc = asprintf(&url,
			      "%s/api/v1/pods?fieldSelector=spec.nodeName%%3D%s&limit=%u"
			      "&continue=%s",
			      p->api_url, p->node_escaped, p->page_size, esc);
	} else {
		/* resourceVersion=0: served from the API server's watch cache, not by a quorum
		 * read of etcd, which matters when every node of a cluster relists at once. */
		rc = asprintf(&url,
			      "%s/api/v1/pods?fieldSelector=spec.nodeName%%3D%s&limit=%u"
			      "&resourceVersion=0",
			      p->api_url, p->node_escaped, p->page_size);
	}
	free(esc);
	return rc < 0 ? NULL : url;
}

/* Lists every page, then replaces the cache with the result in one step. */
static int list_pods(struct k8s_pods *p)
{
	struct list_ctx c = { .p = p };
	struct k8s_pod_table old;
	int err, first;
	char *url;

	k8s_pod_table_init(&c.fresh, p->max_pods);
	do {
		url = list_url(p, c.cont);
		if (!url) {
			err = -ENOMEM;
			goto out_release;
		}
		err = k8s_http_get(p->http, url, p->list_timeout_ms, on_list_page, &c);
		free(url);
		if (err)
			goto out_release;
	} while (c.cont);
	if (c.invalid || c.ignored)
		log_warn(0, "kubernetes: list: %lu pods and %lu container statuses not understood",
			 c.invalid, c.ignored);
	if (c.dropped)
		log_warn(0, "kubernetes: pod cache full (%u pods): %lu pods on node %s not cached",
			 p->max_pods, c.dropped, p->node);
	pthread_mutex_lock(&p->lock);
	old = p->table;
	p->table = c.fresh;
	first = !p->st.synced;
	p->st.lists++;
	p->st.relists += !first;
	p->st.errors += c.invalid;
	p->st.pods_dropped += c.dropped;
	p->st.generation++;
	p->st.synced = 1;
	pthread_cond_broadcast(&p->cond);
	pthread_mutex_unlock(&p->lock);
	c.fresh = old; /* released below, outside the lock */
	snprintf(p->rv, sizeof(p->rv), "%s", c.rv);
	if (first)
		log_info("kubernetes: %zu pods on node %s cached (resourceVersion %s)",
			 p->table.n_pods, p->node, p->rv);
	else
		log_debug("kubernetes: relisted pods at resourceVersion %s", p->rv);
out_release:
	free(c.cont);
	k8s_pod_table_release(&c.fresh);
	return err;
}

/* Parses outside the lock; holds it only to change the table. */
static int apply_event(struct k8s_pods *p, const char *type, struct json_object *obj)
{
	unsigned long ignored = 0;
	struct k8s_pod pod;
	int err, deleted = !strcmp(type, "DELETED");

	err = k8s_pod_parse(obj, &pod, &ignored);
	if (err) {
		count(p, &p->st.errors, 1);
		return err == -EINVAL ?
			       log_warn(0, "kubernetes: %s event without a valid pod", type) :
			       err;
	}
	pthread_mutex_lock(&p->lock);
	if (deleted) {
		k8s_pod_release(&pod);
		k8s_pod_table_remove(&p->table, pod.uid); /* -ENOENT: it was never cached */
	} else {
		err = k8s_pod_table_put(&p->table, &pod);
		if (err == -ENOSPC)
			p->st.pods_dropped++;
	}
	p->st.generation++;
	pthread_mutex_unlock(&p->lock);
	if (err == -ENOSPC)
		log_warn(0, "kubernetes: pod cache full (%u pods): %s/%s not cached", p->max_pods,
			 pod.namespace, pod.name);
	return err == -ENOMEM ? err : 0;
}

static int on_watch_event(void *arg, struct json_object *ev)
{
	struct json_object *obj = member(ev, "object", json_type_object), *code;
	const char *type = member_str(ev, "type"), *rv;
	struct k8s_pods *p = arg;
	int err = 0;

	/* Errors that end the watch are counted once, by run(). */
	if (!type || !obj)
		return log_warn(-EBADMSG, "kubernetes: watch event without type or object");
	if (!strcmp(type, "ERROR")) {
		/* The usual way to hear "too old resource version": HTTP 200, then this. */
		code = member(obj, "code", json_type_int);
		if (code && json_object_get_int(code) == 410)
			return -ESTALE;
		return log_warn(-EPROTO, "kubernetes: watch error: %s",
				member_str(obj, "message") ? member_str(obj, "message") : "?");
	}
	if (!strcmp(type, "ADDED") || !strcmp(type, "MODIFIED") || !strcmp(type, "DELETED"))
		err = apply_event(p, type, obj);
	else if (strcmp(type, "BOOKMARK"))
		return 0; /* a type from a newer API: skip it */
	if (err)
		return err;
	rv = member_str(member(obj, "metadata", json_type_object), "resourceVersion");
	if (rv && *rv && strlen(rv) < RV_LEN)
		snprintf(p->rv, sizeof(p->rv), "%s", rv);
	count(p, &p->st.watch_events, 1);
	return 0;
}

/* Returns 0 after a watch that delivered events, -EAGAIN after one that ended with none (so
 * the caller pauses), -ESTALE to relist, or the request's error. */
static int watch_pods(struct k8s_pods *p)
{
	char *url = NULL, *rv = url_escape(p->rv);
	uint64_t before;
	int err;

	if (!rv || asprintf(&url,
			    "%s/api/v1/pods?fieldSelector=spec.nodeName%%3D%s&watch=1"
			    "&resourceVersion=%s&allowWatchBookmarks=true&timeoutSeconds=%u",
			    p->api_url, p->node_escaped, rv, p->watch_timeout_s) < 0) {
		free(rv);
		return -ENOMEM;
	}
	free(rv);
	pthread_mutex_lock(&p->lock);
	p->st.watches++;
	before = p->st.watch_events;
	pthread_mutex_unlock(&p->lock);
	/* The client gives the server's timeout some slack before it calls the watch dead. */
	err = k8s_http_get(p->http, url, (p->watch_timeout_s + 30) * 1000u, on_watch_event, p);
	free(url);
	if (err)
		return err;
	pthread_mutex_lock(&p->lock);
	err = p->st.watch_events == before ? -EAGAIN : 0;
	pthread_mutex_unlock(&p->lock);
	return err;
}

static void pause_ms(struct k8s_pods *p, unsigned int ms)
{
	struct timespec ts;

	ts = clock_after_ms(CLOCK_MONOTONIC, ms);
	pthread_mutex_lock(&p->lock);
	while (!atomic_load(&p->stop) &&
	       pthread_cond_timedwait(&p->cond, &p->lock, &ts) != ETIMEDOUT)
		;
	pthread_mutex_unlock(&p->lock);
}

static void *run(void *arg)
{
	struct k8s_pods *p = arg;
	int need_list = 1, watch_fails = 0, err;

	while (!atomic_load(&p->stop)) {
		if (need_list) {
			err = list_pods(p);
			need_list = err != 0;
			watch_fails = 0;
		} else {
			err = watch_pods(p);
			if (err == -ESTALE) {
				need_list = 1;
				continue;
			}
			/* A resume that keeps failing may never succeed: start over. */
			watch_fails = err && err != -EAGAIN ? watch_fails + 1 : 0;
			if (watch_fails >= WATCH_FAILS_BEFORE_RELIST)
				need_list = 1;
		}
		if (err == -ECANCELED)
			break;
		if (!err) {
			backoff_reset(&p->backoff);
			continue;
		}
		if (err != -EAGAIN)
			count(p, &p->st.errors, 1);
		pause_ms(p, backoff_next_ms(&p->backoff));
	}
	return NULL;
}

int k8s_pods_lookup_container(struct k8s_pods *p, const char *container_id, struct k8s_pod_ref *out)
{
	const struct k8s_container *ctr;
	const struct k8s_pod *pod;
	int err = -ENOENT;

	pthread_mutex_lock(&p->lock);
	pod = k8s_pod_table_find_container(&p->table, container_id, &ctr);
	if (pod) {
		memcpy(out->namespace, pod->namespace, sizeof(out->namespace));
		memcpy(out->pod, pod->name, sizeof(out->pod));
		memcpy(out->container, ctr->name, sizeof(out->container));
		err = 0;
	}
	pthread_mutex_unlock(&p->lock);
	return err;
}

int k8s_pods_lookup_pod(struct k8s_pods *p, const char *pod_uid, struct k8s_pod_ref *out)
{
	const struct k8s_pod *pod;
	int err = -ENOENT;

	pthread_mutex_lock(&p->lock);
	pod = k8s_pod_table_find_pod(&p->table, pod_uid);
	if (pod) {
		memcpy(out->namespace, pod->namespace, sizeof(out->namespace));
		memcpy(out->pod, pod->name, sizeof(out->pod));
		out->container[0] = '\0';
		err = 0;
	}
	pthread_mutex_unlock(&p->lock);
	return err;
}

int k8s_pods_wait_synced(struct k8s_pods *p, unsigned int timeout_ms)
{
	struct timespec ts;
	int err = 0;

	ts = clock_after_ms(CLOCK_MONOTONIC, timeout_ms);
	pthread_mutex_lock(&p->lock);
	while (!p->st.synced && err != ETIMEDOUT)
		err = pthread_cond_timedwait(&p->cond, &p->lock, &ts);
	err = p->st.synced ? 0 : -ETIMEDOUT;
	pthread_mutex_unlock(&p->lock);
	return err;
}

void k8s_pods_stats(struct k8s_pods *p, struct k8s_pods_stats *out)
{
	pthread_mutex_lock(&p->lock);
	*out = p->st;
	out->pods = p->table.n_pods;
	out->containers = k8s_pod_table_containers(&p->table);
	pthread_mutex_unlock(&p->lock);
}

static int init_sync(struct k8s_pods *p)
{
	pthread_condattr_t attr;
	int err;

	err = pthread_condattr_init(&attr);
	if (err)
		return -err;
	err = pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	if (!err)
		err = pthread_cond_init(&p->cond, &attr);
	pthread_condattr_destroy(&attr);
	if (err)
		return -err;
	err = pthread_mutex_init(&p->lock, NULL);
	if (err) {
		pthread_cond_destroy(&p->cond);
		return -err;
	}
	return 0;
}

/* The thread blocks every signal, so SIGINT and SIGTERM reach the agent's main thread, which
 * waits for them; curl cannot be interrupted by them either. */
static int start_thread(struct k8s_pods *p)
{
	sigset_t all, old;
	int err;

	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	err = -pthread_create(&p->thread, NULL, run, p);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (!err)
		pthread_setname_np(p->thread, "spanprof-k8s");
	return err;
}

static void free_fields(struct k8s_pods *p)
{
	k8s_http_free(p->http);
	free(p->api_url);
	free(p->node);
	free(p->node_escaped);
	free(p);
}

struct k8s_pods *k8s_pods_new(const struct k8s_pods_options *opts)
{
	struct k8s_http_options hopts = { .token_path = opts->token_path,
					  .ca_path = opts->ca_path,
					  .connect_timeout_ms = opts->connect_timeout_ms };
	struct k8s_pods *p;
	int err;

	if (!opts->api_url || !*opts->api_url || !opts->node_name || !*opts->node_name) {
		errno = EINVAL;
		return NULL;
	}
	p = calloc(1, sizeof(*p));
	if (!p) {
		errno = ENOMEM;
		return NULL;
	}
	p->api_url = strdup(opts->api_url);
	if (p->api_url && p->api_url[strlen(p->api_url) - 1] == '/')
		p->api_url[strlen(p->api_url) - 1] = '\0';
	p->node = strdup(opts->node_name);
	p->node_escaped = url_escape(opts->node_name);
	p->http = k8s_http_new(&hopts);
	if (!p->api_url || !p->node || !p->node_escaped || !p->http) {
		err = -ENOMEM;
		goto out_free;
	}
	p->max_pods = opts->max_pods ? opts->max_pods : K8S_PODS_DEFAULT_MAX;
	p->list_timeout_ms = opts->list_timeout_ms ? opts->list_timeout_ms : 60000;
	p->watch_timeout_s = opts->watch_timeout_s ? opts->watch_timeout_s : 300;
	p->page_size = opts->page_size ? opts->page_size : 500;
	backoff_init(&p->backoff, opts->backoff_initial_ms ? opts->backoff_initial_ms : 500,
		     opts->backoff_max_ms ? opts->backoff_max_ms : 30000, 0);
	k8s_pod_table_init(&p->table, p->max_pods);
	err = init_sync(p);
	if (err)
		goto out_free;
	err = start_thread(p);
	if (err)
		goto out_sync;
	return p;

out_sync:
	pthread_cond_destroy(&p->cond);
	pthread_mutex_destroy(&p->lock);
out_free:
	free_fields(p);
	errno = -err;
	return NULL;
}

void k8s_pods_free(struct k8s_pods *p)
{
	if (!p)
		return;
	atomic_store(&p->stop, 1);
	k8s_http_cancel(p->http);
	pthread_mutex_lock(&p->lock);
	pthread_cond_broadcast(&p->cond);
	pthread_mutex_unlock(&p->lock);
	pthread_join(p->thread, NULL);
	k8s_pod_table_release(&p->table);
	pthread_cond_destroy(&p->cond);
	pthread_mutex_destroy(&p->lock);
	free_fields(p);
}
