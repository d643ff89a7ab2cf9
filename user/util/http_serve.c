// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* libmicrohttpd start-up and stop, bound ports, replies and log routing for the agent's HTTP
 * servers. */
#include <errno.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "util/http_serve.h"
#include "util/log.h"
#include "util/mhd_lib.h"

struct http_server {
	struct MHD_Daemon *daemon;
	unsigned int port;
	const struct http_serve_handlers *h;
	void *ctx;
};

/* libmicrohttpd's own messages (client errors, mostly) go through our rate-limited logger. */
static void on_mhd_log(void *cls, const char *fmt, va_list ap)
{
	char buf[512];
	size_t len;

	vsnprintf(buf, sizeof(buf), fmt, ap);
	len = strlen(buf);
	if (len && buf[len - 1] == '\n')
		buf[len - 1] = '\0';
	log_warn(0, "%s: %s", (const char *)cls, buf);
}

/* The local port of a bound socket, or 0 when it cannot be told. */
static unsigned int bound_port(int fd)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);

	if (getsockname(fd, (struct sockaddr *)&ss, &len))
		return 0;
	if (ss.ss_family == AF_INET6)
		return ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
	return ntohs(((struct sockaddr_in *)&ss)->sin_port);
}

static struct MHD_Daemon *daemon_start(const struct mhd_lib *mhd, int fd,
				       const struct http_serve_limits *lim,
				       MHD_AccessHandlerCallback fn, void *ctx, const char *name)
{
	struct MHD_OptionItem opts[3];
	size_t n = 0;

	/* The per-address and memory options only when they are set. */
	if (lim->max_per_ip)
		opts[n++] = (struct MHD_OptionItem){ MHD_OPTION_PER_IP_CONNECTION_LIMIT,
						     lim->max_per_ip, NULL };
	if (lim->connection_memory)
		opts[n++] = (struct MHD_OptionItem){ MHD_OPTION_CONNECTION_MEMORY_LIMIT,
						     (intptr_t)lim->connection_memory, NULL };
	opts[n] = (struct MHD_OptionItem){ MHD_OPTION_END, 0, NULL };
	errno = 0;
	return mhd->start_daemon(MHD_USE_AUTO_INTERNAL_THREAD | MHD_USE_ERROR_LOG, 0, NULL, NULL,
				 fn, ctx, MHD_OPTION_EXTERNAL_LOGGER, on_mhd_log, (void *)name,
				 MHD_OPTION_LISTEN_SOCKET, (MHD_socket)fd,
				 MHD_OPTION_CONNECTION_LIMIT, lim->max_connections,
				 MHD_OPTION_CONNECTION_TIMEOUT, lim->timeout_s, MHD_OPTION_ARRAY,
				 opts, MHD_OPTION_END);
}

/* libmicrohttpd's callback: the method picks the server's handler; the rest (protocol version,
 * request body, per-request state) is not used by servers that only read. */
static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
				  const char *method, const char *version, const char *upload_data,
				  size_t *upload_data_size, void **req_cls)
{
	const struct http_server *s = cls;

	(void)version;
	(void)upload_data;
	(void)upload_data_size;
	(void)req_cls;
	if (strcmp(method, MHD_HTTP_METHOD_GET) && strcmp(method, MHD_HTTP_METHOD_HEAD))
		return s->h->not_allowed(conn);
	return s->h->get(s->ctx, conn, url);
}

struct http_server *http_server_start(int fd, const struct http_serve_limits *lim,
				      const struct http_serve_handlers *h, void *ctx,
				      const char *name)
{
	const struct mhd_lib *mhd = mhd_lib();
	struct http_server *s;
	int err;

	if (!mhd)
		return NULL; /* errno set, the reason logged */
	s = calloc(1, sizeof(*s));
	if (!s) {
		errno = ENOMEM;
		return NULL;
	}
	s->port = bound_port(fd);
	s->h = h;
	s->ctx = ctx;
	s->daemon = daemon_start(mhd, fd, lim, on_request, s, name);
	if (!s->daemon) {
		err = errno ? errno : EIO;
		free(s);
		errno = err;
		return NULL;
	}
	return s;
}

unsigned int http_server_port(const struct http_server *s)
{
	return s->port;
}

void http_server_stop(struct http_server *s)
{
	if (!s)
		return;
	/* Also closes the listening socket handed over at the start. */
	mhd_lib()->stop_daemon(s->daemon); /* loaded: the server started */
	free(s);
}

enum MHD_Result http_serve_reply(struct MHD_Connection *conn, unsigned int status, const char *type,
				 struct MHD_Response *resp)
{
	const struct mhd_lib *mhd = mhd_lib(); /* loaded: a server called us */
	enum MHD_Result ret;

	if (!resp)
		return MHD_NO; /* out of memory: MHD closes the connection */
	mhd->add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	ret = mhd->queue_response(conn, status, resp);
	mhd->destroy_response(resp);
	return ret;
}

struct MHD_Response *http_serve_buffer(size_t len, void *buf, enum MHD_ResponseMemoryMode mode)
{
	return mhd_lib()->create_response_from_buffer(len, buf, mode);
}

void http_serve_header(struct MHD_Response *resp, const char *name, const char *value)
{
	mhd_lib()->add_response_header(resp, name, value);
}

const char *http_serve_query_arg(struct MHD_Connection *conn, const char *key)
{
	return mhd_lib()->lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, key);
}
