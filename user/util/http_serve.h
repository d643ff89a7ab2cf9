/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* What the agent's two HTTP servers (the metrics server and the span viewer) share over
 * libmicrohttpd: starting its polling thread on a socket we opened, queueing a reply, routing
 * its messages to our logger, and the port a socket was bound to. */
#ifndef SPANPROF_HTTP_SERVE_H
#define SPANPROF_HTTP_SERVE_H

#include <stddef.h>

#include <microhttpd.h>

struct http_serve_limits {
	unsigned int max_connections;
	unsigned int timeout_s; /* an idle connection is closed after it */
	unsigned int max_per_ip; /* 0: no limit per address */
	size_t connection_memory; /* 0: libmicrohttpd's default pool per connection */
};

/* Starts libmicrohttpd's internal polling thread on the listening socket fd, answering with
 * fn(ctx, ...); name ("metrics server") prefixes its log lines. On success the daemon owns fd
 * (MHD_stop_daemon() closes it). Returns NULL with errno set on failure; fd stays the caller's. */
struct MHD_Daemon *http_serve_start(int fd, const struct http_serve_limits *lim,
				    MHD_AccessHandlerCallback fn, void *ctx, const char *name);

/* Queues resp (NULL: out of memory, the connection is closed) with status and Content-Type
 * type, and releases it. */
enum MHD_Result http_serve_reply(struct MHD_Connection *conn, unsigned int status, const char *type,
				 struct MHD_Response *resp);

/* The local port of a bound socket, or 0 when it cannot be told. */
unsigned int http_serve_bound_port(int fd);

#endif /* SPANPROF_HTTP_SERVE_H */
