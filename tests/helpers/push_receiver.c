// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Test-only Pyroscope push receiver: a libmicrohttpd server on 127.0.0.1 (a thread per
 * connection, so a hanging request blocks nothing else) that gunzips and decodes every push,
 * records it, and answers as scripted. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <microhttpd.h>

#include "pprof_file.h"
#include "push_receiver.h"

#define BODY_MAX (64u << 20)

struct push_receiver {
	struct MHD_Daemon *daemon;
	uint16_t port;
	char url[64];
	pthread_mutex_t lock;
	pthread_cond_t changed; /* a record was added, or hanging requests were released */
	struct push_record **recs;
	size_t n, cap;
	int script_status; /* answer for the next script_left requests */
	unsigned int script_left;
	int script_forever;
	char *script_msg;
	unsigned int release_gen; /* bumped by push_receiver_release() */
	unsigned int retry_after_s; /* sent with 429 and 503 answers when non-zero */
	char *location; /* 3xx answers: Location is this base URL + the request's path */
	int stopping;
	unsigned int connections;
};

struct req_state {
	uint8_t *body;
	size_t len, cap;
	int too_big;
};

static int append_body(struct req_state *st, const char *data, size_t n)
{
	size_t ncap;
	void *p;

	if (st->len + n > BODY_MAX) {
		st->too_big = 1;
		return 0;
	}
	if (st->len + n > st->cap) {
		ncap = st->cap ? st->cap * 2 : 65536;
		while (ncap < st->len + n)
			ncap *= 2;
		p = realloc(st->body, ncap);
		if (!p)
			return -1;
		st->body = p;
		st->cap = ncap;
	}
	memcpy(st->body + st->len, data, n);
	st->len += n;
	return 0;
}

Push__V1__PushRequest *push_request_gunzip(const uint8_t *gz, size_t len)
{
	Push__V1__PushRequest *req;
	uint8_t *raw;
	size_t n;

	if (len < 2 || gz[0] != 0x1f || gz[1] != 0x8b || pprof_gunzip(gz, len, &raw, &n))
		return NULL;
	req = push__v1__push_request__unpack(NULL, n, raw);
	free(raw);
	return req;
}

static enum MHD_Result add_header(void *cls, enum MHD_ValueKind kind, const char *key,
				  const char *value)
{
	struct push_record *rec = cls;
	char **p;

	(void)kind;
	p = realloc(rec->headers, (rec->nheaders + 1) * sizeof(*p));
	if (!p)
		return MHD_NO;
	rec->headers = p;
	if (asprintf(&rec->headers[rec->nheaders], "%s: %s", key, value ? value : "") < 0)
		return MHD_NO;
	rec->nheaders++;
	return MHD_YES;
}

static void decode_profiles(struct push_record *rec)
{
	size_t s, k, n = 0;

	for (s = 0; s < rec->req->n_series; s++)
		n += rec->req->series[s]->n_samples;
	rec->profiles = calloc(n ? n : 1, sizeof(*rec->profiles));
	if (!rec->profiles)
		return;
	for (s = 0; s < rec->req->n_series; s++) {
		const Push__V1__RawProfileSeries *ser = rec->req->series[s];

		for (k = 0; k < ser->n_samples; k++)
			rec->profiles[rec->nprofiles++] =
				pprof_decode(ser->samples[k]->raw_profile.data,
					     ser->samples[k]->raw_profile.len);
	}
}

static struct push_record *make_record(struct MHD_Connection *c, const char *url,
				       const char *method, const struct req_state *st)
{
	struct push_record *rec = calloc(1, sizeof(*rec));
	const char *enc;

	if (!rec)
		return NULL;
	rec->method = strdup(method);
	rec->path = strdup(url);
	rec->body_len = st->len;
	MHD_get_connection_values(c, MHD_HEADER_KIND, add_header, rec);
	enc = push_record_header(rec, "Content-Encoding");
	rec->gzipped = enc && !strcasecmp(enc, "gzip") && st->len >= 2 && st->body[0] == 0x1f &&
		       st->body[1] == 0x8b;
	rec->req = rec->gzipped ? push_request_gunzip(st->body, st->len) :
				  push__v1__push_request__unpack(NULL, st->len, st->body);
	if (rec->req)
		decode_profiles(rec);
	return rec;
}

static void add_record(struct push_receiver *r, struct push_record *rec)
{
	void *p;

	if (r->n == r->cap) {
		p = realloc(r->recs, (r->cap ? r->cap * 2 : 64) * sizeof(*r->recs));
		if (!p)
			abort(); /* test helper: out of memory is fatal */
		r->recs = p;
		r->cap = r->cap ? r->cap * 2 : 64;
	}
	r->recs[r->n++] = rec;
	pthread_cond_broadcast(&r->changed);
}

/* The scripted answer for one request; *msg is malloc'ed (or NULL). Lock held. */
static int next_answer(struct push_receiver *r, char **msg)
{
	int status = 200;

	*msg = NULL;
	if (r->script_forever || r->script_left) {
		status = r->script_status;
		*msg = r->script_msg ? strdup(r->script_msg) : NULL;
		if (!r->script_forever)
			r->script_left--;
	}
	return status;
}

static enum MHD_Result respond(struct MHD_Connection *c, int status, const char *msg,
			       unsigned int retry_after_s, const char *location)
{
	char secs[16];

	struct MHD_Response *resp;
	enum MHD_Result ret;

	resp = MHD_create_response_from_buffer(msg ? strlen(msg) : 0, (void *)(msg ? msg : ""),
					       MHD_RESPMEM_MUST_COPY);
	if (!resp)
		return MHD_NO;
	if ((status == 429 || status == 503) && retry_after_s) {
		snprintf(secs, sizeof(secs), "%u", retry_after_s);
		MHD_add_response_header(resp, "Retry-After", secs);
	}
	if (status >= 300 && status < 400 && location)
		MHD_add_response_header(resp, "Location", location);
	ret = MHD_queue_response(c, status, resp);
	MHD_destroy_response(resp);
	return ret;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
				  const char *method, const char *version, const char *data,
				  size_t *data_size, void **con_cls)
{
	struct push_receiver *r = cls;
	struct req_state *st = *con_cls;
	struct push_record *rec;
	unsigned int gen, retry_after;
	char *msg, *location = NULL;
	int status;
	enum MHD_Result ret;

	(void)version;
	if (!st) {
		st = calloc(1, sizeof(*st));
		*con_cls = st;
		return st ? MHD_YES : MHD_NO;
	}
	if (*data_size) {
		if (append_body(st, data, *data_size))
			return MHD_NO;
		*data_size = 0;
		return MHD_YES;
	}
	if (st->too_big)
		return respond(c, 413, "body too large", 0, NULL);
	rec = make_record(c, url, method, st);
	if (!rec)
		return MHD_NO;
	pthread_mutex_lock(&r->lock);
	status = next_answer(r, &msg);
	rec->status = status;
	add_record(r, rec);
	if (status == PUSH_RECEIVER_HANG) {
		gen = r->release_gen;
		while (!r->stopping && gen == r->release_gen)
			pthread_cond_wait(&r->changed, &r->lock);
		status = 503;
	}
	retry_after = r->retry_after_s;
	if (r->location && asprintf(&location, "%s%s", r->location, url) < 0)
		location = NULL;
	pthread_mutex_unlock(&r->lock);
	ret = respond(c, status, msg, retry_after, location);
	free(location);
	free(msg);
	return ret;
}

static void on_completed(void *cls, struct MHD_Connection *c, void **con_cls,
			 enum MHD_RequestTerminationCode toe)
{
	struct req_state *st = *con_cls;

	(void)cls;
	(void)c;
	(void)toe;
	if (st) {
		free(st->body);
		free(st);
	}
	*con_cls = NULL;
}

static void on_connection(void *cls, struct MHD_Connection *c, void **socket_ctx,
			  enum MHD_ConnectionNotificationCode toe)
{
	struct push_receiver *r = cls;

	(void)c;
	(void)socket_ctx;
	if (toe != MHD_CONNECTION_NOTIFY_STARTED)
		return;
	pthread_mutex_lock(&r->lock);
	r->connections++;
	pthread_mutex_unlock(&r->lock);
}

/* Starts the daemon: plain HTTP, or HTTPS when cert and key (PEM text) are given. */
static struct push_receiver *start(uint16_t port, const char *cert, const char *key)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(port) };
	unsigned int flags = MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD;
	const union MHD_DaemonInfo *info;
	struct push_receiver *r;

	r = calloc(1, sizeof(*r));
	if (!r)
		return NULL;
	pthread_mutex_init(&r->lock, NULL);
	pthread_cond_init(&r->changed, NULL);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (cert)
		r->daemon = MHD_start_daemon(
			flags | MHD_USE_TLS, port, NULL, NULL, on_request, r, MHD_OPTION_SOCK_ADDR,
			(struct sockaddr *)&sa, MHD_OPTION_LISTENING_ADDRESS_REUSE, (unsigned int)1,
			MHD_OPTION_HTTPS_MEM_CERT, cert, MHD_OPTION_HTTPS_MEM_KEY, key,
			MHD_OPTION_NOTIFY_COMPLETED, on_completed, r, MHD_OPTION_NOTIFY_CONNECTION,
			on_connection, r, MHD_OPTION_END);
	else
		r->daemon = MHD_start_daemon(
			flags, port, NULL, NULL, on_request, r, MHD_OPTION_SOCK_ADDR,
			(struct sockaddr *)&sa, MHD_OPTION_LISTENING_ADDRESS_REUSE, (unsigned int)1,
			MHD_OPTION_NOTIFY_COMPLETED, on_completed, r, MHD_OPTION_NOTIFY_CONNECTION,
			on_connection, r, MHD_OPTION_END);
	if (!r->daemon) {
		push_receiver_free(r);
		return NULL;
	}
	info = MHD_get_daemon_info(r->daemon, MHD_DAEMON_INFO_BIND_PORT);
	r->port = info ? info->port : port;
	snprintf(r->url, sizeof(r->url), "%s://127.0.0.1:%u", cert ? "https" : "http", r->port);
	return r;
}

struct push_receiver *push_receiver_new(uint16_t port)
{
	return start(port, NULL, NULL);
}

struct push_receiver *push_receiver_new_tls(uint16_t port, const char *cert_pem,
					    const char *key_pem)
{
	return cert_pem && key_pem ? start(port, cert_pem, key_pem) : NULL;
}

static void record_free(struct push_record *rec)
{
	size_t i;

	for (i = 0; i < rec->nheaders; i++)
		free(rec->headers[i]);
	free(rec->headers);
	for (i = 0; i < rec->nprofiles; i++)
		pprof_file_free(rec->profiles[i]);
	free(rec->profiles);
	if (rec->req)
		push__v1__push_request__free_unpacked(rec->req, NULL);
	free(rec->method);
	free(rec->path);
	free(rec);
}

void push_receiver_free(struct push_receiver *r)
{
	size_t i;

	if (!r)
		return;
	pthread_mutex_lock(&r->lock);
	r->stopping = 1;
	pthread_cond_broadcast(&r->changed);
	pthread_mutex_unlock(&r->lock);
	if (r->daemon)
		MHD_stop_daemon(r->daemon);
	for (i = 0; i < r->n; i++)
		record_free(r->recs[i]);
	free(r->recs);
	free(r->script_msg);
	free(r->location);
	pthread_cond_destroy(&r->changed);
	pthread_mutex_destroy(&r->lock);
	free(r);
}

uint16_t push_receiver_port(const struct push_receiver *r)
{
	return r->port;
}

const char *push_receiver_url(const struct push_receiver *r)
{
	return r->url;
}

void push_receiver_answer(struct push_receiver *r, int status, unsigned int n, const char *message)
{
	pthread_mutex_lock(&r->lock);
	r->script_status = status;
	r->script_left = n;
	r->script_forever = n == 0;
	free(r->script_msg);
	r->script_msg = message ? strdup(message) : NULL;
	pthread_mutex_unlock(&r->lock);
}

void push_receiver_set_location(struct push_receiver *r, const char *base_url)
{
	pthread_mutex_lock(&r->lock);
	free(r->location);
	r->location = base_url ? strdup(base_url) : NULL;
	pthread_mutex_unlock(&r->lock);
}

void push_receiver_set_retry_after(struct push_receiver *r, unsigned int seconds)
{
	pthread_mutex_lock(&r->lock);
	r->retry_after_s = seconds;
	pthread_mutex_unlock(&r->lock);
}

void push_receiver_release(struct push_receiver *r)
{
	pthread_mutex_lock(&r->lock);
	r->release_gen++;
	pthread_cond_broadcast(&r->changed);
	pthread_mutex_unlock(&r->lock);
}

size_t push_receiver_count(struct push_receiver *r)
{
	size_t n;

	pthread_mutex_lock(&r->lock);
	n = r->n;
	pthread_mutex_unlock(&r->lock);
	return n;
}

static size_t count_status_locked(const struct push_receiver *r, int status)
{
	size_t i, n = 0;

	for (i = 0; i < r->n; i++)
		n += r->recs[i]->status == status;
	return n;
}

size_t push_receiver_count_status(struct push_receiver *r, int status)
{
	size_t n;

	pthread_mutex_lock(&r->lock);
	n = count_status_locked(r, status);
	pthread_mutex_unlock(&r->lock);
	return n;
}

size_t push_receiver_wait(struct push_receiver *r, int status, size_t n, unsigned int timeout_ms)
{
	struct timespec ts;
	size_t have;

	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += timeout_ms / 1000;
	ts.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
	if (ts.tv_nsec >= 1000000000L) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000L;
	}
	pthread_mutex_lock(&r->lock);
	while ((have = count_status_locked(r, status)) < n)
		if (pthread_cond_timedwait(&r->changed, &r->lock, &ts) == ETIMEDOUT)
			break;
	have = count_status_locked(r, status);
	pthread_mutex_unlock(&r->lock);
	return have;
}

const struct push_record *push_receiver_record(struct push_receiver *r, size_t i)
{
	const struct push_record *rec;

	pthread_mutex_lock(&r->lock);
	rec = i < r->n ? r->recs[i] : NULL;
	pthread_mutex_unlock(&r->lock);
	return rec;
}

unsigned int push_receiver_connections(struct push_receiver *r)
{
	unsigned int n;

	pthread_mutex_lock(&r->lock);
	n = r->connections;
	pthread_mutex_unlock(&r->lock);
	return n;
}

const char *push_record_header(const struct push_record *rec, const char *name)
{
	size_t i, n = strlen(name);

	for (i = 0; i < rec->nheaders; i++)
		if (!strncasecmp(rec->headers[i], name, n) && rec->headers[i][n] == ':')
			return rec->headers[i] + n + 2;
	return NULL;
}

const char *push_record_label(const struct push_record *rec, size_t s, const char *name)
{
	const Push__V1__RawProfileSeries *ser;
	size_t i;

	if (!rec->req || s >= rec->req->n_series)
		return NULL;
	ser = rec->req->series[s];
	for (i = 0; i < ser->n_labels; i++)
		if (!strcmp(ser->labels[i]->name, name))
			return ser->labels[i]->value;
	return NULL;
}
