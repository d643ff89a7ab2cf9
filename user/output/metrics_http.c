// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The metrics server: opens the listening socket itself (clear errors, port 0 resolved), then
 * hands it to libmicrohttpd's internal polling thread, which answers from the registry. */
#define _GNU_SOURCE
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/socket.h>
#include <unistd.h>

#include <microhttpd.h>

#include "output/metrics_http.h"
#include "util/clock.h"
#include "util/hostport.h"
#include "util/http_serve.h"
#include "util/log.h"

#define LISTEN_BACKLOG 128
/* A scraper and the kubelet's probes need a few connections. The limits are far above that, so
 * that clients which connect and stay silent (or send half a request) cannot take every slot
 * from the liveness probe: the server polls (epoll) from one thread, so an idle connection costs
 * a socket and a small memory pool but no thread, and is closed after the timeout. One address
 * may hold half the slots. */
#define MAX_CONNECTIONS 256
#define MAX_CONNECTIONS_PER_IP 128
#define CONNECTION_MEMORY 16384 /* per connection: a GET and its headers */
#define CONNECTION_TIMEOUT_S METRICS_HTTP_CONNECTION_TIMEOUT_S

#define CONTENT_TYPE_TEXT "text/plain; charset=utf-8"
#define CONTENT_TYPE_METRICS "text/plain; version=0.0.4; charset=utf-8"

static enum MHD_Result reply(struct MHD_Connection *conn, unsigned int status, const char *type,
			     struct MHD_Response *resp)
{
	if (resp && status == MHD_HTTP_METHOD_NOT_ALLOWED)
		http_serve_header(resp, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
	return http_serve_reply(conn, status, type, resp);
}

static enum MHD_Result reply_text(struct MHD_Connection *conn, unsigned int status,
				  const char *text)
{
	struct MHD_Response *resp =
		http_serve_buffer(strlen(text), (void *)text, MHD_RESPMEM_MUST_COPY);

	return reply(conn, status, CONTENT_TYPE_TEXT, resp);
}

static enum MHD_Result reply_metrics(struct MHD_Connection *conn, const struct metrics *m)
{
	struct MHD_Response *resp;
	char *buf = NULL;
	size_t len = 0;
	FILE *f;
	int err;

	f = open_memstream(&buf, &len);
	if (!f)
		return reply_text(conn, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory\n");
	err = metrics_render(m, f);
	if (fclose(f) || err) {
		free(buf);
		return reply_text(conn, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory\n");
	}
	resp = http_serve_buffer(len, buf, MHD_RESPMEM_MUST_FREE);
	if (!resp)
		free(buf);
	return reply(conn, MHD_HTTP_OK, CONTENT_TYPE_METRICS, resp);
}

/* /healthz: a window was written recently (the run loop is not wedged); /readyz: that, and the
 * agent has started sampling. Judged on this thread, so a stuck run loop cannot answer "ok". */
static enum MHD_Result reply_health(struct MHD_Connection *conn, const struct metrics *m,
				    int readiness)
{
	uint64_t age;
	char text[96];

	if (!metrics_is_healthy(m, clock_mono_ns(), &age)) {
		snprintf(text, sizeof(text), "no window written for %llu s\n",
			 (unsigned long long)(age / NS_PER_S));
		return reply_text(conn, MHD_HTTP_SERVICE_UNAVAILABLE, text);
	}
	if (readiness && !metrics_is_ready(m))
		return reply_text(conn, MHD_HTTP_SERVICE_UNAVAILABLE, "not ready\n");
	return reply_text(conn, MHD_HTTP_OK, readiness ? "ready\n" : "ok\n");
}

static enum MHD_Result on_get(void *cls, struct MHD_Connection *conn, const char *url)
{
	struct metrics *m = cls;

	if (!strcmp(url, "/metrics"))
		return reply_metrics(conn, m);
	if (!strcmp(url, "/healthz"))
		return reply_health(conn, m, 0);
	if (!strcmp(url, "/readyz"))
		return reply_health(conn, m, 1);
	return reply_text(conn, MHD_HTTP_NOT_FOUND, "not found\n");
}

static enum MHD_Result on_not_allowed(struct MHD_Connection *conn)
{
	return reply_text(conn, MHD_HTTP_METHOD_NOT_ALLOWED, "method not allowed\n");
}

/* A bound, listening socket for ai, or -errno. */
static int listen_on(const struct addrinfo *ai, int any_address)
{
	int fd, one = 1, zero = 0, err;

	fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
	if (fd < 0)
		return -errno;
	/* A restarted agent must not wait for the old connections' TIME_WAIT. */
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	/* ":PORT" on IPv6 serves IPv4 clients too. */
	if (any_address && ai->ai_family == AF_INET6)
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero));
	if (bind(fd, ai->ai_addr, ai->ai_addrlen) || listen(fd, LISTEN_BACKLOG)) {
		err = -errno;
		close(fd);
		return err;
	}
	return fd;
}

/* Resolves addr and listens on its first address that works (for ":PORT", IPv6 first, as it
 * also takes IPv4). Returns the socket or -errno, logged. */
static int open_listener(const char *addr)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM,
				  .ai_flags = AI_PASSIVE | AI_NUMERICSERV };
	struct addrinfo *res, *ai;
	char host[256], service[8];
	int fd = -EADDRNOTAVAIL, rc, pass;
	unsigned int port;

	if (hostport_split(addr, host, sizeof(host), &port))
		return log_err(-EINVAL,
			       "--metrics-addr '%s': expected HOST:PORT, [IPv6]:PORT or "
			       ":PORT",
			       addr);
	snprintf(service, sizeof(service), "%u", port);
	rc = getaddrinfo(*host ? host : NULL, service, &hints, &res);
	if (rc)
		return log_err(-EADDRNOTAVAIL, "--metrics-addr '%s': resolve '%s': %s", addr, host,
			       rc == EAI_SYSTEM ? strerror(errno) : gai_strerror(rc));
	for (pass = *host ? 1 : 0; pass < 2 && fd < 0; pass++)
		for (ai = res; ai && fd < 0; ai = ai->ai_next)
			if (pass || ai->ai_family == AF_INET6)
				fd = listen_on(ai, !*host);
	freeaddrinfo(res);
	if (fd < 0)
		return log_err(fd, "--metrics-addr '%s': listen", addr);
	return fd;
}

struct http_server *metrics_http_start(struct metrics *m, const char *addr)
{
	static const struct http_serve_limits limits = {
		.max_connections = MAX_CONNECTIONS,
		.timeout_s = CONNECTION_TIMEOUT_S,
		.max_per_ip = MAX_CONNECTIONS_PER_IP,
		.connection_memory = CONNECTION_MEMORY,
	};
	static const struct http_serve_handlers handlers = { on_get, on_not_allowed };
	struct http_server *srv;
	int fd, err;

	fd = open_listener(addr);
	if (fd < 0) {
		errno = -fd;
		return NULL;
	}
	srv = http_server_start(fd, &limits, &handlers, m, "metrics server");
	if (!srv) {
		err = log_err(-errno, "--metrics-addr '%s': start the HTTP server", addr);
		close(fd);
		errno = -err;
		return NULL;
	}
	log_info("metrics server listening on %s (port %u)", addr, http_server_port(srv));
	return srv;
}
