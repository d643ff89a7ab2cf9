/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The metrics server: /metrics, /healthz and /readyz over HTTP (libmicrohttpd, own thread). */
#ifndef SPANPROF_METRICS_HTTP_H
#define SPANPROF_METRICS_HTTP_H

#include "output/metrics.h"
#include "util/http_serve.h"

/* A connection that sends nothing for this long is closed. */
#define METRICS_HTTP_CONNECTION_TIMEOUT_S 5

/* Listens on addr ("HOST:PORT", "[IPv6]:PORT", or ":PORT" for every address; port 0 picks a
 * free one) and serves, from a thread of its own:
 *   GET /metrics  200, m in the Prometheus text format 0.0.4
 *   GET /healthz  200 while the process runs
 *   GET /readyz   503 until metrics_set_ready(m, 1), then 200
 * 404 for other paths, 405 for methods other than GET and HEAD. m is not owned and must outlive
 * the server. http_server_port() tells the port it listens on (the one picked for port 0), and
 * http_server_stop() stops it. Returns NULL with errno set on failure, which is logged once with the address and
 * the cause (EINVAL: not HOST:PORT; EADDRNOTAVAIL: the host does not resolve; else bind/listen's
 * errno, e.g. EADDRINUSE or EACCES). */
struct http_server *metrics_http_start(struct metrics *m, const char *addr);

#endif /* SPANPROF_METRICS_HTTP_H */
