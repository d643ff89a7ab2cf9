/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* GET requests to the Kubernetes API server (libcurl): bearer token re-read per request, the
 * cluster CA, JSON values streamed to a callback as they arrive, cancellation from any thread. */
#ifndef SPANPROF_K8S_HTTP_H
#define SPANPROF_K8S_HTTP_H

struct json_object;
struct k8s_http;

/* A value bigger than this ends the transfer (-EFBIG); a Pod is typically 5-50 KiB. */
#define K8S_HTTP_MAX_VALUE (64u << 20)

struct k8s_http_options {
	const char *token_path; /* bearer token file, re-read per request (it rotates);
					  * NULL: no Authorization header */
	const char *ca_path; /* CA bundle for https; NULL: the system's */
	unsigned int connect_timeout_ms; /* 0: 5000 */
};

/* Called for each complete top-level JSON value of a 200 response, in order; obj is borrowed.
 * Return 0 to go on, or a negative errno to stop the transfer with that result. */
typedef int (*k8s_http_value_fn)(void *ctx, struct json_object *obj);

/* Strings in *opts are copied. Returns NULL with errno set (ENOMEM, EIO when curl fails). */
struct k8s_http *k8s_http_new(const struct k8s_http_options *opts);

/* NULL-safe. No k8s_http_get() may be running. */
void k8s_http_free(struct k8s_http *h);

/* GETs url (one at a time per k8s_http; the connection is kept for the next request). The whole
 * request, body included, must end within timeout_ms (0: no limit). Returns 0 once the body is
 * complete; what fn returned when it stopped the transfer; -ECANCELED after k8s_http_cancel();
 * -ESTALE for HTTP 410 Gone; -EACCES for 401/403 and an unreadable token; -EPROTO for another
 * non-200 status; -EBADMSG for a body that is not JSON; -EFBIG; -ETIMEDOUT, -ECONNREFUSED or
 * -EIO when the transfer fails. Failures other than fn's, cancel and 410 are logged here
 * (rate-limited), with the URL and the Status message the server sent. */
int k8s_http_get(struct k8s_http *h, const char *url, unsigned int timeout_ms, k8s_http_value_fn fn,
		 void *ctx);

/* From any thread: the running k8s_http_get() and all later ones return -ECANCELED at once. */
void k8s_http_cancel(struct k8s_http *h);

#endif /* SPANPROF_K8S_HTTP_H */
