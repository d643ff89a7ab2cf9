// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Test-only Kubernetes API server (see fake_kube_api.h): a pod store with resource versions and
 * an event history; each watch is a chunked response whose reader blocks on a condition. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <json-c/json.h>
#include <microhttpd.h>

#include "fake_kube_api.h"

struct stored_pod {
	char uid[64], node[256];
	char *json; /* one line, with the current resourceVersion */
};

struct event {
	unsigned long rv;
	char node[256];
	char *line; /* {"type":...,"object":...}\n */
};

struct fake_kube_api {
	struct MHD_Daemon *daemon;
	char url[64];
	pthread_mutex_t lock;
	pthread_cond_t cond;
	char token[512];
	unsigned long rv, compacted_rv; /* a watch may resume from rv >= compacted_rv */
	struct stored_pod *pods;
	size_t n_pods;
	struct event *events;
	size_t n_events;
	unsigned int fail_status, fail_count;
	unsigned long bookmark_gen, end_gen;
	int stopping, paused;
	struct fake_kube_counts counts;
};

struct watch_stream {
	struct fake_kube_api *api;
	char node[256];
	int any_node, bookmarks, closing;
	unsigned long last_rv, bookmark_seen, end_seen;
	char *out;
	size_t out_len, out_off;
};

/* Sets metadata.resourceVersion and returns the object as one line (malloc'ed), or NULL. */
static char *with_rv(const char *json, unsigned long rv, char *uid, char *node)
{
	struct json_object *o = json_tokener_parse(json), *meta, *spec, *v;
	char buf[32];
	char *s = NULL;

	if (!o)
		return NULL;
	if (!json_object_object_get_ex(o, "metadata", &meta) ||
	    !json_object_object_get_ex(meta, "uid", &v))
		goto out_put;
	snprintf(uid, 64, "%s", json_object_get_string(v));
	node[0] = '\0';
	if (json_object_object_get_ex(o, "spec", &spec) &&
	    json_object_object_get_ex(spec, "nodeName", &v))
		snprintf(node, 256, "%s", json_object_get_string(v));
	snprintf(buf, sizeof(buf), "%lu", rv);
	json_object_object_add(meta, "resourceVersion", json_object_new_string(buf));
	s = strdup(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
out_put:
	json_object_put(o);
	return s;
}

static int add_event(struct fake_kube_api *api, const char *type, const char *obj, const char *node)
{
	struct event *grown = realloc(api->events, (api->n_events + 1) * sizeof(*grown));
	struct event *e;

	if (!grown)
		return -ENOMEM;
	api->events = grown;
	e = &api->events[api->n_events];
	if (asprintf(&e->line, "{\"type\":\"%s\",\"object\":%s}\n", type, obj) < 0)
		return -ENOMEM;
	e->rv = api->rv;
	snprintf(e->node, sizeof(e->node), "%s", node);
	api->n_events++;
	return 0;
}

static struct stored_pod *find_pod(struct fake_kube_api *api, const char *uid)
{
	size_t i;

	for (i = 0; i < api->n_pods; i++)
		if (!strcmp(api->pods[i].uid, uid))
			return &api->pods[i];
	return NULL;
}

int fake_kube_api_apply(struct fake_kube_api *api, const char *type, const char *pod_json)
{
	char uid[64], node[256], *line;
	struct stored_pod *p, *grown;
	int err = 0;

	if (strcmp(type, "ADDED") && strcmp(type, "MODIFIED") && strcmp(type, "DELETED"))
		return -EINVAL;
	pthread_mutex_lock(&api->lock);
	line = with_rv(pod_json, api->rv + 1, uid, node);
	if (!line) {
		err = -EINVAL;
		goto unlock;
	}
	api->rv++;
	p = find_pod(api, uid);
	if (!strcmp(type, "DELETED")) {
		if (p) {
			free(p->json);
			*p = api->pods[--api->n_pods];
		}
	} else if (p) {
		free(p->json);
		p->json = strdup(line);
	} else {
		grown = realloc(api->pods, (api->n_pods + 1) * sizeof(*grown));
		if (!grown) {
			err = -ENOMEM;
			goto free_line;
		}
		api->pods = grown;
		p = &api->pods[api->n_pods++];
		snprintf(p->uid, sizeof(p->uid), "%s", uid);
		snprintf(p->node, sizeof(p->node), "%s", node);
		p->json = strdup(line);
	}
	err = add_event(api, type, line, node);
	pthread_cond_broadcast(&api->cond);
free_line:
	free(line);
unlock:
	pthread_mutex_unlock(&api->lock);
	return err;
}

void fake_kube_api_compact(struct fake_kube_api *api)
{
	size_t i;

	pthread_mutex_lock(&api->lock);
	for (i = 0; i < api->n_events; i++)
		free(api->events[i].line);
	api->n_events = 0;
	api->compacted_rv = api->rv;
	pthread_cond_broadcast(&api->cond);
	pthread_mutex_unlock(&api->lock);
}

void fake_kube_api_bookmark(struct fake_kube_api *api)
{
	pthread_mutex_lock(&api->lock);
	api->bookmark_gen++;
	pthread_cond_broadcast(&api->cond);
	pthread_mutex_unlock(&api->lock);
}

void fake_kube_api_pause_watches(struct fake_kube_api *api, int paused)
{
	pthread_mutex_lock(&api->lock);
	api->paused = paused;
	pthread_cond_broadcast(&api->cond);
	pthread_mutex_unlock(&api->lock);
}

void fake_kube_api_end_watches(struct fake_kube_api *api)
{
	pthread_mutex_lock(&api->lock);
	api->end_gen++;
	pthread_cond_broadcast(&api->cond);
	pthread_mutex_unlock(&api->lock);
}

void fake_kube_api_fail_watches(struct fake_kube_api *api, unsigned int http_status,
				unsigned int count)
{
	pthread_mutex_lock(&api->lock);
	api->fail_status = http_status;
	api->fail_count = count;
	pthread_mutex_unlock(&api->lock);
}

void fake_kube_api_set_token(struct fake_kube_api *api, const char *token)
{
	pthread_mutex_lock(&api->lock);
	snprintf(api->token, sizeof(api->token), "%s", token);
	pthread_mutex_unlock(&api->lock);
}

void fake_kube_api_counts(struct fake_kube_api *api, struct fake_kube_counts *out)
{
	pthread_mutex_lock(&api->lock);
	*out = api->counts;
	pthread_mutex_unlock(&api->lock);
}

const char *fake_kube_api_url(const struct fake_kube_api *api)
{
	return api->url;
}

static char *status_json(unsigned int code, const char *reason, const char *message)
{
	char *s;

	if (asprintf(&s,
		     "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},"
		     "\"status\":\"Failure\",\"message\":\"%s\",\"reason\":\"%s\",\"code\":%u}",
		     message, reason, code) < 0)
		return NULL;
	return s;
}

static enum MHD_Result respond(struct MHD_Connection *c, unsigned int code, char *body)
{
	struct MHD_Response *r;
	enum MHD_Result ret;

	if (!body)
		return MHD_NO;
	r = MHD_create_response_from_buffer(strlen(body), body, MHD_RESPMEM_MUST_FREE);
	if (!r) {
		free(body);
		return MHD_NO;
	}
	MHD_add_response_header(r, "Content-Type", "application/json");
	ret = MHD_queue_response(c, code, r);
	MHD_destroy_response(r);
	return ret;
}

static enum MHD_Result respond_status(struct MHD_Connection *c, unsigned int code,
				      const char *reason, const char *message)
{
	return respond(c, code, status_json(code, reason, message));
}

/* The pods on `node` (all when any_node), as a PodList page of at most `limit` items starting
 * at `offset`; a continue token "rv:offset" asks for the rest. Called locked. */
static char *pod_list(struct fake_kube_api *api, const char *node, int any_node,
		      unsigned long limit, unsigned long offset, unsigned long rv)
{
	unsigned long seen = 0, sent = 0;
	char *s = NULL, next[64] = "";
	size_t len, i;
	FILE *f;

	f = open_memstream(&s, &len);
	if (!f)
		return NULL;
	fputs("{\"kind\":\"PodList\",\"apiVersion\":\"v1\",\"items\":[", f);
	for (i = 0; i < api->n_pods; i++) {
		if (!any_node && strcmp(api->pods[i].node, node))
			continue;
		if (seen++ < offset)
			continue;
		if (limit && sent == limit) {
			snprintf(next, sizeof(next), "%lu:%lu", rv, offset + sent);
			break;
		}
		fprintf(f, "%s%s", sent++ ? "," : "", api->pods[i].json);
	}
	fprintf(f, "],\"metadata\":{\"resourceVersion\":\"%lu\"%s%s%s}}", rv,
		*next ? ",\"continue\":\"" : "", next, *next ? "\"" : "");
	fclose(f);
	return s;
}

/* Next bytes of a watch: history first, then new events, bookmarks, or the end. Locked. */
static int next_output(struct watch_stream *w)
{
	struct fake_kube_api *api = w->api;
	size_t i;

	if (w->last_rv < api->compacted_rv) {
		char *st = status_json(410, "Expired", "too old resource version");

		w->closing = 1; /* end after this event */
		if (!st || asprintf(&w->out, "{\"type\":\"ERROR\",\"object\":%s}\n", st) < 0)
			w->out = NULL;
		free(st);
		return w->out ? 1 : -1;
	}
	for (i = 0; i < api->n_events; i++) {
		if (api->events[i].rv <= w->last_rv)
			continue;
		w->last_rv = api->events[i].rv;
		if (!w->any_node && strcmp(api->events[i].node, w->node))
			continue;
		w->out = strdup(api->events[i].line);
		return w->out ? 1 : -1;
	}
	if (w->bookmarks && w->bookmark_seen != api->bookmark_gen) {
		w->bookmark_seen = api->bookmark_gen;
		w->last_rv = api->rv;
		api->counts.bookmarks++;
		if (asprintf(&w->out,
			     "{\"type\":\"BOOKMARK\",\"object\":{\"kind\":\"Pod\","
			     "\"apiVersion\":\"v1\",\"metadata\":{\"resourceVersion\":"
			     "\"%lu\",\"creationTimestamp\":null},\"spec\":{\"containers\""
			     ":null},\"status\":{}}}\n",
			     api->rv) < 0)
			return -1;
		return 1;
	}
	return 0;
}

static ssize_t watch_read(void *cls, uint64_t pos, char *buf, size_t max)
{
	struct watch_stream *w = cls;
	struct fake_kube_api *api = w->api;
	struct timespec ts;
	ssize_t n = MHD_CONTENT_READER_END_OF_STREAM;
	int rc;

	(void)pos;
	pthread_mutex_lock(&api->lock);
	while (!w->out) {
		if (api->stopping || w->closing || w->end_seen != api->end_gen)
			goto unlock;
		rc = api->paused ? 0 : next_output(w);
		if (rc < 0) {
			n = MHD_CONTENT_READER_END_WITH_ERROR;
			goto unlock;
		}
		if (rc)
			break;
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += 50 * 1000 * 1000;
		if (ts.tv_nsec >= 1000000000L) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&api->cond, &api->lock, &ts);
	}
	if (!w->out_len)
		w->out_len = strlen(w->out);
	n = w->out_len - w->out_off < max ? w->out_len - w->out_off : max;
	memcpy(buf, w->out + w->out_off, n);
	w->out_off += n;
	if (w->out_off == w->out_len) {
		free(w->out);
		w->out = NULL;
		w->out_len = w->out_off = 0;
	}
unlock:
	pthread_mutex_unlock(&api->lock);
	return n;
}

static void watch_free(void *cls)
{
	struct watch_stream *w = cls;

	pthread_mutex_lock(&w->api->lock);
	w->api->counts.open_watches--;
	pthread_mutex_unlock(&w->api->lock);
	free(w->out);
	free(w);
}

static enum MHD_Result start_watch(struct fake_kube_api *api, struct MHD_Connection *c,
				   const char *node, const char *rv, const char *bookmarks)
{
	struct watch_stream *w = calloc(1, sizeof(*w));
	struct MHD_Response *r;
	enum MHD_Result ret;

	if (!w)
		return MHD_NO;
	w->api = api;
	w->any_node = !node;
	snprintf(w->node, sizeof(w->node), "%s", node ? node : "");
	w->bookmarks = bookmarks && !strcmp(bookmarks, "true");
	w->last_rv = rv && strcmp(rv, "0") ? strtoul(rv, NULL, 10) : api->rv;
	w->bookmark_seen = api->bookmark_gen;
	w->end_seen = api->end_gen;
	api->counts.watches++;
	api->counts.open_watches++;
	pthread_mutex_unlock(&api->lock);
	r = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 4096, watch_read, w, watch_free);
	if (!r) {
		watch_free(w);
		return MHD_NO;
	}
	MHD_add_response_header(r, "Content-Type", "application/json");
	ret = MHD_queue_response(c, MHD_HTTP_OK, r);
	MHD_destroy_response(r);
	return ret;
}

static int authorized(struct fake_kube_api *api, struct MHD_Connection *c)
{
	const char *h = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Authorization");

	return h && !strncmp(h, "Bearer ", 7) && !strcmp(h + 7, api->token);
}

/* Runs locked; every path unlocks before queueing a response. */
static enum MHD_Result serve_pods(struct fake_kube_api *api, struct MHD_Connection *c)
{
	const char *sel = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "fieldSelector");
	const char *watch = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "watch");
	const char *rv = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "resourceVersion");
	const char *limit = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "limit");
	const char *cont = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "continue");
	const char *marks =
		MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "allowWatchBookmarks");
	unsigned long list_rv = api->rv, offset = 0;
	const char *node = NULL;
	unsigned int status;
	char *body;

	snprintf(api->counts.field_selector, sizeof(api->counts.field_selector), "%s",
		 sel ? sel : "");
	if (sel && strncmp(sel, "spec.nodeName=", 14)) {
		pthread_mutex_unlock(&api->lock);
		return respond_status(c, 400, "BadRequest", "unsupported field selector");
	}
	node = sel ? sel + 14 : NULL;
	if (watch && (!strcmp(watch, "1") || !strcmp(watch, "true"))) {
		snprintf(api->counts.watch_rv, sizeof(api->counts.watch_rv), "%s", rv ? rv : "");
		if (api->fail_count) {
			api->fail_count--;
			status = api->fail_status;
			pthread_mutex_unlock(&api->lock);
			return respond_status(c, status, status == 410 ? "Gone" : "InternalError",
					      "injected failure");
		}
		return start_watch(api, c, node, rv, marks); /* unlocks */
	}
	if (cont && sscanf(cont, "%lu:%lu", &list_rv, &offset) != 2) {
		pthread_mutex_unlock(&api->lock);
		return respond_status(c, 400, "BadRequest", "bad continue token");
	}
	body = pod_list(api, node, !node, limit ? strtoul(limit, NULL, 10) : 0, offset, list_rv);
	api->counts.lists++;
	pthread_mutex_unlock(&api->lock);
	return respond(c, MHD_HTTP_OK, body);
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
				  const char *method, const char *version, const char *upload,
				  size_t *upload_size, void **con_cls)
{
	struct fake_kube_api *api = cls;

	(void)version;
	(void)upload;
	(void)upload_size;
	(void)con_cls;
	if (strcmp(method, "GET"))
		return respond_status(c, 405, "MethodNotAllowed", "GET only");
	pthread_mutex_lock(&api->lock);
	if (!authorized(api, c)) {
		api->counts.unauthorized++;
		pthread_mutex_unlock(&api->lock);
		return respond_status(c, 401, "Unauthorized", "Unauthorized");
	}
	if (strcmp(url, "/api/v1/pods")) {
		pthread_mutex_unlock(&api->lock);
		return respond_status(c, 404, "NotFound", "the server could not find the resource");
	}
	return serve_pods(api, c);
}

static int listen_loopback(unsigned int *port)
{
	struct sockaddr_in sa = { .sin_family = AF_INET,
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(sa);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return -errno;
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) || listen(fd, 64) ||
	    getsockname(fd, (struct sockaddr *)&sa, &len)) {
		int err = -errno;

		close(fd);
		return err;
	}
	*port = ntohs(sa.sin_port);
	return fd;
}

struct fake_kube_api *fake_kube_api_new(const char *token)
{
	struct fake_kube_api *api = calloc(1, sizeof(*api));
	unsigned int port = 0;
	int fd;

	if (!api)
		return NULL;
	pthread_mutex_init(&api->lock, NULL);
	pthread_cond_init(&api->cond, NULL);
	snprintf(api->token, sizeof(api->token), "%s", token);
	api->rv = 1000;
	fd = listen_loopback(&port);
	if (fd < 0) {
		free(api);
		errno = -fd;
		return NULL;
	}
	snprintf(api->url, sizeof(api->url), "http://127.0.0.1:%u", port);
	/* A thread per connection: watch readers may block waiting for events. */
	api->daemon = MHD_start_daemon(
		MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD, 0, NULL, NULL,
		on_request, api, MHD_OPTION_LISTEN_SOCKET, (MHD_socket)fd, MHD_OPTION_END);
	if (!api->daemon) {
		close(fd);
		free(api);
		errno = EIO;
		return NULL;
	}
	return api;
}

void fake_kube_api_free(struct fake_kube_api *api)
{
	size_t i;

	if (!api)
		return;
	pthread_mutex_lock(&api->lock);
	api->stopping = 1;
	pthread_cond_broadcast(&api->cond);
	pthread_mutex_unlock(&api->lock);
	MHD_stop_daemon(api->daemon);
	for (i = 0; i < api->n_pods; i++)
		free(api->pods[i].json);
	for (i = 0; i < api->n_events; i++)
		free(api->events[i].line);
	free(api->pods);
	free(api->events);
	pthread_cond_destroy(&api->cond);
	pthread_mutex_destroy(&api->lock);
	free(api);
}

static struct json_object *container_status(const struct fake_kube_container *c)
{
	struct json_object *st = json_object_new_object(), *state = json_object_new_object();
	struct json_object *detail = json_object_new_object();

	json_object_object_add(st, "name", json_object_new_string(c->name));
	json_object_object_add(st, "image", json_object_new_string("registry.example/app:1.0"));
	json_object_object_add(
		st, "imageID",
		json_object_new_string(
			"registry.example/app@sha256:00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff"));
	json_object_object_add(st, "restartCount", json_object_new_int(0));
	json_object_object_add(st, "ready", json_object_new_boolean(c->container_id != NULL));
	if (c->container_id) {
		json_object_object_add(st, "containerID", json_object_new_string(c->container_id));
		json_object_object_add(st, "started", json_object_new_boolean(1));
		json_object_object_add(detail, "startedAt",
				       json_object_new_string("2025-11-21T05:22:44Z"));
		json_object_object_add(state, "running", detail);
	} else {
		json_object_object_add(detail, "reason",
				       json_object_new_string("ContainerCreating"));
		json_object_object_add(state, "waiting", detail);
	}
	json_object_object_add(st, "state", state);
	return st;
}

char *fake_kube_pod_json(const char *ns, const char *name, const char *uid, const char *node,
			 const struct fake_kube_container *ctrs, size_t n)
{
	struct json_object *pod = json_object_new_object(), *meta = json_object_new_object();
	struct json_object *spec = json_object_new_object(), *status = json_object_new_object();
	struct json_object *specs = json_object_new_array(), *labels = json_object_new_object();
	struct json_object *list, *c;
	char *s;
	size_t i;

	json_object_object_add(pod, "kind", json_object_new_string("Pod"));
	json_object_object_add(pod, "apiVersion", json_object_new_string("v1"));
	json_object_object_add(meta, "name", json_object_new_string(name));
	json_object_object_add(meta, "namespace", json_object_new_string(ns));
	json_object_object_add(meta, "uid", json_object_new_string(uid));
	json_object_object_add(meta, "resourceVersion", json_object_new_string("1"));
	json_object_object_add(meta, "creationTimestamp",
			       json_object_new_string("2025-11-21T05:22:40Z"));
	json_object_object_add(labels, "app", json_object_new_string(name));
	json_object_object_add(meta, "labels", labels);
	json_object_object_add(pod, "metadata", meta);
	json_object_object_add(spec, "nodeName", json_object_new_string(node));
	for (i = 0; i < n; i++) {
		c = json_object_new_object();
		json_object_object_add(c, "name", json_object_new_string(ctrs[i].name));
		json_object_object_add(c, "image",
				       json_object_new_string("registry.example/app:1.0"));
		json_object_array_add(specs, c);
		if (!json_object_object_get_ex(
			    status, ctrs[i].list ? ctrs[i].list : "containerStatuses", &list)) {
			list = json_object_new_array();
			json_object_object_add(
				status, ctrs[i].list ? ctrs[i].list : "containerStatuses", list);
		}
		json_object_array_add(list, container_status(&ctrs[i]));
	}
	json_object_object_add(spec, "containers", specs);
	json_object_object_add(pod, "spec", spec);
	json_object_object_add(status, "phase", json_object_new_string("Running"));
	json_object_object_add(status, "podIP", json_object_new_string("10.244.1.7"));
	json_object_object_add(pod, "status", status);
	s = strdup(json_object_to_json_string_ext(pod, JSON_C_TO_STRING_PLAIN));
	json_object_put(pod);
	return s;
}
