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

#include "util/http_serve.h"
#include "view/view_store.h"

/* Rows of /api/spans at most per request. */
#define VIEW_HTTP_MAX_ROWS 5000

/* Serves vs (not owned; must outlive the server) on host:port (port 0 picks one; the server's
 * http_server_port() tells which). Returns the server, stopped with http_server_stop(), or NULL
 * with errno set (logged with the address). */
struct http_server *view_http_start(struct view_store *vs, const char *host, unsigned int port);

#endif /* SPANPROF_VIEW_HTTP_H */
