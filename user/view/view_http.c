// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The viewer's HTTP routes over libmicrohttpd: embedded files and the JSON API. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <arpa/inet.h>
#include <sys/socket.h>
#include <unistd.h>
#include <microhttpd.h>

#include "util/http_serve.h"
#include "util/log.h"
#include "view/profile_query.h"
#include "view/span_query.h"
#include "view/view_http.h"
#include "view/view_status.h"
#include "view/web_assets.h"

#define MAX_CONNECTIONS 64
#define CONNECTION_TIMEOUT_S 30
#define JSON_TYPE "application/json; charset=utf-8"

static enum MHD_Result reply(struct MHD_Connection *conn, unsigned int status, const char *type,
			     struct MHD_Response *resp)
{
	if (resp) {
		http_serve_header(resp, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
		/* Everything the page needs comes from here: no other origin may be loaded. */
		http_serve_header(resp, "Content-Security-Policy",
				  "default-src 'self'; img-src 'self' data:");
		http_serve_header(resp, "X-Content-Type-Options", "nosniff");
	}
	return http_serve_reply(conn, status, type, resp);
}

static enum MHD_Result reply_text(struct MHD_Connection *conn, unsigned int status,
				  const char *text)
{
	return reply(conn, status, "text/plain; charset=utf-8",
		     http_serve_buffer(strlen(text), (void *)text, MHD_RESPMEM_MUST_COPY));
}

static const char *type_of(const char *path)
{
	const char *dot = strrchr(path, '.');

	if (dot && !strcmp(dot, ".js"))
		return "text/javascript; charset=utf-8";
	if (dot && !strcmp(dot, ".css"))
		return "text/css; charset=utf-8";
	if (dot && !strcmp(dot, ".html"))
		return "text/html; charset=utf-8";
	return "application/octet-stream";
}

static enum MHD_Result reply_asset(struct MHD_Connection *conn, const char *url)
{
	size_t i;

	if (!strcmp(url, "/"))
		url = "/index.html";
	for (i = 0; i < web_assets_count; i++)
		if (!strcmp(url, web_assets[i].path))
			return reply(conn, MHD_HTTP_OK, type_of(url),
				     http_serve_buffer(web_assets[i].len,
						       (void *)web_assets[i].data,
						       MHD_RESPMEM_PERSISTENT));
	return reply_text(conn, MHD_HTTP_NOT_FOUND, "not found\n");
}

/* A JSON answer written by fn into memory. */
typedef int (*json_fn)(struct view_store *vs, struct MHD_Connection *conn, FILE *f);

static enum MHD_Result reply_json(struct MHD_Connection *conn, struct view_store *vs, json_fn fn)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	int err;

	if (!f)
		return reply_text(conn, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory\n");
	err = fn(vs, conn, f);
	if (fclose(f) && !err)
		err = -ENOMEM;
	if (err) {
		free(buf);
		if (err == -ENOENT)
			return reply_text(conn, MHD_HTTP_NOT_FOUND, "no such span or span name\n");
		if (err == -EINVAL)
			return reply_text(conn, MHD_HTTP_BAD_REQUEST, "bad query\n");
		return reply_text(conn, MHD_HTTP_INTERNAL_SERVER_ERROR,
				  err == -ENOMEM ? "out of memory\n" : "failed (see the log)\n");
	}
	return reply(conn, MHD_HTTP_OK, JSON_TYPE,
		     http_serve_buffer(len, buf, MHD_RESPMEM_MUST_FREE));
}

static const char *arg(struct MHD_Connection *conn, const char *key)
{
	return http_serve_query_arg(conn, key);
}

static size_t arg_size(struct MHD_Connection *conn, const char *key, size_t def, size_t max)
{
	const char *s = arg(conn, key);
	char *end;
	unsigned long long v;

	if (!s || !*s)
		return def;
	v = strtoull(s, &end, 10);
	return *end ? def : v > max ? max : (size_t)v;
}

static int json_spans(struct view_store *vs, struct MHD_Connection *conn, FILE *f)
{
	struct span_query q = { 0 };
	const char *order = arg(conn, "order"), *sort = arg(conn, "sort");

	q.service = arg(conn, "service");
	q.name = arg(conn, "name");
	q.trace = arg(conn, "trace");
	if (sort && *sort && span_query_parse_sort(sort, &q.sort))
		return -EINVAL;
	q.ascending = order && !strcmp(order, "asc");
	q.offset = arg_size(conn, "offset", 0, SIZE_MAX / 2);
	q.limit = arg_size(conn, "limit", 200, VIEW_HTTP_MAX_ROWS);
	return span_query_write(vs, &q, f);
}

static int json_names(struct view_store *vs, struct MHD_Connection *conn, FILE *f)
{
	(void)conn;
	span_query_write_names(vs, f);
	return 0;
}

static int json_profile(struct view_store *vs, struct MHD_Connection *conn, FILE *f)
{
	struct profile_query q = { 0 };
	const char *id = arg(conn, "span_id");
	char *end;

	if (id && *id) {
		q.span_id = strtoull(id, &end, 16);
		if (*end || strlen(id) != 16 || !q.span_id)
			return -EINVAL;
	} else {
		q.service = arg(conn, "service");
		q.name = arg(conn, "name");
		if (!q.name)
			return -EINVAL;
	}
	return profile_query_write(vs, &q, f);
}

static int json_status(struct view_store *vs, struct MHD_Connection *conn, FILE *f)
{
	(void)conn;
	view_status_write(vs, f);
	return 0;
}

static int json_reload(struct view_store *vs, struct MHD_Connection *conn, FILE *f)
{
	int err = view_store_reload(vs);

	return err ? (err == -ENOMEM ? err : -EIO) : json_status(vs, conn, f);
}

static enum MHD_Result on_get(void *cls, struct MHD_Connection *conn, const char *url)
{
	struct view_store *vs = cls;

	if (!strcmp(url, "/api/spans"))
		return reply_json(conn, vs, json_spans);
	if (!strcmp(url, "/api/names"))
		return reply_json(conn, vs, json_names);
	if (!strcmp(url, "/api/profile"))
		return reply_json(conn, vs, json_profile);
	if (!strcmp(url, "/api/status"))
		return reply_json(conn, vs, json_status);
	if (!strcmp(url, "/api/reload"))
		return reply_json(conn, vs, json_reload);
	return reply_asset(conn, url);
}

static enum MHD_Result on_not_allowed(struct MHD_Connection *conn)
{
	return reply_text(conn, MHD_HTTP_METHOD_NOT_ALLOWED, "method not allowed\n");
}

/* A listening socket on host (a numeric IPv4 or IPv6 address) and port, or -errno. */
static int listen_on(const char *host, unsigned int port)
{
	struct sockaddr_storage ss = { 0 };
	struct sockaddr_in *in4 = (struct sockaddr_in *)&ss;
	struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&ss;
	socklen_t len;
	int fd, one = 1, err;

	if (inet_pton(AF_INET, host, &in4->sin_addr) == 1) {
		in4->sin_family = AF_INET;
		in4->sin_port = htons((uint16_t)port);
		len = sizeof(*in4);
	} else if (inet_pton(AF_INET6, host, &in6->sin6_addr) == 1) {
		in6->sin6_family = AF_INET6;
		in6->sin6_port = htons((uint16_t)port);
		len = sizeof(*in6);
	} else {
		return -EINVAL;
	}
	fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&ss, len) || listen(fd, 64)) {
		err = -errno;
		close(fd);
		return err;
	}
	return fd;
}

struct http_server *view_http_start(struct view_store *vs, const char *host, unsigned int port)
{
	static const struct http_serve_limits limits = {
		.max_connections = MAX_CONNECTIONS,
		.timeout_s = CONNECTION_TIMEOUT_S,
	};
	static const struct http_serve_handlers handlers = { on_get, on_not_allowed };
	struct http_server *srv;
	int fd, err;

	fd = listen_on(host, port);
	if (fd < 0) {
		err = log_err(fd, "view: listen on %s port %u%s", host, port,
			      fd == -EINVAL ? " (not a numeric IPv4 or IPv6 address)" : "");
		errno = -err;
		return NULL;
	}
	srv = http_server_start(fd, &limits, &handlers, vs, "view server");
	if (!srv) {
		err = log_err(-errno, "view: start the HTTP server on %s port %u", host, port);
		close(fd);
		errno = -err;
		return NULL;
	}
	return srv;
}
