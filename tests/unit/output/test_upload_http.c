// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Unit tests for the HTTP client against a receiver on 127.0.0.1: how each answer is
 * classified, timeouts, aborts, Retry-After, connection reuse, and TLS (CA file, unknown
 * certificate, insecure mode, client certificate) with certificates made by openssl at run time. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <curl/curl.h>

#include "output/upload_http.h"
#include "push_receiver.h"
#include "tmpdir.h"

static const uint8_t body[] = "not a real push request";

struct tls_files {
	char *dir;
	char ca[4200], srv_cert[4200], srv_key[4200], cli_cert[4200], cli_key[4200],
		other_key[4200];
	char *srv_cert_pem, *srv_key_pem;
};

static struct tls_files tls; /* made once per run by group_setup; dir NULL without openssl */

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

/* Requests that are not about timeouts get this much time: a TLS handshake with both CPUs busy
 * once took longer than 1 s. */
#define NO_TIMEOUT_MS 30000

static void options(struct upload_options *o, const char *url)
{
	memset(o, 0, sizeof(*o));
	o->server_url = url;
	o->connect_timeout_ms = NO_TIMEOUT_MS; /* covers the TLS handshake too */
}

static struct upload_http *new_http(const struct upload_options *o, const atomic_int *abort)
{
	struct upload_http *h = upload_http_new(o, abort);

	assert_non_null(h);
	return h;
}

static void post(struct upload_http *h, unsigned int timeout_ms, struct upload_http_result *res)
{
	assert_int_equal(upload_http_post(h, body, sizeof(body), timeout_ms, res), 0);
}

static int setup(void **state)
{
	*state = push_receiver_new(0);
	return *state ? 0 : -1;
}

static int teardown(void **state)
{
	push_receiver_free(*state);
	return 0;
}

/* A 3xx that cannot be followed (here: no Location) keeps the data for a retry. */
static void test_upload_http_classifies_server_answers(void **state)
{
	static const struct {
		int status;
		enum upload_http_verdict verdict;
	} cases[] = {
		{ 200, UPLOAD_HTTP_OK },     { 204, UPLOAD_HTTP_OK },
		{ 500, UPLOAD_HTTP_RETRY },  { 503, UPLOAD_HTTP_RETRY },
		{ 429, UPLOAD_HTTP_RETRY },  { 408, UPLOAD_HTTP_RETRY },
		{ 400, UPLOAD_HTTP_REJECT }, { 401, UPLOAD_HTTP_REJECT },
		{ 404, UPLOAD_HTTP_REJECT }, { 413, UPLOAD_HTTP_REJECT },
		{ 301, UPLOAD_HTTP_RETRY },  { 302, UPLOAD_HTTP_RETRY },
		{ 307, UPLOAD_HTTP_RETRY },  { 304, UPLOAD_HTTP_RETRY },
	};
	struct push_receiver *rx = *state;
	struct upload_http_result res;
	struct upload_options o;
	struct upload_http *h;
	size_t i;

	options(&o, push_receiver_url(rx));
	h = new_http(&o, NULL);
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		push_receiver_answer(rx, cases[i].status, 1, "why");
		post(h, NO_TIMEOUT_MS, &res);
		assert_int_equal(res.curl_code, CURLE_OK);
		assert_int_equal(res.status, cases[i].status);
		assert_int_equal(res.verdict, cases[i].verdict);
		if (cases[i].status != 204 && cases[i].status != 304)
			assert_string_equal(res.message, "why");
	}
	assert_int_equal(push_receiver_count(rx), sizeof(cases) / sizeof(cases[0]));
	upload_http_free(h);
}

/* A server that moved (here: to another port) gets the POST with its body and headers after
 * every kind of redirect, and the push counts as delivered. */
static void test_upload_http_follows_redirects_keeping_the_post(void **state)
{
	static const int statuses[] = { 301, 302, 303, 307, 308 };
	struct push_receiver *old = *state, *moved = push_receiver_new(0);
	const struct push_record *rec;
	struct upload_http_result res;
	const char *headers[] = { "X-Custom: kept" };
	struct upload_options o;
	struct upload_http *h;
	size_t i;

	assert_non_null(moved);
	push_receiver_set_location(old, push_receiver_url(moved));
	options(&o, push_receiver_url(old));
	o.headers = headers;
	o.nheaders = 1;
	h = new_http(&o, NULL);
	for (i = 0; i < sizeof(statuses) / sizeof(statuses[0]); i++) {
		push_receiver_answer(old, statuses[i], 1, NULL);
		post(h, 5000, &res);
		assert_int_equal(res.curl_code, CURLE_OK);
		assert_int_equal(res.status, 200);
		assert_int_equal(res.verdict, UPLOAD_HTTP_OK);
		rec = push_receiver_record(moved, i);
		assert_non_null(rec);
		assert_string_equal(rec->method, "POST");
		assert_string_equal(rec->path, "/push.v1.PusherService/Push");
		assert_int_equal(rec->body_len, sizeof(body));
		assert_string_equal(push_record_header(rec, "X-Custom"), "kept");
	}
	assert_int_equal(push_receiver_count(old), 5);
	assert_int_equal(push_receiver_count(moved), 5);
	upload_http_free(h);
	push_receiver_free(moved);
}

/* A redirect loop ends after a few hops as a retry, never as a drop. */
static void test_upload_http_redirect_loop_is_retried(void **state)
{
	struct push_receiver *rx = *state;
	struct upload_http_result res;
	struct upload_options o;
	struct upload_http *h;

	push_receiver_set_location(rx, push_receiver_url(rx));
	push_receiver_answer(rx, 302, 0, NULL);
	options(&o, push_receiver_url(rx));
	h = new_http(&o, NULL);
	post(h, 5000, &res);
	assert_int_equal(res.curl_code, CURLE_TOO_MANY_REDIRECTS);
	assert_int_equal(res.verdict, UPLOAD_HTTP_RETRY);
	assert_int_equal(push_receiver_count(rx), UPLOAD_HTTP_MAX_REDIRECTS + 1);
	upload_http_free(h);
}

static void test_upload_http_keeps_a_bounded_printable_excerpt(void **state)
{
	struct push_receiver *rx = *state;
	struct upload_http_result res;
	struct upload_options o;
	struct upload_http *h;
	char *msg = malloc(10001);
	size_t i;

	assert_non_null(msg);
	for (i = 0; i < 10000; i++)
		msg[i] = i % 50 == 49 ? '\n' : 'a' + i % 26;
	msg[10000] = '\0';
	push_receiver_answer(rx, 400, 1, msg);
	options(&o, push_receiver_url(rx));
	h = new_http(&o, NULL);
	post(h, NO_TIMEOUT_MS, &res);
	assert_int_equal(res.verdict, UPLOAD_HTTP_REJECT);
	assert_int_equal(strlen(res.message), UPLOAD_HTTP_MESSAGE_MAX - 1);
	assert_memory_equal(res.message, msg, 49);
	for (i = 0; res.message[i]; i++)
		assert_true(res.message[i] >= 0x20 && res.message[i] <= 0x7e);
	upload_http_free(h);
	free(msg);
}

static void test_upload_http_reports_refused_connection_as_retry(void **state)
{
	struct push_receiver *rx = *state;
	struct upload_http_result res;
	struct upload_options o;
	struct upload_http *h;
	char url[64];

	snprintf(url, sizeof(url), "%s", push_receiver_url(rx));
	push_receiver_free(rx);
	*state = NULL;
	options(&o, url);
	h = new_http(&o, NULL);
	post(h, NO_TIMEOUT_MS, &res);
	assert_int_equal(res.verdict, UPLOAD_HTTP_RETRY);
	assert_int_equal(res.status, 0);
	assert_int_equal(res.curl_code, CURLE_COULDNT_CONNECT);
	assert_true(strlen(res.message) > 0);
	upload_http_free(h);
}

static void test_upload_http_times_out_on_a_hanging_server(void **state)
{
	struct push_receiver *rx = *state;
	struct upload_http_result res;
	struct upload_options o;
	struct upload_http *h;
	int64_t t0;

	push_receiver_answer(rx, PUSH_RECEIVER_HANG, 1, NULL);
	options(&o, push_receiver_url(rx));
	h = new_http(&o, NULL);
	t0 = now_ms();
	post(h, 200, &res);
	/* Well before the hanging receiver would ever answer; generous for a loaded machine. */
	assert_true(now_ms() - t0 >= 200 && now_ms() - t0 < 10000);
	assert_int_equal(res.verdict, UPLOAD_HTTP_RETRY);
	assert_int_equal(res.curl_code, CURLE_OPERATION_TIMEDOUT);
	push_receiver_release(rx);
	upload_http_free(h);
}

static void *raise_after_100ms(void *arg)
{
	usleep(100000);
	atomic_store((atomic_int *)arg, 1);
	return NULL;
}

static void test_upload_http_gives_up_when_aborted(void **state)
{
	struct push_receiver *rx = *state;
	struct upload_http_result res;
	atomic_int abort_flag = 0;
	struct upload_options o;
	struct upload_http *h;
	pthread_t t;
	int64_t t0;

	push_receiver_answer(rx, PUSH_RECEIVER_HANG, 1, NULL);
	options(&o, push_receiver_url(rx));
	h = new_http(&o, &abort_flag);
	assert_int_equal(pthread_create(&t, NULL, raise_after_100ms, &abort_flag), 0);
	t0 = now_ms();
	post(h, 20000, &res);
	pthread_join(t, NULL);
	/* libcurl asks about once a second while idle: far sooner than the 20 s timeout, even on a
	 * loaded machine. */
	assert_true(now_ms() - t0 < 10000);
	assert_int_equal(res.curl_code, CURLE_ABORTED_BY_CALLBACK);
	assert_int_equal(res.verdict, UPLOAD_HTTP_RETRY);
	push_receiver_release(rx);
	upload_http_free(h);
}

static void test_upload_http_reads_retry_after(void **state)
{
	struct push_receiver *rx = *state;
	struct upload_http_result res;
	struct upload_options o;
	struct upload_http *h;

	push_receiver_set_retry_after(rx, 7);
	push_receiver_answer(rx, 503, 1, NULL);
	options(&o, push_receiver_url(rx));
	h = new_http(&o, NULL);
	post(h, NO_TIMEOUT_MS, &res);
	assert_int_equal(res.verdict, UPLOAD_HTTP_RETRY);
	assert_int_equal(res.retry_after_ms, 7000);
	post(h, NO_TIMEOUT_MS, &res); /* 200 now: nothing left over from the last answer */
	assert_int_equal(res.verdict, UPLOAD_HTTP_OK);
	assert_int_equal(res.retry_after_ms, 0);
	upload_http_free(h);
}

static void test_upload_http_reuses_the_connection(void **state)
{
	struct push_receiver *rx = *state;
	struct upload_http_result res;
	struct upload_options o;
	struct upload_http *h;
	int i;

	options(&o, push_receiver_url(rx));
	h = new_http(&o, NULL);
	for (i = 0; i < 4; i++) {
		push_receiver_answer(rx, i == 1 ? 503 : 200, 1, NULL);
		post(h, NO_TIMEOUT_MS, &res);
	}
	assert_int_equal(push_receiver_count(rx), 4);
	assert_int_equal(push_receiver_connections(rx), 1);
	upload_http_free(h);
}

static void test_upload_http_log_url_hides_credentials(void **state)
{
	struct upload_options o;
	struct upload_http *h;

	(void)state;
	options(&o, "https://user:pa55@pyro.example:4040/base/");
	h = new_http(&o, NULL);
	assert_string_equal(upload_http_url(h),
			    "https://pyro.example:4040/base/push.v1.PusherService/Push");
	upload_http_free(h);
}

/* --- TLS ------------------------------------------------------------------------------------ */

static int run(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int run(const char *fmt, ...)
{
	char cmd[8192];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	return system(cmd);
}

static char *slurp(const char *path)
{
	char *buf = calloc(1, 65536);
	FILE *f = fopen(path, "r");

	if (!buf || !f) {
		free(buf);
		if (f)
			fclose(f);
		return NULL;
	}
	if (fread(buf, 1, 65535, f) == 0) {
		free(buf);
		buf = NULL;
	}
	fclose(f);
	return buf;
}

/* A CA, a server certificate for 127.0.0.1 and a client certificate, all signed by the CA;
 * plus an unrelated key. EC keys keep this fast. */
static int make_certs(void)
{
	const char *d = tls.dir;
	const char *ec = "-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes";

	snprintf(tls.ca, sizeof(tls.ca), "%s/ca.pem", d);
	snprintf(tls.srv_cert, sizeof(tls.srv_cert), "%s/srv.pem", d);
	snprintf(tls.srv_key, sizeof(tls.srv_key), "%s/srv.key", d);
	snprintf(tls.cli_cert, sizeof(tls.cli_cert), "%s/cli.pem", d);
	snprintf(tls.cli_key, sizeof(tls.cli_key), "%s/cli.key", d);
	snprintf(tls.other_key, sizeof(tls.other_key), "%s/other.key", d);
	if (run("cd '%s' && printf 'subjectAltName=IP:127.0.0.1\\n' > san.ext &&"
		" openssl req -x509 %s -keyout ca.key -out ca.pem -days 2 -subj /CN=spanprof-test-ca"
		" 2>/dev/null &&"
		" openssl req %s -keyout srv.key -out srv.csr -subj /CN=127.0.0.1 2>/dev/null &&"
		" openssl x509 -req -in srv.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 2"
		" -extfile san.ext -out srv.pem 2>/dev/null &&"
		" openssl req %s -keyout cli.key -out cli.csr -subj /CN=agent 2>/dev/null &&"
		" openssl x509 -req -in cli.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 2"
		" -out cli.pem 2>/dev/null &&"
		" openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:prime256v1"
		" -out other.key 2>/dev/null",
		d, ec, ec, ec))
		return -1;
	tls.srv_cert_pem = slurp(tls.srv_cert);
	tls.srv_key_pem = slurp(tls.srv_key);
	return tls.srv_cert_pem && tls.srv_key_pem ? 0 : -1;
}

static int setup_tls(void **state)
{
	if (!tls.dir) {
		*state = NULL;
		return 0;
	}
	*state = push_receiver_new_tls(0, tls.srv_cert_pem, tls.srv_key_pem);
	return *state ? 0 : -1;
}

static struct push_receiver *tls_receiver(void **state)
{
	if (!*state) {
		print_message("openssl not available, skipping TLS test\n");
		skip();
	}
	return *state;
}

static void test_upload_http_verifies_server_with_ca_file(void **state)
{
	struct push_receiver *rx = tls_receiver(state);
	struct upload_http_result res;
	struct upload_options o;
	struct upload_http *h;

	options(&o, push_receiver_url(rx));
	o.ca_file = tls.ca;
	h = new_http(&o, NULL);
	post(h, NO_TIMEOUT_MS, &res);
	assert_int_equal(res.curl_code, CURLE_OK);
	assert_int_equal(res.verdict, UPLOAD_HTTP_OK);
	assert_int_equal(push_receiver_count(rx), 1);
	upload_http_free(h);
}

static void test_upload_http_refuses_an_unknown_server_certificate(void **state)
{
	struct push_receiver *rx = tls_receiver(state);
	struct upload_http_result res;
	struct upload_options o;
	struct upload_http *h;

	options(&o, push_receiver_url(rx)); /* system CAs only: ours is unknown */
	h = new_http(&o, NULL);
	post(h, NO_TIMEOUT_MS, &res);
	assert_int_equal(res.curl_code, CURLE_PEER_FAILED_VERIFICATION);
	assert_int_equal(res.verdict, UPLOAD_HTTP_RETRY);
	assert_int_equal(push_receiver_count(rx), 0);
	upload_http_free(h);
}

static void test_upload_http_insecure_mode_skips_verification(void **state)
{
	struct push_receiver *rx = tls_receiver(state);
	struct upload_http_result res;
	struct upload_options o;
	struct upload_http *h;

	options(&o, push_receiver_url(rx));
	o.tls_insecure = 1;
	h = new_http(&o, NULL);
	post(h, NO_TIMEOUT_MS, &res);
	assert_int_equal(res.verdict, UPLOAD_HTTP_OK);
	upload_http_free(h);
}

static void test_upload_http_loads_client_certificate_and_key(void **state)
{
	struct push_receiver *rx = tls_receiver(state);
	struct upload_http_result res;
	struct upload_options o;
	struct upload_http *h;

	options(&o, push_receiver_url(rx));
	o.ca_file = tls.ca;
	o.client_cert = tls.cli_cert;
	o.client_key = tls.cli_key;
	h = new_http(&o, NULL);
	post(h, NO_TIMEOUT_MS, &res);
	assert_int_equal(res.verdict, UPLOAD_HTTP_OK);
	upload_http_free(h);
	/* A key that does not match the certificate: libcurl must refuse to use the pair. */
	o.client_key = tls.other_key;
	h = new_http(&o, NULL);
	post(h, NO_TIMEOUT_MS, &res);
	assert_int_not_equal(res.curl_code, CURLE_OK);
	assert_int_equal(res.verdict, UPLOAD_HTTP_RETRY);
	upload_http_free(h);
}

static int group_setup(void **state)
{
	(void)state;
	if (curl_global_init(CURL_GLOBAL_DEFAULT))
		return -1;
	if (system("command -v openssl >/dev/null 2>&1"))
		return 0;
	tls.dir = tmpdir_new("upload-tls");
	if (tls.dir && make_certs()) {
		tmpdir_remove(tls.dir);
		tls.dir = NULL;
	}
	return 0;
}

static int group_teardown(void **state)
{
	(void)state;
	free(tls.srv_cert_pem);
	free(tls.srv_key_pem);
	tmpdir_remove(tls.dir);
	curl_global_cleanup();
	return 0;
}

#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)
#define T_TLS(name) cmocka_unit_test_setup_teardown(name, setup_tls, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_upload_http_classifies_server_answers),
		T(test_upload_http_follows_redirects_keeping_the_post),
		T(test_upload_http_redirect_loop_is_retried),
		T(test_upload_http_keeps_a_bounded_printable_excerpt),
		T(test_upload_http_reports_refused_connection_as_retry),
		T(test_upload_http_times_out_on_a_hanging_server),
		T(test_upload_http_gives_up_when_aborted),
		T(test_upload_http_reads_retry_after),
		T(test_upload_http_reuses_the_connection),
		T(test_upload_http_log_url_hides_credentials),
		T_TLS(test_upload_http_verifies_server_with_ca_file),
		T_TLS(test_upload_http_refuses_an_unknown_server_certificate),
		T_TLS(test_upload_http_insecure_mode_skips_verification),
		T_TLS(test_upload_http_loads_client_certificate_and_key),
	};

	return cmocka_run_group_tests_name("upload_http", tests, group_setup, group_teardown);
}
