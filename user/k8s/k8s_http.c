// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* API server GETs: a curl multi handle only so that curl_multi_wakeup() can interrupt a watch
 * that waits for events, and an incremental json-c tokener that cuts the body into values. */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <json-c/json.h>

#include "k8s/k8s_http.h"
#include "util/curl_lib.h"
#include "util/log.h"

#ifndef SPANPROF_VERSION
#define SPANPROF_VERSION "dev"
#endif

#define TOKEN_MAX 16384
#define JSON_DEPTH 128 /* managedFields nest deeper than json-c's default of 32 allows */

struct k8s_http {
	CURLM *multi;
	CURL *easy;
	char *token_path, *ca_path;
	unsigned int connect_timeout_ms;
	atomic_int cancelled;
};

struct transfer {
	struct k8s_http *h;
	json_tokener *tok;
	k8s_http_value_fn fn;
	void *ctx;
	long status;
	size_t value_bytes; /* of the value being parsed */
	int err; /* why on_body stopped the transfer */
	int fn_err; /* ... and it was fn that said so (fn reports its own errors) */
	char errbody[512]; /* start of a non-200 body, for the log line */
	size_t errlen;
};

static int feed(struct transfer *t, const char *data, size_t len)
{
	struct json_object *obj;
	enum json_tokener_error jerr;
	size_t used;
	int err;

	while (len) {
		/* Whitespace between values (the watch's newlines) is not the start of one. */
		if (!t->value_bytes && isspace((unsigned char)*data)) {
			data++;
			len--;
			continue;
		}
		obj = json_tokener_parse_ex(t->tok, data, (int)len);
		jerr = json_tokener_get_error(t->tok);
		if (jerr == json_tokener_continue) {
			t->value_bytes += len; /* > 0: a value has begun */
			return t->value_bytes > K8S_HTTP_MAX_VALUE ? -EFBIG : 0;
		}
		if (jerr != json_tokener_success || !obj) {
			json_object_put(obj);
			return -EBADMSG;
		}
		used = json_tokener_get_parse_end(t->tok);
		data += used;
		len -= used;
		t->value_bytes = 0;
		err = t->fn(t->ctx, obj);
		json_object_put(obj);
		if (err) {
			t->fn_err = 1;
			return err;
		}
	}
	return 0;
}

static size_t on_body(char *data, size_t size, size_t nmemb, void *arg)
{
	struct transfer *t = arg;
	size_t len = size * nmemb, n;

	if (!t->status)
		curl_lib()->easy_getinfo(t->h->easy, CURLINFO_RESPONSE_CODE, &t->status);
	if (t->status != 200) {
		n = sizeof(t->errbody) - 1 - t->errlen;
		n = len < n ? len : n;
		memcpy(t->errbody + t->errlen, data, n);
		t->errlen += n;
		t->errbody[t->errlen] = '\0';
		return len;
	}
	/* Curl hands at most CURL_MAX_WRITE_SIZE (16 KiB) at a time: len fits feed()'s int. */
	t->err = feed(t, data, len);
	return t->err ? 0 : len;
}

static int progress(void *arg, curl_off_t dt, curl_off_t dn, curl_off_t ut, curl_off_t un)
{
	struct k8s_http *h = arg;

	(void)dt, (void)dn, (void)ut, (void)un;
	return atomic_load(&h->cancelled);
}

/* "Bearer <token>" header from the token file; -EACCES (logged) when it cannot be read. */
static int auth_header(struct k8s_http *h, struct curl_slist **hdrs)
{
	char buf[TOKEN_MAX + 32] = "Authorization: Bearer ";
	size_t pre = strlen(buf), len = 0;
	struct curl_slist *l;
	ssize_t n;
	int fd;

	if (!h->token_path)
		return 0;
	fd = open(h->token_path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return log_warn(-EACCES, "kubernetes: read token %s: %s", h->token_path,
				strerror(errno));
	while ((n = read(fd, buf + pre + len, TOKEN_MAX - len)) > 0)
		len += n;
	close(fd);
	while (len && (buf[pre + len - 1] == '\n' || buf[pre + len - 1] == '\r' ||
		       buf[pre + len - 1] == ' '))
		len--;
	if (n < 0 || !len || len == TOKEN_MAX)
		return log_warn(-EACCES, "kubernetes: token %s is unreadable, empty or too long",
				h->token_path);
	buf[pre + len] = '\0';
	l = curl_lib()->slist_append(*hdrs, buf);
	memset(buf, 0, sizeof(buf)); /* no copy of the token lingers on the stack */
	if (!l)
		return -ENOMEM;
	*hdrs = l;
	return 0;
}

static int setup(struct k8s_http *h, struct transfer *t, const char *url, unsigned int timeout_ms,
		 struct curl_slist **hdrs, char *errbuf)
{
	CURL *e = h->easy;
	struct curl_slist *l;
	int err;

	err = auth_header(h, hdrs);
	if (err)
		return err;
	l = curl_lib()->slist_append(*hdrs, "Accept: application/json");
	if (!l)
		return -ENOMEM;
	*hdrs = l;
	curl_lib()->easy_reset(e); /* keeps the connection cache */
	if (curl_lib()->easy_setopt(e, CURLOPT_URL, url) ||
	    curl_lib()->easy_setopt(e, CURLOPT_NOSIGNAL, 1L) ||
	    curl_lib()->easy_setopt(e, CURLOPT_HTTPHEADER, *hdrs) ||
	    curl_lib()->easy_setopt(e, CURLOPT_USERAGENT, "spanprof/" SPANPROF_VERSION) ||
	    curl_lib()->easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, (long)h->connect_timeout_ms) ||
	    curl_lib()->easy_setopt(e, CURLOPT_TIMEOUT_MS, (long)timeout_ms) ||
	    curl_lib()->easy_setopt(e, CURLOPT_TCP_KEEPALIVE, 1L) ||
	    curl_lib()->easy_setopt(e, CURLOPT_ACCEPT_ENCODING, "") ||
	    curl_lib()->easy_setopt(e, CURLOPT_WRITEFUNCTION, on_body) ||
	    curl_lib()->easy_setopt(e, CURLOPT_WRITEDATA, t) ||
	    curl_lib()->easy_setopt(e, CURLOPT_NOPROGRESS, 0L) ||
	    curl_lib()->easy_setopt(e, CURLOPT_XFERINFOFUNCTION, progress) ||
	    curl_lib()->easy_setopt(e, CURLOPT_XFERINFODATA, h) ||
	    curl_lib()->easy_setopt(e, CURLOPT_ERRORBUFFER, errbuf) ||
	    (h->ca_path && curl_lib()->easy_setopt(e, CURLOPT_CAINFO, h->ca_path)))
		return log_err(-EINVAL, "kubernetes: configure request for %s", url);
	return 0;
}

/* Drives the transfer; waiting in curl_multi_poll() lets k8s_http_cancel() wake us at once. */
static CURLcode perform(struct k8s_http *h)
{
	CURLcode res = CURLE_ABORTED_BY_CALLBACK;
	struct CURLMsg *msg;
	int running = 1, left;

	if (curl_lib()->multi_add_handle(h->multi, h->easy))
		return CURLE_FAILED_INIT;
	while (!atomic_load(&h->cancelled)) {
		if (curl_lib()->multi_perform(h->multi, &running)) {
			res = CURLE_FAILED_INIT;
			break;
		}
		if (!running) {
			msg = curl_lib()->multi_info_read(h->multi, &left);
			res = msg && msg->msg == CURLMSG_DONE ? msg->data.result :
								CURLE_FAILED_INIT;
			break;
		}
		if (curl_lib()->multi_poll(h->multi, NULL, 0, 1000, NULL)) {
			res = CURLE_FAILED_INIT;
			break;
		}
	}
	curl_lib()->multi_remove_handle(h->multi, h->easy);
	return res;
}

static int status_error(struct transfer *t, const char *url)
{
	struct json_object *o = json_tokener_parse(t->errbody), *m;
	const char *msg = t->errlen ? t->errbody : "";
	int err;

	if (t->status == 410)
		err = -ESTALE; /* expected: the caller relists */
	else if (t->status == 401 || t->status == 403)
		err = -EACCES;
	else
		err = -EPROTO;
	if (o && json_object_object_get_ex(o, "message", &m))
		msg = json_object_get_string(m);
	if (err != -ESTALE)
		log_warn(err, "kubernetes: GET %s: HTTP %ld: %s", url, t->status, msg);
	json_object_put(o);
	return err;
}

static int transport_error(CURLcode res, const char *url, const char *errbuf)
{
	int err = res == CURLE_OPERATION_TIMEDOUT ? -ETIMEDOUT :
		  res == CURLE_COULDNT_CONNECT	  ? -ECONNREFUSED :
						    -EIO;

	return log_warn(err, "kubernetes: GET %s: %s", url,
			*errbuf ? errbuf : curl_lib()->easy_strerror(res));
}

int k8s_http_get(struct k8s_http *h, const char *url, unsigned int timeout_ms, k8s_http_value_fn fn,
		 void *ctx)
{
	struct transfer t = { .h = h, .fn = fn, .ctx = ctx };
	char errbuf[CURL_ERROR_SIZE] = "";
	struct curl_slist *hdrs = NULL;
	CURLcode res;
	int err;

	if (atomic_load(&h->cancelled))
		return -ECANCELED;
	t.tok = json_tokener_new_ex(JSON_DEPTH);
	if (!t.tok)
		return -ENOMEM;
	err = setup(h, &t, url, timeout_ms, &hdrs, errbuf);
	if (err)
		goto out_free;
	res = perform(h);
	if (!t.status)
		curl_lib()->easy_getinfo(h->easy, CURLINFO_RESPONSE_CODE, &t.status);
	if (atomic_load(&h->cancelled))
		err = -ECANCELED;
	else if (res == CURLE_WRITE_ERROR && t.err)
		err = t.err;
	else if (res != CURLE_OK)
		err = transport_error(res, url, errbuf);
	else if (t.status != 200)
		err = status_error(&t, url);
	else if (t.value_bytes)
		err = log_warn(-EBADMSG, "kubernetes: GET %s: body ends inside a JSON value", url);
	if (err && err == t.err && !t.fn_err && err != -ECANCELED)
		log_warn(err, "kubernetes: GET %s: %s", url,
			 err == -EFBIG ? "a JSON value is too big" : "the body is not JSON");
out_free:
	curl_lib()->slist_free_all(hdrs);
	json_tokener_free(t.tok);
	return err;
}

void k8s_http_cancel(struct k8s_http *h)
{
	atomic_store(&h->cancelled, 1);
	curl_lib()->multi_wakeup(h->multi);
}

struct k8s_http *k8s_http_new(const struct k8s_http_options *opts)
{
	struct k8s_http *h;

	if (!curl_lib()) {
		errno = EIO; /* the reason logged */
		return NULL;
	}
	h = calloc(1, sizeof(*h));
	if (!h)
		goto fail_nomem;
	h->token_path = opts->token_path ? strdup(opts->token_path) : NULL;
	h->ca_path = opts->ca_path ? strdup(opts->ca_path) : NULL;
	if ((opts->token_path && !h->token_path) || (opts->ca_path && !h->ca_path))
		goto fail_nomem;
	h->connect_timeout_ms = opts->connect_timeout_ms ? opts->connect_timeout_ms : 5000;
	h->multi = curl_lib()->multi_init();
	h->easy = curl_lib()->easy_init();
	if (!h->multi || !h->easy) {
		k8s_http_free(h);
		errno = EIO;
		return NULL;
	}
	return h;

fail_nomem:
	k8s_http_free(h);
	errno = ENOMEM;
	return NULL;
}

void k8s_http_free(struct k8s_http *h)
{
	if (!h)
		return;
	if (h->easy)
		curl_lib()->easy_cleanup(h->easy);
	if (h->multi)
		curl_lib()->multi_cleanup(h->multi);
	free(h->token_path);
	free(h->ca_path);
	free(h);
}
