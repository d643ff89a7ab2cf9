/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* One libcurl easy handle (so connections are reused) that POSTs gzipped push requests with the
 * configured auth, TLS and headers, and sorts each outcome into ok / retry later / rejected. */
#ifndef SPANPROF_UPLOAD_HTTP_H
#define SPANPROF_UPLOAD_HTTP_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "output/upload.h"

#define UPLOAD_HTTP_MESSAGE_MAX 256 /* excerpt of the server's answer kept for the log */
#define UPLOAD_HTTP_MAX_REDIRECTS 5 /* redirects followed per push */

enum upload_http_verdict {
	UPLOAD_HTTP_OK, /* 2xx */
	/* transport error, timeout, too many redirects, 3xx not followed, 408, 429, 5xx: may
	 * succeed later */
	UPLOAD_HTTP_RETRY,
	UPLOAD_HTTP_REJECT, /* any other status: will never succeed */
};

struct upload_http_result {
	enum upload_http_verdict verdict;
	long status; /* HTTP status; 0 when there was no response */
	int curl_code; /* CURLE_OK, or the transport error */
	unsigned int retry_after_ms; /* the server's Retry-After (seconds form), 0 if none */
	/* transport error text, or the start of the response body; printable ASCII only */
	char message[UPLOAD_HTTP_MESSAGE_MAX];
};

struct upload_http;

/* Checks the options that concern HTTP (URL, auth, TLS files, tenant, headers) and sets up the
 * handle. A transfer in progress gives up within about a second once *abort becomes non-zero
 * (abort may be NULL). Returns NULL with errno set (EINVAL, ENOENT, ENOMEM), the reason logged
 * naming the option. */
struct upload_http *upload_http_new(const struct upload_options *o, const atomic_int *abort);
void upload_http_free(struct upload_http *h); /* NULL-safe */

/* The push URL with any user:password@ removed, for log lines. */
const char *upload_http_url(const struct upload_http *h);

/* POSTs body (a gzipped push request) within timeout_ms (the connect timeout still applies)
 * and fills *res. Returns 0 (the outcome is in res) or -ENOMEM. */
int upload_http_post(struct upload_http *h, const uint8_t *body, size_t len,
		     unsigned int timeout_ms, struct upload_http_result *res);

#endif /* SPANPROF_UPLOAD_HTTP_H */
