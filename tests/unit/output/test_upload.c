// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Tests for the uploader against a real HTTP receiver on 127.0.0.1: what goes on the wire
 * (labels, span ids, gzip, auth, headers), retries, rejections, timeouts, the spool across
 * restarts, expiry, and the memory bounds while the server is down. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>
#include <curl/curl.h>

#include "output/upload.h"
#include "pprof_file.h"
#include "profile/pprof.h"
#include "push_receiver.h"
#include "tmpdir.h"
#include "curl_group.h"
#include "uuid_assert.h"

#define PERIOD_NS 10000000LL
#define WINDOW_NS 10000000000LL
#define WAIT_MS 5000

struct fixture {
	struct push_receiver *rx;
	char *spool;
	struct uploader *u;
	int saved_stderr; /* >= 0 while stderr is captured */
	char capture_path[64];
};

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void sleep_ms(unsigned int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

/* Base of window w: a minute ago plus w seconds, so every window is recent and distinct. */
static int64_t window_start(int64_t base, int w)
{
	return base + (int64_t)w * 1000000000LL;
}

/* Window w: n samples, leaf "w<w>_fn<k>" under main, span ids derived from (w, k). With `noise`,
 * function names carry pseudo-random text so the request does not compress away. */
static struct pprof_builder *window_builder(int w, int n, int noise)
{
	struct pprof_builder *b = pprof_builder_new(PERIOD_NS, 0, WINDOW_NS);
	struct sym_frame stack[2] = { 0 };
	struct pprof_label labels[2];
	char name[160], span[17];
	int k;

	assert_non_null(b);
	for (k = 0; k < n; k++) {
		if (noise)
			snprintf(name, sizeof(name), "w%d_fn%d_%08x%08x%08x%08x", w, k, rand(),
				 rand(), rand(), rand());
		else
			snprintf(name, sizeof(name), "w%d_fn%d", w, k);
		snprintf(span, sizeof(span), "%08x%08x", w, k);
		stack[0] = (struct sym_frame){ .addr = 0x401000 + (uint64_t)k * 16, .nlines = 1 };
		stack[0].lines[0] = (struct sym_line){ name, "app.c", k + 1 };
		stack[1] = (struct sym_frame){ .addr = 0x400100, .nlines = 1 };
		stack[1].lines[0] = (struct sym_line){ "main", "app.c", 1 };
		labels[0] = (struct pprof_label){ "span_id", span };
		labels[1] = (struct pprof_label){ "span_name", "work" };
		assert_int_equal(pprof_builder_add_sample(b, stack, 2, 1, labels, 2), 0);
	}
	return b;
}

static int submit_window(struct uploader *u, const char *service, int64_t base, int w, int n,
			 int noise)
{
	struct pprof_builder *b = window_builder(w, n, noise);
	int64_t start = window_start(base, w);
	int err;

	pprof_builder_set_time(b, start, WINDOW_NS);
	err = uploader_submit(u, service, b);

	pprof_builder_free(b);
	return err;
}

/* Fast retries and timeouts so each test takes well under a few seconds. */
static void fast_options(struct upload_options *o, const char *url)
{
	memset(o, 0, sizeof(*o));
	o->server_url = url;
	o->connect_timeout_ms = 500;
	o->total_timeout_ms = 2000;
	o->retry_initial_ms = 20;
	o->retry_max_ms = 100;
}

/* A URL on 127.0.0.1 where nothing listens (a receiver's port, after it stopped). */
static uint16_t dead_port(char *url, size_t size)
{
	struct push_receiver *r = push_receiver_new(0);
	uint16_t port;

	assert_non_null(r);
	port = push_receiver_port(r);
	snprintf(url, size, "%s", push_receiver_url(r));
	push_receiver_free(r);
	return port;
}

/* Window index of a pushed profile, from its time. */
static int record_window(const struct push_record *rec, int64_t base)
{
	assert_non_null(rec->req);
	assert_int_equal(rec->nprofiles, 1);
	assert_non_null(rec->profiles[0]);
	return (int)((rec->profiles[0]->time_nanos - base) / 1000000000LL);
}

/* Waits until the uploader's count at offset field of struct upload_stats reached n. */
static void wait_count(struct uploader *u, size_t field, uint64_t n, const char *what)
{
	struct upload_stats st;
	uint64_t v = 0;
	int i;

	for (i = 0; i < WAIT_MS / 5; i++) {
		uploader_get_stats(u, &st);
		memcpy(&v, (const char *)&st + field, sizeof(v));
		if (v >= n)
			return;
		sleep_ms(5);
	}
	fail_msg("only %llu of %llu %s", (unsigned long long)v, (unsigned long long)n, what);
}

/* The receiver records a push before it answers: wait until the uploader saw the answers too. */
static void wait_sent(struct uploader *u, uint64_t n)
{
	wait_count(u, offsetof(struct upload_stats, profiles_sent), n, "profiles sent");
}

/* Waits until the uploader counted n refused pushes. */
static void wait_dropped(struct uploader *u, uint64_t n)
{
	wait_count(u, offsetof(struct upload_stats, dropped_rejected), n, "pushes refused");
}

/* Every window in [0, n) arrived answered 200 exactly once; returns how many 200s there were. */
static void assert_each_window_once(struct push_receiver *rx, int64_t base, int n)
{
	int *seen = calloc(n, sizeof(*seen));
	const struct push_record *rec;
	size_t i;
	int w;

	assert_non_null(seen);
	for (i = 0; (rec = push_receiver_record(rx, i)); i++) {
		if (rec->status != 200)
			continue;
		w = record_window(rec, base);
		assert_true(w >= 0 && w < n);
		seen[w]++;
	}
	for (w = 0; w < n; w++)
		if (seen[w] != 1)
			fail_msg("window %d arrived %d times", w, seen[w]);
	free(seen);
}

/* submitted == sent + every drop + still held: nothing vanished without a counter. */
static void assert_conservation(const struct upload_stats *s)
{
	uint64_t accounted = s->profiles_sent + s->dropped_queue_full + s->dropped_spool_full +
			     s->dropped_too_old + s->dropped_rejected + s->dropped_encode +
			     s->dropped_spool_error + s->dropped_shutdown + s->queue_items +
			     s->spool_items;

	assert_int_equal(s->profiles_submitted + s->spool_found, accounted);
}

static void capture_stderr(struct fixture *f)
{
	int fd;

	fflush(stderr);
	snprintf(f->capture_path, sizeof(f->capture_path), "/tmp/spanprof-stderr-XXXXXX");
	fd = mkstemp(f->capture_path);
	assert_true(fd >= 0);
	f->saved_stderr = dup(2);
	dup2(fd, 2);
	close(fd);
}

/* Restores stderr; returns what was written meanwhile (malloc'ed). */
static char *end_capture(struct fixture *f)
{
	char *text = NULL;
	size_t len = 0;
	FILE *fp;

	if (f->saved_stderr < 0)
		return NULL;
	fflush(stderr);
	dup2(f->saved_stderr, 2);
	close(f->saved_stderr);
	f->saved_stderr = -1;
	fp = fopen(f->capture_path, "r");
	if (fp) {
		text = calloc(1, 1 << 20);
		if (text)
			len = fread(text, 1, (1 << 20) - 1, fp);
		fclose(fp);
	}
	unlink(f->capture_path);
	(void)len;
	return text;
}

static int count_occurrences(const char *text, const char *needle)
{
	int n = 0;

	while (text && (text = strstr(text, needle))) {
		n++;
		text += strlen(needle);
	}
	return n;
}

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	if (!f)
		return -1;
	f->saved_stderr = -1;
	f->rx = push_receiver_new(0);
	f->spool = tmpdir_new("upload-spool");
	if (!f->rx || !f->spool)
		return -1;
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	free(end_capture(f));
	if (f->rx)
		push_receiver_release(f->rx);
	uploader_free(f->u, 0);
	push_receiver_free(f->rx);
	tmpdir_remove(f->spool);
	free(f);
	return 0;
}

static void test_upload_pushes_labels_span_ids_and_gzip(void **state)
{
	static const struct pprof_label statics[] = { { "region", "eu-west" }, { "env", "test" } };
	struct fixture *f = *state;
	const Perftools__Profiles__Profile *p;
	const Push__V1__RawProfileSeries *ser;
	const struct push_record *rec;
	struct upload_options o;
	struct upload_stats st;
	int64_t base = now_ns() - 60 * 1000000000LL;
	char span[17];
	size_t i;

	fast_options(&o, push_receiver_url(f->rx));
	o.static_labels = statics;
	o.nstatic_labels = 2;
	f->u = uploader_new(&o);
	assert_non_null(f->u);
	assert_int_equal(submit_window(f->u, "checkout", base, 0, 3, 0), 0);
	assert_int_equal(push_receiver_wait(f->rx, 200, 1, WAIT_MS), 1);
	wait_sent(f->u, 1);
	rec = push_receiver_record(f->rx, 0);
	assert_string_equal(rec->method, "POST");
	assert_string_equal(rec->path, "/push.v1.PusherService/Push");
	assert_string_equal(push_record_header(rec, "Content-Type"), "application/proto");
	assert_string_equal(push_record_header(rec, "Content-Encoding"), "gzip");
	assert_true(rec->gzipped);
	assert_null(push_record_header(rec, "Authorization"));
	assert_null(push_record_header(rec, "X-Scope-OrgID"));
	assert_non_null(rec->req);
	assert_int_equal(rec->req->n_series, 1);
	ser = rec->req->series[0];
	assert_int_equal(ser->n_labels, 4);
	for (i = 1; i < ser->n_labels; i++) /* sorted by name, as Prometheus-style sets are */
		assert_true(strcmp(ser->labels[i - 1]->name, ser->labels[i]->name) < 0);
	assert_string_equal(push_record_label(rec, 0, "__name__"), "process_cpu");
	assert_string_equal(push_record_label(rec, 0, "service_name"), "checkout");
	assert_string_equal(push_record_label(rec, 0, "env"), "test");
	assert_string_equal(push_record_label(rec, 0, "region"), "eu-west");
	assert_null(
		push_record_label(rec, 0, "span_name")); /* a sample label, lifted by the server */
	assert_int_equal(ser->n_samples, 1);
	assert_uuid_v4(ser->samples[0]->id);
	p = rec->profiles[0];
	assert_non_null(p);
	assert_int_equal(p->time_nanos, window_start(base, 0));
	assert_int_equal(p->duration_nanos, WINDOW_NS);
	assert_int_equal(p->n_sample, 3);
	for (i = 0; i < 3; i++) {
		snprintf(span, sizeof(span), "%08x%08zx", 0, i);
		assert_string_equal(pprof_sample_label(p, p->sample[i], "span_id"), span);
		assert_string_equal(pprof_sample_label(p, p->sample[i], "span_name"), "work");
	}
	uploader_get_stats(f->u, &st);
	assert_int_equal(st.requests_ok, 1);
	assert_int_equal(st.profiles_sent, 1);
	assert_int_equal(st.bytes_sent, rec->body_len);
	assert_int_equal(st.retries, 0);
	assert_conservation(&st);
}

static void test_upload_sends_basic_auth_tenant_and_headers(void **state)
{
	static const char *const headers[] = { "X-Custom: 42", "X-Api-Key: hush-hush" };
	struct fixture *f = *state;
	const struct push_record *rec;
	struct upload_options o;
	int64_t base = now_ns() - 60 * 1000000000LL;
	char *log;

	fast_options(&o, push_receiver_url(f->rx));
	o.basic_user = "alice";
	o.basic_password = "s3cret-pw";
	o.tenant = "team-a";
	o.headers = headers;
	o.nheaders = 2;
	capture_stderr(f);
	f->u = uploader_new(&o);
	assert_non_null(f->u);
	assert_int_equal(submit_window(f->u, "svc", base, 0, 1, 0), 0);
	assert_int_equal(push_receiver_wait(f->rx, 200, 1, WAIT_MS), 1);
	wait_sent(f->u, 1);
	uploader_free(f->u, 0);
	f->u = NULL;
	log = end_capture(f);
	rec = push_receiver_record(f->rx, 0);
	/* base64("alice:s3cret-pw") */
	assert_string_equal(push_record_header(rec, "Authorization"), "Basic YWxpY2U6czNjcmV0LXB3");
	assert_string_equal(push_record_header(rec, "X-Scope-OrgID"), "team-a");
	assert_string_equal(push_record_header(rec, "X-Custom"), "42");
	assert_string_equal(push_record_header(rec, "X-Api-Key"), "hush-hush");
	assert_null(strstr(log ? log : "", "s3cret"));
	assert_null(strstr(log ? log : "", "hush-hush"));
	free(log);
}

static void test_upload_sends_bearer_token(void **state)
{
	struct fixture *f = *state;
	struct upload_options o;
	int64_t base = now_ns() - 60 * 1000000000LL;

	fast_options(&o, push_receiver_url(f->rx));
	o.bearer_token = "tok-123";
	f->u = uploader_new(&o);
	assert_non_null(f->u);
	assert_int_equal(submit_window(f->u, "svc", base, 0, 1, 0), 0);
	assert_int_equal(push_receiver_wait(f->rx, 200, 1, WAIT_MS), 1);
	wait_sent(f->u, 1);
	assert_string_equal(push_record_header(push_receiver_record(f->rx, 0), "Authorization"),
			    "Bearer tok-123");
}

static void test_upload_delivers_after_server_comes_up(void **state)
{
	struct fixture *f = *state;
	struct upload_options o;
	struct upload_stats st;
	int64_t base = now_ns() - 60 * 1000000000LL;
	uint16_t port;
	char url[64];

	push_receiver_free(f->rx);
	f->rx = NULL;
	port = dead_port(url, sizeof(url));
	fast_options(&o, url);
	f->u = uploader_new(&o);
	assert_non_null(f->u);
	assert_int_equal(submit_window(f->u, "svc", base, 0, 2, 0), 0);
	assert_int_equal(submit_window(f->u, "svc", base, 1, 2, 0), 0);
	sleep_ms(300);
	uploader_get_stats(f->u, &st);
	assert_int_equal(st.requests_ok, 0);
	assert_true(st.retries >= 2);
	assert_int_equal(st.queue_items, 2);
	f->rx = push_receiver_new(port);
	assert_non_null(f->rx);
	assert_int_equal(push_receiver_wait(f->rx, 200, 2, WAIT_MS), 2);
	wait_sent(f->u, 2);
	assert_each_window_once(f->rx, base, 2);
	uploader_get_stats(f->u, &st);
	assert_int_equal(st.requests_ok, 2);
	assert_int_equal(st.requests_retried, 1); /* the head request; the other never failed */
	assert_conservation(&st);
}

static void test_upload_retries_503_until_success(void **state)
{
	struct fixture *f = *state;
	struct upload_options o;
	struct upload_stats st;
	int64_t base = now_ns() - 60 * 1000000000LL;
	int w;

	push_receiver_answer(f->rx, 503, 5, "overloaded");
	fast_options(&o, push_receiver_url(f->rx));
	f->u = uploader_new(&o);
	assert_non_null(f->u);
	for (w = 0; w < 3; w++)
		assert_int_equal(submit_window(f->u, "svc", base, w, 2, 0), 0);
	assert_int_equal(push_receiver_wait(f->rx, 200, 3, WAIT_MS), 3);
	wait_sent(f->u, 3);
	sleep_ms(100); /* nothing more may arrive */
	assert_int_equal(push_receiver_count(f->rx), 8);
	assert_int_equal(push_receiver_count_status(f->rx, 503), 5);
	assert_each_window_once(f->rx, base, 3);
	uploader_get_stats(f->u, &st);
	assert_int_equal(st.requests_ok, 3);
	assert_int_equal(st.retries, 5);
	assert_int_equal(st.requests_retried, 1);
	assert_int_equal(st.dropped_rejected, 0);
	assert_int_equal(st.queue_items, 0);
	assert_conservation(&st);
}

static void test_upload_retries_429(void **state)
{
	struct fixture *f = *state;
	struct upload_options o;
	struct upload_stats st;
	int64_t base = now_ns() - 60 * 1000000000LL;

	push_receiver_answer(f->rx, 429, 2, "rate limited");
	fast_options(&o, push_receiver_url(f->rx));
	f->u = uploader_new(&o);
	assert_non_null(f->u);
	assert_int_equal(submit_window(f->u, "svc", base, 0, 1, 0), 0);
	assert_int_equal(push_receiver_wait(f->rx, 200, 1, WAIT_MS), 1);
	wait_sent(f->u, 1);
	uploader_get_stats(f->u, &st);
	assert_int_equal(st.retries, 2);
	assert_int_equal(st.requests_ok, 1);
	assert_int_equal(st.requests_failed_4xx, 0);
}

static void test_upload_drops_400_without_retry(void **state)
{
	struct fixture *f = *state;
	struct upload_options o;
	struct upload_stats st;
	int64_t base = now_ns() - 60 * 1000000000LL;
	char *log;

	push_receiver_answer(f->rx, 400, 0,
			     "{\"code\":\"invalid_argument\",\"message\":\"bad label\"}");
	fast_options(&o, push_receiver_url(f->rx));
	capture_stderr(f);
	f->u = uploader_new(&o);
	assert_non_null(f->u);
	assert_int_equal(submit_window(f->u, "svc", base, 0, 1, 0), 0);
	assert_int_equal(push_receiver_wait(f->rx, 400, 1, WAIT_MS), 1);
	sleep_ms(400); /* many retry periods: a retry would have come by now */
	uploader_get_stats(f->u, &st);
	log = end_capture(f);
	assert_int_equal(push_receiver_count(f->rx), 1);
	assert_int_equal(st.dropped_rejected, 1);
	assert_int_equal(st.requests_failed_4xx, 1);
	assert_int_equal(st.retries, 0);
	assert_int_equal(st.queue_items, 0);
	assert_conservation(&st);
	assert_int_equal(count_occurrences(log, "bad label"), 1);
	assert_non_null(strstr(log, "400"));
	free(log);
	/* The uploader keeps going with the next window. */
	push_receiver_answer(f->rx, 200, 0, NULL);
	assert_int_equal(submit_window(f->u, "svc", base, 1, 1, 0), 0);
	assert_int_equal(push_receiver_wait(f->rx, 200, 1, WAIT_MS), 1);
	wait_sent(f->u, 1);
}

/* A server that refuses every push is logged once per status, not once per push. */
static void test_upload_logs_each_refusal_status_once(void **state)
{
	struct fixture *f = *state;
	struct upload_options o;
	struct upload_stats st;
	int64_t base = now_ns() - 60 * 1000000000LL;
	char *log;
	int w;

	push_receiver_answer(f->rx, 400, 5, "bad request");
	fast_options(&o, push_receiver_url(f->rx));
	capture_stderr(f);
	f->u = uploader_new(&o);
	assert_non_null(f->u);
	for (w = 0; w < 5; w++)
		assert_int_equal(submit_window(f->u, "svc", base, w, 1, 0), 0);
	assert_int_equal(push_receiver_wait(f->rx, 400, 5, WAIT_MS), 5);
	push_receiver_answer(f->rx, 403, 3, "forbidden");
	for (w = 5; w < 8; w++)
		assert_int_equal(submit_window(f->u, "svc", base, w, 1, 0), 0);
	assert_int_equal(push_receiver_wait(f->rx, 403, 3, WAIT_MS), 3);
	wait_dropped(f->u, 8);
	uploader_get_stats(f->u, &st);
	log = end_capture(f);
	assert_int_equal(st.requests_failed_4xx, 8);
	assert_int_equal(count_occurrences(log, "HTTP 400"), 1);
	assert_int_equal(count_occurrences(log, "HTTP 403"), 1);
	free(log);
}

/* A server behind a redirect gets every push, the spooled ones too, and nothing is dropped. */
static void test_upload_delivers_every_push_through_a_redirect(void **state)
{
	struct fixture *f = *state;
	struct push_receiver *moved = push_receiver_new(0);
	struct upload_options o;
	struct upload_stats st;
	int64_t base = now_ns() - 60 * 1000000000LL;
	int w;

	assert_non_null(moved);
	push_receiver_set_location(f->rx, push_receiver_url(moved));
	push_receiver_answer(f->rx, 301, 0, NULL);
	fast_options(&o, push_receiver_url(f->rx));
	o.spool_dir = f->spool;
	f->u = uploader_new(&o);
	assert_non_null(f->u);
	for (w = 0; w < 4; w++)
		assert_int_equal(submit_window(f->u, "svc", base, w, 3, 0), 0);
	assert_int_equal(push_receiver_wait(moved, 200, 4, WAIT_MS), 4);
	wait_sent(f->u, 4);
	uploader_get_stats(f->u, &st);
	assert_int_equal(st.requests_ok, 4);
	assert_int_equal(st.dropped_rejected, 0);
	assert_int_equal(st.spool_items, 0);
	assert_int_equal(push_receiver_count_status(f->rx, 301), 4);
	assert_non_null(push_receiver_record(moved, 3)->req);
	assert_conservation(&st);
	uploader_free(f->u, 1000);
	f->u = NULL;
	push_receiver_free(moved);
}

/* Builder whose samples carry span_id, trace_id, span_name and the three Kubernetes labels. */
static struct pprof_builder *k8s_builder(void)
{
	struct pprof_builder *b = pprof_builder_new(PERIOD_NS, 0, WINDOW_NS);
	struct sym_frame stack[1] = { 0 };
	const struct pprof_label labels[] = {
		{ "span_id", "0000000000000001" },
		{ "trace_id", "0102030405060708090a0b0c0d0e0f10" },
		{ "span_name", "GET /" },
		{ "namespace", "shop" },
		{ "pod", "web-1" },
		{ "container", "app" },
	};

	assert_non_null(b);
	stack[0] = (struct sym_frame){ .addr = 0x401000, .nlines = 1 };
	stack[0].lines[0] = (struct sym_line){ "main", "app.c", 1 };
	assert_int_equal(pprof_builder_add_sample(b, stack, 1, 1, labels, 6), 0);
	return b;
}

/* trace_id stays out of pushes unless asked for (Pyroscope before 2.1.0 makes it a series
 * label); the server lifts span_name and the pod labels into the series, so static labels that
 * would take it past 30 are left out and counted rather than the profile refused. */
static void test_upload_keeps_series_within_the_label_limit(void **state)
{
	static char names[28][16];
	struct pprof_label statics[28];
	struct fixture *f = *state;
	const Perftools__Profiles__Profile *p;
	const struct push_record *rec;
	struct pprof_builder *b = k8s_builder();
	int64_t start = now_ns() - 60 * 1000000000LL;
	struct upload_options o;
	struct upload_stats st;
	int i;

	pprof_builder_set_time(b, start, WINDOW_NS);
	for (i = 0; i < 28; i++) {
		snprintf(names[i], sizeof(names[i]), "l%02d", i);
		statics[i] = (struct pprof_label){ names[i], "v" };
	}
	fast_options(&o, push_receiver_url(f->rx));
	o.static_labels = statics;
	o.nstatic_labels = 28;
	f->u = uploader_new(&o);
	assert_non_null(f->u);
	assert_int_equal(uploader_submit(f->u, "svc", b), 0);
	assert_int_equal(push_receiver_wait(f->rx, 200, 1, WAIT_MS), 1);
	wait_sent(f->u, 1);
	rec = push_receiver_record(f->rx, 0);
	p = rec->profiles[0];
	assert_null(pprof_sample_label(p, p->sample[0], "trace_id"));
	assert_string_equal(pprof_sample_label(p, p->sample[0], "span_id"), "0000000000000001");
	/* 30 - __name__ - service_name - span_name, namespace, pod, container = 24 statics */
	assert_int_equal(rec->req->series[0]->n_labels, 2 + 24);
	assert_string_equal(push_record_label(rec, 0, "l23"), "v");
	assert_null(push_record_label(rec, 0, "l24"));
	uploader_get_stats(f->u, &st);
	assert_int_equal(st.labels_dropped, 4);
	uploader_free(f->u, 0);

	o.trace_id_label = 1; /* trace_id kept: one more lifted label on old servers */
	f->u = uploader_new(&o);
	assert_non_null(f->u);
	assert_int_equal(uploader_submit(f->u, "svc", b), 0);
	assert_int_equal(push_receiver_wait(f->rx, 200, 2, WAIT_MS), 2);
	wait_sent(f->u, 1);
	rec = push_receiver_record(f->rx, 1);
	p = rec->profiles[0];
	assert_string_equal(pprof_sample_label(p, p->sample[0], "trace_id"),
			    "0102030405060708090a0b0c0d0e0f10");
	assert_int_equal(rec->req->series[0]->n_labels, 2 + 23);
	uploader_get_stats(f->u, &st);
	assert_int_equal(st.labels_dropped, 5);
	pprof_builder_free(b);
}

static void test_upload_times_out_hanging_server_and_retries(void **state)
{
	struct fixture *f = *state;
	struct upload_options o;
	struct upload_stats st;
	int64_t base = now_ns() - 60 * 1000000000LL, t0;

	push_receiver_answer(f->rx, PUSH_RECEIVER_HANG, 1, NULL);
	fast_options(&o, push_receiver_url(f->rx));
	o.total_timeout_ms = 300;
	f->u = uploader_new(&o);
	assert_non_null(f->u);
	t0 = now_ns();
	assert_int_equal(submit_window(f->u, "svc", base, 0, 1, 0), 0);
	assert_int_equal(push_receiver_wait(f->rx, 200, 1, WAIT_MS), 1);
	wait_sent(f->u, 1);
	assert_true(now_ns() - t0 >= 300 * 1000000LL);
	assert_int_equal(push_receiver_count_status(f->rx, PUSH_RECEIVER_HANG), 1);
	assert_each_window_once(f->rx, base, 1);
	uploader_get_stats(f->u, &st);
	assert_int_equal(st.retries, 1);
	assert_int_equal(st.requests_ok, 1);
}

static size_t count_spool_files(const char *dir)
{
	struct dirent *de;
	size_t n = 0;
	DIR *d = opendir(dir);

	assert_non_null(d);
	while ((de = readdir(d)))
		n += strlen(de->d_name) > 5 &&
		     !strcmp(de->d_name + strlen(de->d_name) - 5, ".push");
	closedir(d);
	return n;
}

static void test_upload_spool_survives_restart_oldest_first(void **state)
{
	static const int order[] = { 3, 1, 4, 0, 2 };
	struct fixture *f = *state;
	const struct push_record *rec;
	struct upload_options o;
	struct upload_stats st;
	int64_t base = now_ns() - 60 * 1000000000LL;
	char url[64];
	size_t i;

	dead_port(url, sizeof(url));
	fast_options(&o, url);
	o.spool_dir = f->spool;
	f->u = uploader_new(&o);
	assert_non_null(f->u);
	for (i = 0; i < 5; i++)
		assert_int_equal(submit_window(f->u, "svc", base, order[i], 2, 0), 0);
	uploader_stop(f->u, 50);
	uploader_get_stats(f->u, &st);
	assert_int_equal(st.spool_items, 5);
	assert_int_equal(st.queue_items, 0);
	assert_int_equal(st.dropped_shutdown, 0);
	assert_conservation(&st);
	uploader_free(f->u, 0);
	f->u = NULL;
	assert_int_equal(count_spool_files(f->spool), 5);

	fast_options(&o, push_receiver_url(f->rx));
	o.spool_dir = f->spool;
	f->u = uploader_new(&o);
	assert_non_null(f->u);
	assert_int_equal(push_receiver_wait(f->rx, 200, 5, WAIT_MS), 5);
	wait_sent(f->u, 5);
	for (i = 0; i < 5; i++) {
		rec = push_receiver_record(f->rx, i);
		assert_int_equal(record_window(rec, base), (int)i); /* oldest first */
		assert_string_equal(push_record_label(rec, 0, "service_name"), "svc");
	}
	uploader_get_stats(f->u, &st);
	assert_int_equal(st.spool_found, 5);
	assert_int_equal(st.profiles_sent, 5);
	assert_int_equal(st.spool_items, 0);
	assert_conservation(&st);
	assert_int_equal(count_spool_files(f->spool), 0);
}

/* A killed agent never runs uploader_stop(): with a spool, what it had accepted is on disk
 * already, and the next uploader on that spool delivers all of it. */
static void test_upload_spool_survives_a_killed_uploader(void **state)
{
	struct fixture *f = *state;
	struct upload_options o;
	struct upload_stats st;
	int64_t base = now_ns() - 60 * 1000000000LL;
	char url[64];
	int status, i;
	pid_t pid;

	dead_port(url, sizeof(url));
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		fast_options(&o, url);
		o.spool_dir = f->spool;
		f->u = uploader_new(&o);
		for (i = 0; f->u && i < 4; i++)
			if (submit_window(f->u, "svc", base, i, 2, 0))
				_exit(2);
		_exit(f->u ? 0 : 1); /* no stop, no free: as if killed */
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	assert_int_equal(count_spool_files(f->spool), 4);

	fast_options(&o, push_receiver_url(f->rx));
	o.spool_dir = f->spool;
	f->u = uploader_new(&o);
	assert_non_null(f->u);
	assert_int_equal(push_receiver_wait(f->rx, 200, 4, WAIT_MS), 4);
	wait_sent(f->u, 4);
	for (i = 0; i < 4; i++)
		assert_int_equal(record_window(push_receiver_record(f->rx, i), base), i);
	uploader_get_stats(f->u, &st);
	assert_int_equal(st.spool_found, 4);
	assert_conservation(&st);
}

static void test_upload_drops_too_old_requests(void **state)
{
	struct fixture *f = *state;
	struct upload_options o;
	struct upload_stats st;
	int64_t base = now_ns() - 1500 * 1000000LL; /* 1.5 s ago: young enough for max_age 2 s */
	char url[64];
	int w;

	dead_port(url, sizeof(url));
	fast_options(&o, url);
	o.spool_dir = f->spool;
	o.max_age_s = 2;
	f->u = uploader_new(&o);
	assert_non_null(f->u);
	for (w = 0; w < 3; w++)
		assert_int_equal(submit_window(f->u, "svc", base - w * 1000000LL, 0, 1, 0), 0);
	uploader_free(f->u, 0);
	f->u = NULL;
	assert_int_equal(count_spool_files(f->spool), 3);
	sleep_ms(1000); /* now all three are older than 2 s */

	fast_options(&o, push_receiver_url(f->rx));
	o.spool_dir = f->spool;
	o.max_age_s = 2;
	f->u = uploader_new(&o);
	assert_non_null(f->u);
	assert_int_equal(submit_window(f->u, "fresh", now_ns(), 0, 1, 0), 0);
	/* Too old already when submitted: dropped at once, never queued. */
	assert_int_equal(submit_window(f->u, "stale", now_ns() - 3 * 1000000000LL, 0, 1, 0), 0);
	assert_int_equal(push_receiver_wait(f->rx, 200, 1, WAIT_MS), 1);
	wait_sent(f->u, 1);
	sleep_ms(100);
	assert_int_equal(push_receiver_count(f->rx), 1);
	assert_string_equal(push_record_label(push_receiver_record(f->rx, 0), 0, "service_name"),
			    "fresh");
	uploader_get_stats(f->u, &st);
	assert_int_equal(st.dropped_too_old, 4);
	assert_int_equal(st.spool_found, 3);
	assert_int_equal(st.spool_items, 0);
	assert_conservation(&st);
	assert_int_equal(count_spool_files(f->spool), 0);
}

static uint64_t spool_dir_bytes(const char *dir)
{
	char path[4096];
	struct dirent *de;
	struct stat sb;
	uint64_t n = 0;
	DIR *d = opendir(dir);

	assert_non_null(d);
	while ((de = readdir(d))) {
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		if (!stat(path, &sb) && S_ISREG(sb.st_mode) && strstr(de->d_name, ".push"))
			n += sb.st_size;
	}
	closedir(d);
	return n;
}

static void test_upload_memory_bounded_while_server_down(void **state)
{
	enum { QUEUE = 48 << 10, SPOOL = 160 << 10, WINDOWS = 120 };
	struct fixture *f = *state;
	struct upload_options o;
	struct upload_stats st;
	int64_t base = now_ns() - 600 * 1000000000LL;
	char url[64];
	int w;

	dead_port(url, sizeof(url));
	fast_options(&o, url);
	o.spool_dir = f->spool;
	o.queue_bytes = QUEUE;
	o.spool_bytes = SPOOL;
	f->u = uploader_new(&o);
	assert_non_null(f->u);
	for (w = 0; w < WINDOWS; w++) {
		assert_int_equal(submit_window(f->u, "svc", base, w, 40, 1), 0);
		uploader_get_stats(f->u, &st);
		assert_true(st.queue_bytes <= QUEUE);
		assert_true(st.spool_bytes <= SPOOL);
		assert_true(spool_dir_bytes(f->spool) <= SPOOL);
		assert_conservation(&st);
	}
	/* With a spool every request is written ahead to disk: nothing waits in memory. */
	assert_int_equal(st.queue_items, 0);
	assert_true(st.spool_items > 0);
	assert_true(st.dropped_spool_full > 0); /* it really was full */
	assert_int_equal(st.dropped_queue_full, 0);
	assert_int_equal(st.profiles_submitted, WINDOWS);
	uploader_stop(f->u, 0);
	uploader_get_stats(f->u, &st);
	assert_int_equal(st.queue_items, 0);
	assert_true(st.spool_bytes <= SPOOL);
	assert_true(spool_dir_bytes(f->spool) <= SPOOL);
	assert_conservation(&st);
}

static void test_upload_drops_oldest_when_queue_full_without_spool(void **state)
{
	enum { QUEUE = 24 << 10, WINDOWS = 40 };
	struct fixture *f = *state;
	const struct push_record *rec;
	struct upload_options o;
	struct upload_stats st;
	int64_t base = now_ns() - 600 * 1000000000LL;
	uint16_t port;
	char url[64];
	size_t i, held;
	int w;

	push_receiver_free(f->rx);
	f->rx = NULL;
	port = dead_port(url, sizeof(url));
	fast_options(&o, url);
	o.queue_bytes = QUEUE;
	f->u = uploader_new(&o);
	assert_non_null(f->u);
	for (w = 0; w < WINDOWS; w++) {
		assert_int_equal(submit_window(f->u, "svc", base, w, 40, 1), 0);
		uploader_get_stats(f->u, &st);
		assert_true(st.queue_bytes <= QUEUE);
		assert_conservation(&st);
	}
	assert_true(st.dropped_queue_full > 0);
	held = st.queue_items;
	f->rx = push_receiver_new(port);
	assert_non_null(f->rx);
	assert_int_equal(push_receiver_wait(f->rx, 200, held, WAIT_MS), held);
	wait_sent(f->u, held);
	/* The oldest were dropped, except perhaps the one being sent when the queue filled. */
	for (i = 1; i < held; i++) {
		rec = push_receiver_record(f->rx, held - i);
		assert_int_equal(record_window(rec, base), WINDOWS - (int)i);
	}
	uploader_get_stats(f->u, &st);
	assert_conservation(&st);
}

static void test_upload_reuses_one_connection(void **state)
{
	struct fixture *f = *state;
	struct upload_options o;
	int64_t base = now_ns() - 60 * 1000000000LL;
	int w;

	fast_options(&o, push_receiver_url(f->rx));
	f->u = uploader_new(&o);
	assert_non_null(f->u);
	for (w = 0; w < 5; w++) {
		assert_int_equal(submit_window(f->u, "svc", base, w, 1, 0), 0);
		assert_int_equal(push_receiver_wait(f->rx, 200, w + 1, WAIT_MS), w + 1);
		wait_sent(f->u, w + 1);
	}
	assert_int_equal(push_receiver_connections(f->rx), 1);
}

static void test_upload_splits_window_over_profile_limits(void **state)
{
	struct fixture *f = *state;
	const Perftools__Profiles__Profile *p;
	const struct push_record *rec;
	struct upload_options o;
	struct upload_stats st;
	int64_t base = now_ns() - 60 * 1000000000LL;
	size_t i, j, total = 0;
	int seen[25] = { 0 };
	unsigned int w, k;

	fast_options(&o, push_receiver_url(f->rx));
	o.max_profile_samples = 10;
	f->u = uploader_new(&o);
	assert_non_null(f->u);
	assert_int_equal(submit_window(f->u, "svc", base, 0, 25, 0), 0);
	assert_int_equal(push_receiver_wait(f->rx, 200, 3, WAIT_MS), 3);
	wait_sent(f->u, 3);
	for (i = 0; i < 3; i++) {
		rec = push_receiver_record(f->rx, i);
		p = rec->profiles[0];
		assert_non_null(p);
		assert_true(p->n_sample <= 10);
		assert_int_equal(p->time_nanos, window_start(base, 0));
		for (j = 0; j < p->n_sample; j++, total++) {
			assert_int_equal(sscanf(pprof_sample_label(p, p->sample[j], "span_id"),
						"%8x%8x", &w, &k),
					 2);
			assert_true(k < 25);
			seen[k]++;
		}
	}
	assert_int_equal(total, 25);
	for (i = 0; i < 25; i++)
		assert_int_equal(seen[i], 1);
	uploader_get_stats(f->u, &st);
	assert_int_equal(st.profiles_sent, 3);
	assert_int_equal(st.profiles_submitted, 3);
}

static void test_upload_flush_on_stop_delivers_queue(void **state)
{
	struct fixture *f = *state;
	struct upload_options o;
	struct upload_stats st;
	int64_t base = now_ns() - 60 * 1000000000LL;

	push_receiver_answer(f->rx, 503, 2, NULL);
	fast_options(&o, push_receiver_url(f->rx));
	f->u = uploader_new(&o);
	assert_non_null(f->u);
	assert_int_equal(submit_window(f->u, "svc", base, 0, 1, 0), 0);
	assert_int_equal(submit_window(f->u, "svc", base, 1, 1, 0), 0);
	uploader_stop(f->u, 3000);
	uploader_get_stats(f->u, &st);
	assert_int_equal(st.requests_ok, 2);
	assert_int_equal(st.dropped_shutdown, 0);
	assert_int_equal(submit_window(f->u, "svc", base, 2, 1, 0), -ESHUTDOWN);
	assert_each_window_once(f->rx, base, 2);
}

static void test_upload_stop_counts_lost_without_spool(void **state)
{
	struct fixture *f = *state;
	struct upload_options o;
	struct upload_stats st;
	int64_t base = now_ns() - 60 * 1000000000LL, t0;
	char url[64];

	dead_port(url, sizeof(url));
	fast_options(&o, url);
	f->u = uploader_new(&o);
	assert_non_null(f->u);
	assert_int_equal(submit_window(f->u, "svc", base, 0, 1, 0), 0);
	assert_int_equal(submit_window(f->u, "svc", base, 1, 1, 0), 0);
	t0 = now_ns();
	uploader_stop(f->u, 150);
	assert_true(now_ns() - t0 < 1500 * 1000000LL);
	uploader_get_stats(f->u, &st);
	assert_int_equal(st.dropped_shutdown, 2);
	assert_int_equal(st.queue_items, 0);
	assert_conservation(&st);
}

/* uploader_stop() does not wait for a hanging server beyond the flush time. */
static void test_upload_stop_abandons_hanging_request(void **state)
{
	struct fixture *f = *state;
	struct upload_options o;
	struct upload_stats st;
	int64_t base = now_ns() - 60 * 1000000000LL, t0;

	push_receiver_answer(f->rx, PUSH_RECEIVER_HANG, 0, NULL);
	fast_options(&o, push_receiver_url(f->rx));
	o.total_timeout_ms = 20000;
	o.spool_dir = f->spool;
	f->u = uploader_new(&o);
	assert_non_null(f->u);
	assert_int_equal(submit_window(f->u, "svc", base, 0, 1, 0), 0);
	assert_int_equal(push_receiver_wait(f->rx, PUSH_RECEIVER_HANG, 1, WAIT_MS), 1);
	t0 = now_ns();
	uploader_stop(f->u, 0);
	assert_true(now_ns() - t0 < 2500 * 1000000LL); /* libcurl checks about once a second */
	uploader_get_stats(f->u, &st);
	assert_int_equal(st.spool_items, 1);
	assert_int_equal(st.requests_ok, 0);
	assert_conservation(&st);
}

static void expect_rejected(const struct upload_options *o, int err)
{
	struct uploader *u;

	errno = 0;
	u = uploader_new(o);
	if (u) {
		uploader_free(u, 0);
		fail_msg("uploader_new accepted bad options");
	}
	assert_int_equal(errno, err);
}

static void test_uploader_new_rejects_bad_options(void **state)
{
	static const char *const no_colon[] = { "X-Thing" };
	static const char *const reserved[] = { "content-type: text/plain" };
	static const char *const crlf[] = { "X-A: b\r\nX-C: d" };
	static const struct pprof_label reserved_label[] = { { "__name__", "x" } };
	static const struct pprof_label bad_name[] = { { "bad\tname", "x" } };
	static const struct pprof_label service_label[] = { { "service_name", "x" } };
	static const struct pprof_label dup[] = { { "env", "a" }, { "env", "b" } };
	static const struct pprof_label empty_value[] = { { "env", "" } };
	struct fixture *f = *state;
	const char *url = push_receiver_url(f->rx);
	struct upload_options o;
	char *log;

	expect_rejected(NULL, EINVAL);
	capture_stderr(f);
	fast_options(&o, NULL);
	expect_rejected(&o, EINVAL);
	fast_options(&o, "ftp://127.0.0.1/");
	expect_rejected(&o, EINVAL);
	fast_options(&o, "not a url");
	expect_rejected(&o, EINVAL);
	fast_options(&o, url);
	o.basic_user = "u";
	o.bearer_token = "very-secret-token";
	expect_rejected(&o, EINVAL);
	fast_options(&o, url);
	o.basic_password = "p";
	expect_rejected(&o, EINVAL);
	fast_options(&o, url);
	o.client_key = "/etc/hostname";
	expect_rejected(&o, EINVAL);
	fast_options(&o, url);
	o.ca_file = "/nonexistent/ca.pem";
	expect_rejected(&o, ENOENT);
	fast_options(&o, url);
	o.tenant = "a\nb";
	expect_rejected(&o, EINVAL);
	fast_options(&o, url);
	o.headers = no_colon;
	o.nheaders = 1;
	expect_rejected(&o, EINVAL);
	o.headers = reserved;
	expect_rejected(&o, EINVAL);
	o.headers = crlf;
	expect_rejected(&o, EINVAL);
	fast_options(&o, url);
	o.nstatic_labels = 1;
	o.static_labels = reserved_label;
	expect_rejected(&o, EINVAL);
	o.static_labels = bad_name;
	expect_rejected(&o, EINVAL);
	o.static_labels = service_label;
	expect_rejected(&o, EINVAL);
	o.static_labels = empty_value;
	expect_rejected(&o, EINVAL);
	o.static_labels = dup;
	o.nstatic_labels = 2;
	expect_rejected(&o, EINVAL);
	fast_options(&o, url);
	o.retry_initial_ms = 500;
	o.retry_max_ms = 100;
	expect_rejected(&o, EINVAL);
	fast_options(&o, url);
	o.spool_dir = f->spool;
	f->u = uploader_new(&o);
	assert_non_null(f->u);
	expect_rejected(&o, EBUSY); /* one agent per spool */
	log = end_capture(f);
	assert_null(strstr(log ? log : "", "very-secret-token"));
	assert_non_null(strstr(log ? log : "", "static label bad"));
	assert_non_null(strstr(log ? log : "", "ca.pem"));
	free(log);
}

/* The URL's path is kept and user:password@ never reaches the log. */
static void test_upload_keeps_base_path_and_hides_url_credentials(void **state)
{
	struct fixture *f = *state;
	struct upload_options o;
	char url[128], *log;

	snprintf(url, sizeof(url), "http://bob:pa55word@127.0.0.1:%u/pyro/",
		 push_receiver_port(f->rx));
	fast_options(&o, url);
	capture_stderr(f);
	f->u = uploader_new(&o);
	assert_non_null(f->u);
	assert_int_equal(submit_window(f->u, "svc", now_ns(), 0, 1, 0), 0);
	assert_int_equal(push_receiver_wait(f->rx, 200, 1, WAIT_MS), 1);
	wait_sent(f->u, 1);
	uploader_free(f->u, 0);
	f->u = NULL;
	log = end_capture(f);
	assert_string_equal(push_receiver_record(f->rx, 0)->path,
			    "/pyro/push.v1.PusherService/Push");
	assert_string_equal(push_record_header(push_receiver_record(f->rx, 0), "Authorization"),
			    "Basic Ym9iOnBhNTV3b3Jk");
	assert_null(strstr(log ? log : "", "pa55word"));
	free(log);
}

#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)

/* As main() does: libcurl's global state is set up once, before any thread. */
static int group_setup(void **state)
{
	(void)state;
	return curl_global_init(CURL_GLOBAL_DEFAULT) ? -1 : 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_upload_pushes_labels_span_ids_and_gzip),
		T(test_upload_sends_basic_auth_tenant_and_headers),
		T(test_upload_sends_bearer_token),
		T(test_upload_delivers_after_server_comes_up),
		T(test_upload_retries_503_until_success),
		T(test_upload_retries_429),
		T(test_upload_drops_400_without_retry),
		T(test_upload_logs_each_refusal_status_once),
		T(test_upload_delivers_every_push_through_a_redirect),
		T(test_upload_keeps_series_within_the_label_limit),
		T(test_upload_times_out_hanging_server_and_retries),
		T(test_upload_spool_survives_restart_oldest_first),
		T(test_upload_spool_survives_a_killed_uploader),
		T(test_upload_drops_too_old_requests),
		T(test_upload_memory_bounded_while_server_down),
		T(test_upload_drops_oldest_when_queue_full_without_spool),
		T(test_upload_reuses_one_connection),
		T(test_upload_splits_window_over_profile_limits),
		T(test_upload_flush_on_stop_delivers_queue),
		T(test_upload_stop_counts_lost_without_spool),
		T(test_upload_stop_abandons_hanging_request),
		T(test_uploader_new_rejects_bad_options),
		T(test_upload_keeps_base_path_and_hides_url_credentials),
	};

	return cmocka_run_group_tests_name("upload", tests, group_setup, curl_group_teardown);
}
