// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* POSTs push requests with libcurl: one easy handle kept for the uploader's life so the
 * connection is reused; auth, TLS, tenant and extra headers set once; outcomes classified. */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "output/upload_http.h"
#include "util/curl_lib.h"
#include "util/log.h"

#ifndef SPANPROF_VERSION
#define SPANPROF_VERSION "dev"
#endif

struct upload_http {
	CURL *curl;
	struct curl_slist *headers;
	char *url, *log_url;
	const atomic_int *abort;
	struct upload_http_result *res; /* of the transfer in progress */
	size_t body_len; /* response bytes kept in res->message */
	char errbuf[CURL_ERROR_SIZE];
};

/* Headers the protocol needs: overriding them would break every push. */
static const char *const reserved_headers[] = { "content-type", "content-encoding",
						"content-length", "host", "transfer-encoding" };

static int has_crlf(const char *s)
{
	return strpbrk(s, "\r\n") != NULL;
}

/* "Name: value" with a token name (RFC 9110) that is not one we set ourselves. */
static const char *check_header(const char *h)
{
	const char *colon = h ? strchr(h, ':') : NULL;
	const char *p;
	size_t i;

	if (!colon || colon == h)
		return "must look like \"Name: value\"";
	if (has_crlf(h))
		return "must not contain line breaks";
	for (p = h; p < colon; p++)
		if (!isalnum((unsigned char)*p) && !strchr("!#$%&'*+-.^_`|~", *p))
			return "has an invalid character in its name";
	for (i = 0; i < sizeof(reserved_headers) / sizeof(reserved_headers[0]); i++)
		if ((size_t)(colon - h) == strlen(reserved_headers[i]) &&
		    !strncasecmp(h, reserved_headers[i], colon - h))
			return "is set by spanprof itself and cannot be overridden";
	return NULL;
}

static int check_file(const char *option, const char *path)
{
	if (path && access(path, R_OK))
		return log_err(-errno, "%s %s is not readable", option, path);
	return 0;
}

static int check_options(const struct upload_options *o)
{
	const char *why;
	size_t i;
	int err;

	if (o->basic_password && !o->basic_user)
		return log_err(-EINVAL, "a basic auth password needs a basic auth user");
	if (o->basic_user && o->bearer_token)
		return log_err(-EINVAL, "basic auth and a bearer token are exclusive: set one");
	if ((o->basic_user && has_crlf(o->basic_user)) ||
	    (o->basic_password && has_crlf(o->basic_password)) ||
	    (o->bearer_token && has_crlf(o->bearer_token)))
		return log_err(-EINVAL, "credentials must not contain line breaks");
	if (o->tenant && (!*o->tenant || has_crlf(o->tenant)))
		return log_err(-EINVAL, "tenant (X-Scope-OrgID) must be one non-empty line");
	if (o->client_key && !o->client_cert)
		return log_err(-EINVAL, "a TLS client key needs a client certificate");
	err = check_file("TLS CA file", o->ca_file);
	err = err ?: check_file("TLS client certificate", o->client_cert);
	err = err ?: check_file("TLS client key", o->client_key);
	if (err)
		return err;
	if (o->nheaders && !o->headers)
		return log_err(-EINVAL, "extra headers: list is missing");
	for (i = 0; i < o->nheaders; i++) {
		why = check_header(o->headers[i]);
		/* Only the name is printed: header values often carry secrets. */
		if (why)
			return log_err(-EINVAL, "extra header %zu (%.*s) %s", i + 1,
				       (int)strcspn(o->headers[i] ? o->headers[i] : "", ":\r\n"),
				       o->headers[i] ? o->headers[i] : "", why);
	}
	return 0;
}

/* push URL = base URL with UPLOAD_PUSH_PATH appended to its path; log URL = the same without
 * user:password@. */
static int build_urls(struct upload_http *h, const char *base)
{
	char *scheme = NULL, *path = NULL, *url = NULL, *newpath = NULL;
	CURLU *u = curl_lib()->url();
	size_t n;
	int err = -EINVAL;

	if (!u)
		return -ENOMEM;
	if (!base || !*base || curl_lib()->url_set(u, CURLUPART_URL, base, 0) ||
	    curl_lib()->url_get(u, CURLUPART_SCHEME, &scheme, 0) ||
	    (strcasecmp(scheme, "http") && strcasecmp(scheme, "https"))) {
		log_err(-EINVAL, "server URL must be an http:// or https:// URL");
		goto out_free;
	}
	if (curl_lib()->url_get(u, CURLUPART_PATH, &path, 0))
		goto out_free;
	n = strlen(path);
	while (n && path[n - 1] == '/')
		n--;
	newpath = malloc(n + sizeof(UPLOAD_PUSH_PATH));
	err = -ENOMEM;
	if (!newpath)
		goto out_free;
	memcpy(newpath, path, n);
	memcpy(newpath + n, UPLOAD_PUSH_PATH, sizeof(UPLOAD_PUSH_PATH));
	if (curl_lib()->url_set(u, CURLUPART_PATH, newpath, 0) ||
	    curl_lib()->url_get(u, CURLUPART_URL, &url, 0))
		goto out_free;
	h->url = strdup(url);
	curl_lib()->free(url);
	url = NULL;
	if (curl_lib()->url_set(u, CURLUPART_USER, NULL, 0) ||
	    curl_lib()->url_set(u, CURLUPART_PASSWORD, NULL, 0) ||
	    curl_lib()->url_get(u, CURLUPART_URL, &url, 0))
		goto out_free;
	h->log_url = strdup(url);
	err = h->url && h->log_url ? 0 : -ENOMEM;
out_free:
	curl_lib()->free(url);
	curl_lib()->free(path);
	curl_lib()->free(scheme);
	free(newpath);
	curl_lib()->url_cleanup(u);
	return err;
}

static size_t on_body(char *data, size_t size, size_t nmemb, void *ctx)
{
	struct upload_http *h = ctx;
	size_t n = size * nmemb, room = sizeof(h->res->message) - 1 - h->body_len;

	/* Keep an excerpt and swallow the rest: a long answer must not fail the transfer. */
	if (n < room)
		room = n;
	memcpy(h->res->message + h->body_len, data, room);
	h->body_len += room;
	h->res->message[h->body_len] = '\0';
	return n;
}

static size_t on_header(char *data, size_t size, size_t nmemb, void *ctx)
{
	static const char name[] = "retry-after:";
	struct upload_http *h = ctx;
	size_t n = size * nmemb, i = sizeof(name) - 1;
	unsigned long secs = 0;

	if (n <= i || strncasecmp(data, name, i))
		return n;
	while (i < n && (data[i] == ' ' || data[i] == '\t'))
		i++;
	/* Only the delay-seconds form; an HTTP date is rare and falls back to our backoff. */
	for (; i < n && isdigit((unsigned char)data[i]) && secs < 86400; i++)
		secs = secs * 10 + (data[i] - '0');
	h->res->retry_after_ms = secs > 86400 ? 86400000u : (unsigned int)secs * 1000u;
	return n;
}

static int on_progress(void *ctx, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal,
		       curl_off_t ulnow)
{
	struct upload_http *h = ctx;

	(void)dltotal;
	(void)dlnow;
	(void)ultotal;
	(void)ulnow;
	return h->abort && atomic_load(h->abort);
}

static int add_header(struct upload_http *h, const char *line)
{
	struct curl_slist *l = curl_lib()->slist_append(h->headers, line);

	if (!l)
		return -ENOMEM;
	h->headers = l;
	return 0;
}

static int build_headers(struct upload_http *h, const struct upload_options *o)
{
	char *tenant;
	size_t i;
	int err;

	err = add_header(h, "Content-Type: application/proto");
	err = err ?: add_header(h, "Content-Encoding: gzip");
	err = err ?: add_header(h, "Connect-Protocol-Version: 1");
	/* No "Expect: 100-continue" round trip before large bodies. */
	err = err ?: add_header(h, "Expect:");
	if (!err && o->tenant) {
		if (asprintf(&tenant, "X-Scope-OrgID: %s", o->tenant) < 0)
			return -ENOMEM;
		err = add_header(h, tenant);
		free(tenant);
	}
	for (i = 0; !err && i < o->nheaders; i++)
		err = add_header(h, o->headers[i]);
	return err;
}

#define SETOPT(h, opt, val)                                                      \
	do {                                                                     \
		if (curl_lib()->easy_setopt((h)->curl, opt, val) != CURLE_OK)    \
			return log_err(-EINVAL, "libcurl refused option " #opt); \
	} while (0)

static int setup_auth_tls(struct upload_http *h, const struct upload_options *o)
{
	if (o->basic_user) {
		SETOPT(h, CURLOPT_HTTPAUTH, (long)CURLAUTH_BASIC);
		SETOPT(h, CURLOPT_USERNAME, o->basic_user);
		SETOPT(h, CURLOPT_PASSWORD, o->basic_password ? o->basic_password : "");
	} else if (o->bearer_token) {
		SETOPT(h, CURLOPT_HTTPAUTH, (long)CURLAUTH_BEARER);
		SETOPT(h, CURLOPT_XOAUTH2_BEARER, o->bearer_token);
	}
	if (o->ca_file)
		SETOPT(h, CURLOPT_CAINFO, o->ca_file);
	if (o->client_cert)
		SETOPT(h, CURLOPT_SSLCERT, o->client_cert);
	if (o->client_key)
		SETOPT(h, CURLOPT_SSLKEY, o->client_key);
	if (o->tls_insecure) {
		SETOPT(h, CURLOPT_SSL_VERIFYPEER, 0L);
		SETOPT(h, CURLOPT_SSL_VERIFYHOST, 0L);
		log_warn(0, "TLS certificate verification is off for %s (insecure option)",
			 h->log_url);
	}
	return 0;
}

/* A server behind a redirect (http -> https, a moved path, another port) still gets every push:
 * redirects are followed, a few at most, with the POST and its body kept on 301/302/303 (as a
 * 307/308 keeps them), and never from https down to http. libcurl sends the credentials only
 * to the host of the first URL. */
static int setup_redirects(struct upload_http *h)
{
	int https = !strncasecmp(h->url, "https:", 6);

	SETOPT(h, CURLOPT_FOLLOWLOCATION, 1L);
	SETOPT(h, CURLOPT_MAXREDIRS, (long)UPLOAD_HTTP_MAX_REDIRECTS);
	SETOPT(h, CURLOPT_POSTREDIR, (long)CURL_REDIR_POST_ALL);
	SETOPT(h, CURLOPT_REDIR_PROTOCOLS_STR, https ? "https" : "http,https");
	return 0;
}

static int setup_handle(struct upload_http *h, const struct upload_options *o)
{
	SETOPT(h, CURLOPT_URL, h->url);
	SETOPT(h, CURLOPT_PROTOCOLS_STR, "http,https");
	SETOPT(h, CURLOPT_NOSIGNAL, 1L); /* we run in a thread: no SIGALRM for DNS timeouts */
	SETOPT(h, CURLOPT_POST, 1L);
	SETOPT(h, CURLOPT_HTTPHEADER, h->headers);
	SETOPT(h, CURLOPT_USERAGENT, "spanprof/" SPANPROF_VERSION);
	SETOPT(h, CURLOPT_CONNECTTIMEOUT_MS, (long)o->connect_timeout_ms);
	SETOPT(h, CURLOPT_TCP_KEEPALIVE, 1L);
	SETOPT(h, CURLOPT_ERRORBUFFER, h->errbuf);
	SETOPT(h, CURLOPT_WRITEFUNCTION, on_body);
	SETOPT(h, CURLOPT_WRITEDATA, h);
	SETOPT(h, CURLOPT_HEADERFUNCTION, on_header);
	SETOPT(h, CURLOPT_HEADERDATA, h);
	SETOPT(h, CURLOPT_NOPROGRESS, 0L);
	SETOPT(h, CURLOPT_XFERINFOFUNCTION, on_progress);
	SETOPT(h, CURLOPT_XFERINFODATA, h);
	return setup_redirects(h) ?: setup_auth_tls(h, o);
}

struct upload_http *upload_http_new(const struct upload_options *o, const atomic_int *abort)
{
	struct upload_http *h;
	int err;

	err = check_options(o);
	if (err) {
		errno = -err;
		return NULL;
	}
	if (!curl_lib())
		return NULL; /* errno set, the reason logged */
	h = calloc(1, sizeof(*h));
	if (!h) {
		errno = ENOMEM;
		return NULL;
	}
	h->abort = abort;
	err = build_urls(h, o->server_url);
	if (!err) {
		h->curl = curl_lib()->easy_init();
		err = h->curl ? 0 : log_err(-ENOMEM, "create a libcurl handle");
	}
	err = err ?: build_headers(h, o);
	err = err ?: setup_handle(h, o);
	if (err) {
		upload_http_free(h);
		errno = -err;
		return NULL;
	}
	return h;
}

void upload_http_free(struct upload_http *h)
{
	if (!h)
		return;
	/* The handle holds the credentials libcurl copied; cleanup frees them. */
	if (h->curl)
		curl_lib()->easy_cleanup(h->curl);
	curl_lib()->slist_free_all(h->headers);
	free(h->url);
	free(h->log_url);
	free(h);
}

const char *upload_http_url(const struct upload_http *h)
{
	return h->log_url;
}

/* Replaces what cannot be printed on one log line. */
static void make_printable(char *s)
{
	for (; *s; s++)
		if (*s < 0x20 || *s > 0x7e)
			*s = ' ';
}

static void classify(struct upload_http_result *res)
{
	long st = res->status;

	if (res->curl_code != CURLE_OK)
		res->verdict = UPLOAD_HTTP_RETRY;
	else if (st >= 200 && st < 300)
		res->verdict = UPLOAD_HTTP_OK;
	else if (st == 408 || st == 429 || st >= 500)
		res->verdict = UPLOAD_HTTP_RETRY;
	else if (st >= 300 && st < 400) /* not followed (no Location, 304, ...): keep the data */
		res->verdict = UPLOAD_HTTP_RETRY;
	else
		res->verdict = UPLOAD_HTTP_REJECT;
}

int upload_http_post(struct upload_http *h, const uint8_t *body, size_t len,
		     unsigned int timeout_ms, struct upload_http_result *res)
{
	CURLcode rc;

	memset(res, 0, sizeof(*res));
	h->res = res;
	h->body_len = 0;
	h->errbuf[0] = '\0';
	if (curl_lib()->easy_setopt(h->curl, CURLOPT_POSTFIELDS, body) != CURLE_OK ||
	    curl_lib()->easy_setopt(h->curl, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len) !=
		    CURLE_OK ||
	    curl_lib()->easy_setopt(h->curl, CURLOPT_TIMEOUT_MS, (long)timeout_ms) != CURLE_OK)
		return -ENOMEM;
	rc = curl_lib()->easy_perform(h->curl);
	res->curl_code = rc;
	if (rc == CURLE_OK)
		curl_lib()->easy_getinfo(h->curl, CURLINFO_RESPONSE_CODE, &res->status);
	else
		snprintf(res->message, sizeof(res->message), "%s",
			 h->errbuf[0] ? h->errbuf : curl_lib()->easy_strerror(rc));
	make_printable(res->message);
	classify(res);
	h->res = NULL;
	return 0;
}
