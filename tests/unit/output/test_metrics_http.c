// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Unit tests for user/output/metrics_http.c: a real server on 127.0.0.1 (port 0: the kernel picks a
 * free one), scraped with libcurl: /metrics, /healthz, /readyz, 404, 405, bad addresses. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <curl/curl.h>

#include "output/metrics_http.h"
#include "util/log.h"
#include "curl_group.h"

struct server {
	struct metrics *m;
	struct http_server *h;
	char base[64];
};

struct http_reply {
	long status;
	char content_type[128];
	char *body;
	size_t len;
};

static int setup(void **state)
{
	struct server *s = calloc(1, sizeof(*s));

	if (!s)
		return -1;
	s->m = metrics_new();
	s->h = s->m ? metrics_http_start(s->m, "127.0.0.1:0") : NULL;
	if (!s->h)
		return -1;
	snprintf(s->base, sizeof(s->base), "http://127.0.0.1:%u", http_server_port(s->h));
	*state = s;
	return 0;
}

static int teardown(void **state)
{
	struct server *s = *state;

	http_server_stop(s->h);
	metrics_free(s->m);
	free(s);
	return 0;
}

static size_t on_body(char *data, size_t size, size_t n, void *arg)
{
	struct http_reply *r = arg;
	char *grown = realloc(r->body, r->len + size * n + 1);

	if (!grown)
		return 0;
	memcpy(grown + r->len, data, size * n);
	r->len += size * n;
	grown[r->len] = '\0';
	r->body = grown;
	return size * n;
}

/* Requests base+path with method (NULL: GET); fills r (free r->body). */
static void request(const struct server *s, const char *method, const char *path,
		    struct http_reply *r)
{
	char url[256];
	char *type = NULL;
	CURL *c = curl_easy_init();

	assert_non_null(c);
	memset(r, 0, sizeof(*r));
	snprintf(url, sizeof(url), "%s%s", s->base, path);
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, r);
	curl_easy_setopt(c, CURLOPT_TIMEOUT, 5L);
	if (method)
		curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
	assert_int_equal(curl_easy_perform(c), CURLE_OK);
	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &r->status);
	curl_easy_getinfo(c, CURLINFO_CONTENT_TYPE, &type);
	snprintf(r->content_type, sizeof(r->content_type), "%s", type ? type : "");
	curl_easy_cleanup(c);
}

static void test_metrics_http_serves_prometheus_text_that_follows_the_setters(void **state)
{
	struct server *s = *state;
	struct http_reply r;

	request(s, NULL, "/metrics", &r);
	assert_int_equal(r.status, 200);
	assert_string_equal(r.content_type, "text/plain; version=0.0.4; charset=utf-8");
	assert_true(!strncmp(r.body, "# HELP spanprof_", 16));
	assert_non_null(strstr(r.body, "# TYPE spanprof_samples_total counter\n"
				       "spanprof_samples_total 0\n"));
	free(r.body);

	metrics_add(s->m, METRIC_SAMPLES, 1234);
	metrics_add_at(s->m, METRIC_UPLOADS, METRIC_UPLOAD_OK, 3);
	metrics_set(s->m, METRIC_PROCESSES_TRACKED, 17);
	request(s, NULL, "/metrics", &r);
	assert_int_equal(r.status, 200);
	assert_non_null(strstr(r.body, "\nspanprof_samples_total 1234\n"));
	assert_non_null(strstr(r.body, "\nspanprof_uploads_total{result=\"ok\"} 3\n"));
	assert_non_null(strstr(r.body, "\nspanprof_processes_tracked 17\n"));
	assert_int_equal(r.body[r.len - 1], '\n');
	free(r.body);
}

static void test_metrics_http_readyz_flips_when_the_agent_is_ready(void **state)
{
	struct server *s = *state;
	struct http_reply r;

	request(s, NULL, "/healthz", &r);
	assert_int_equal(r.status, 200);
	free(r.body);
	request(s, NULL, "/readyz", &r);
	assert_int_equal(r.status, 503);
	free(r.body);
	metrics_set_ready(s->m, 1);
	request(s, NULL, "/readyz", &r);
	assert_int_equal(r.status, 200);
	assert_string_equal(r.body, "ready\n");
	free(r.body);
	request(s, NULL, "/healthz", &r);
	assert_int_equal(r.status, 200);
	free(r.body);
}

static void test_metrics_http_answers_404_and_405(void **state)
{
	struct server *s = *state;
	struct http_reply r;

	request(s, NULL, "/", &r);
	assert_int_equal(r.status, 404);
	free(r.body);
	request(s, NULL, "/metrics/extra", &r);
	assert_int_equal(r.status, 404);
	free(r.body);
	request(s, "POST", "/metrics", &r);
	assert_int_equal(r.status, 405);
	free(r.body);
}

/* Errors: start fails with the right errno, and the log line names the address and cause. */
static void expect_start_error(struct metrics *m, const char *addr, int err, const char *text)
{
	char *log = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&log, &len);

	assert_non_null(f);
	log_set_output(f);
	errno = 0;
	assert_null(metrics_http_start(m, addr));
	assert_int_equal(errno, err);
	log_set_output(NULL);
	fclose(f);
	if (!strstr(log, text) || !strstr(log, "level=error"))
		fail_msg("log for '%s' was '%s', expected it to mention '%s'", addr, log, text);
	free(log);
}

static void test_metrics_http_reports_a_bad_address_clearly(void **state)
{
	struct server *s = *state;
	char busy[64];

	expect_start_error(s->m, "9100", EINVAL, "--metrics-addr '9100': expected HOST:PORT");
	expect_start_error(s->m, "127.0.0.1:70000", EINVAL, "expected HOST:PORT");
	expect_start_error(s->m, "::1:9100", EINVAL, "[IPv6]:PORT");
	expect_start_error(s->m, "no-such-host.invalid:9100", EADDRNOTAVAIL,
			   "resolve 'no-such-host.invalid'");
	snprintf(busy, sizeof(busy), "127.0.0.1:%u", http_server_port(s->h));
	expect_start_error(s->m, busy, EADDRINUSE, "err=\"Address already in use\"");
}

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

/* A TCP connection to the server; with `partial`, a request line without the end of headers. */
static int connect_idle(const struct server *s, const char *partial)
{
	struct sockaddr_in sin = { .sin_family = AF_INET,
				   .sin_port = htons(http_server_port(s->h)),
				   .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	assert_true(fd >= 0);
	assert_int_equal(connect(fd, (struct sockaddr *)&sin, sizeof(sin)), 0);
	if (partial)
		assert_int_equal(write(fd, partial, strlen(partial)), (ssize_t)strlen(partial));
	return fd;
}

/* The chart's liveness probe uses /healthz: clients that connect and send nothing (or half a
 * request) must not hold every connection. 16 used to be enough to block it until they left. */
static void test_metrics_http_answers_while_32_connections_idle(void **state)
{
	struct server *s = *state;
	struct http_reply r;
	int fds[32], i;
	int64_t t0;
	char c;

	for (i = 0; i < 32; i++)
		fds[i] = connect_idle(s, i % 2 ? "GET /healthz HTTP/1.1\r\nHost: x\r\n" : NULL);
	t0 = now_ms();
	request(s, NULL, "/healthz", &r);
	assert_int_equal(r.status, 200);
	free(r.body);
	request(s, NULL, "/metrics", &r);
	assert_int_equal(r.status, 200);
	free(r.body);
	metrics_set_ready(s->m, 1);
	request(s, NULL, "/readyz", &r);
	assert_int_equal(r.status, 200);
	free(r.body);
	/* Answered at once, not after the idle ones timed out. */
	assert_true(now_ms() - t0 < METRICS_HTTP_CONNECTION_TIMEOUT_S * 1000 / 2);
	/* And the idle ones are closed by the server after its per-connection timeout. */
	assert_int_equal(fcntl(fds[0], F_SETFL, 0), 0);
	assert_int_equal(read(fds[0], &c, 1), 0);
	assert_true(now_ms() - t0 < (METRICS_HTTP_CONNECTION_TIMEOUT_S + 5) * 1000);
	for (i = 0; i < 32; i++)
		close(fds[i]);
}

static void test_metrics_http_stop_closes_the_port(void **state)
{
	struct server *s = *state;
	struct sockaddr_in sin = { .sin_family = AF_INET,
				   .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	int fd;

	sin.sin_port = htons(http_server_port(s->h));
	http_server_stop(s->h);
	s->h = NULL;
	fd = socket(AF_INET, SOCK_STREAM, 0);
	assert_true(fd >= 0);
	assert_int_equal(connect(fd, (struct sockaddr *)&sin, sizeof(sin)), -1);
	assert_int_equal(errno, ECONNREFUSED);
	close(fd);
}

#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_metrics_http_serves_prometheus_text_that_follows_the_setters),
		T(test_metrics_http_readyz_flips_when_the_agent_is_ready),
		T(test_metrics_http_answers_404_and_405),
		T(test_metrics_http_reports_a_bad_address_clearly),
		T(test_metrics_http_stop_closes_the_port),
		T(test_metrics_http_answers_while_32_connections_idle),
	};

	return cmocka_run_group_tests_name("metrics_http", tests, curl_group_setup,
					   curl_group_teardown);
}
