// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* libmicrohttpd start-up, replies, log routing and bound ports for the agent's HTTP servers. */
#include <errno.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "util/http_serve.h"
#include "util/log.h"

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

struct MHD_Daemon *http_serve_start(int fd, const struct http_serve_limits *lim,
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
	return MHD_start_daemon(MHD_USE_AUTO_INTERNAL_THREAD | MHD_USE_ERROR_LOG, 0, NULL, NULL, fn,
				ctx, MHD_OPTION_EXTERNAL_LOGGER, on_mhd_log, (void *)name,
				MHD_OPTION_LISTEN_SOCKET, (MHD_socket)fd,
				MHD_OPTION_CONNECTION_LIMIT, lim->max_connections,
				MHD_OPTION_CONNECTION_TIMEOUT, lim->timeout_s, MHD_OPTION_ARRAY,
				opts, MHD_OPTION_END);
}

enum MHD_Result http_serve_reply(struct MHD_Connection *conn, unsigned int status, const char *type,
				 struct MHD_Response *resp)
{
	enum MHD_Result ret;

	if (!resp)
		return MHD_NO; /* out of memory: MHD closes the connection */
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	ret = MHD_queue_response(conn, status, resp);
	MHD_destroy_response(resp);
	return ret;
}

unsigned int http_serve_bound_port(int fd)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);

	if (getsockname(fd, (struct sockaddr *)&ss, &len))
		return 0;
	if (ss.ss_family == AF_INET6)
		return ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
	return ntohs(((struct sockaddr_in *)&ss)->sin_port);
}
