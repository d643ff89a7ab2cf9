/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The viewer's HTTP server (libmicrohttpd, one internal thread, so requests are answered one at
 * a time and the store needs no lock):
 *   GET /, /index.html, /view.js, /view.css   the page (embedded)
 *   GET /api/status     directory, counts, limits, skipped files
 *   GET /api/spans      ?service=&name=&trace=&sort=wall|cpu|off_cpu|start|service|name
 *                       &order=desc|asc&offset=&limit=   (span_query.h)
 *   GET /api/names      per (service, span name) figures
 *   GET /api/profile    ?span_id=<16 hex> or ?service=&name=   (profile_query.h)
 *   GET /api/reload     reads the directory again, then answers as /api/status */
#ifndef SPANPROF_VIEW_HTTP_H
#define SPANPROF_VIEW_HTTP_H

#include "view/view_store.h"

/* Rows of /api/spans at most per request. */
#define VIEW_HTTP_MAX_ROWS 5000

/* Serves vs (not owned; must outlive the server) on host:port (port 0 picks one). Returns the
 * server, or NULL with errno set (logged with the address). */
struct view_http *view_http_start(struct view_store *vs, const char *host, unsigned int port);

/* The port it listens on. */
unsigned int view_http_port(const struct view_http *h);

void view_http_stop(struct view_http *h); /* NULL-safe */

#endif /* SPANPROF_VIEW_HTTP_H */
