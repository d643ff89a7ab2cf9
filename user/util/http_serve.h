/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* What the agent's two HTTP servers (the metrics server and the span viewer) share over
 * libmicrohttpd (loaded by the first server, util/mhd_lib): a server running its polling thread on a socket we opened, its port, stopping
 * it, queueing a reply, and routing libmicrohttpd's messages to our logger. */
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

/* A running server: libmicrohttpd's daemon, the port its socket is bound to, and its handlers. */
struct http_server;

/* What a server answers: get(ctx, conn, url) a GET or HEAD of url, not_allowed(conn) any other
 * method (405). */
struct http_serve_handlers {
	enum MHD_Result (*get)(void *ctx, struct MHD_Connection *conn, const char *url);
	enum MHD_Result (*not_allowed)(struct MHD_Connection *conn);
};

/* Starts libmicrohttpd's internal polling thread on the bound, listening socket fd, answering
 * with h (not copied: it must outlive the server) and ctx; name ("metrics server") prefixes its
 * log lines. On success the server owns fd (http_server_stop() closes it). Returns NULL with
 * errno set on failure; fd stays the caller's. */
struct http_server *http_server_start(int fd, const struct http_serve_limits *lim,
				      const struct http_serve_handlers *h, void *ctx,
				      const char *name);

/* The local port the server listens on (the one picked when it was bound to port 0), or 0 when
 * it cannot be told. */
unsigned int http_server_port(const struct http_server *s);

/* Stops the thread, closes the socket and frees s. NULL-safe. */
void http_server_stop(struct http_server *s);

/* Queues resp (NULL: out of memory, the connection is closed) with status and Content-Type
 * type, and releases it. */
enum MHD_Result http_serve_reply(struct MHD_Connection *conn, unsigned int status, const char *type,
				 struct MHD_Response *resp);

/* A response holding the len bytes at buf (mode: whether libmicrohttpd copies, frees or only
 * reads them), or NULL when out of memory. Only from a running server's handlers. */
struct MHD_Response *http_serve_buffer(size_t len, void *buf, enum MHD_ResponseMemoryMode mode);

/* Adds the header name: value to resp. Only from a running server's handlers. */
void http_serve_header(struct MHD_Response *resp, const char *name, const char *value);

/* The value of the query argument key of the request on conn, or NULL. Only from a running
 * server's handlers. */
const char *http_serve_query_arg(struct MHD_Connection *conn, const char *key);

#endif /* SPANPROF_HTTP_SERVE_H */
