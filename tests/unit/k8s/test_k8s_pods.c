// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Unit tests for k8s_pods against a fake API server on 127.0.0.1: paged list of this node's
 * pods, watch events, bookmarks, resume, 410 relists, the bearer token, and an API server that
 * is down or hangs (lookups and shutdown must not wait for it). */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
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

#include "fake_kube_api.h"
#include "k8s/k8s_pods.h"
#include "tmpdir.h"
#include "util/clock.h"
#include "wait_for.h"
#include "util/log.h"
#include "curl_group.h"

#define ID_A "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
#define ID_B "fedcba9876543210fedcba9876543210fedcba9876543210fedcba9876543210"
#define ID_C "cccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccc"
#define ID_D "dddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddd"
#define ID_E "eeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee"
#define UID_WEB "11111111-1111-4111-8111-111111111111"
#define UID_DB "22222222-2222-4222-8222-222222222222"
#define UID_OTHER "33333333-3333-4333-8333-333333333333"
#define UID_NEW "44444444-4444-4444-8444-444444444444"
#define TOKEN "tok-1"

struct fixture {
	char *dir;
	char token_path[4096];
	struct fake_kube_api *api;
	struct k8s_pods *pods;
};

/* CLOCK_MONOTONIC in ms. */
static uint64_t now_ms(void)
{
	return clock_mono_ns() / NS_PER_MS;
}

static void write_token(struct fixture *f, const char *token)
{
	char tmp[4200];
	FILE *fp;

	/* Replaced by rename, as the kubelet swaps projected tokens. */
	snprintf(tmp, sizeof(tmp), "%s.new", f->token_path);
	fp = fopen(tmp, "w");
	assert_non_null(fp);
	fprintf(fp, "%s\n", token);
	fclose(fp);
	assert_int_equal(rename(tmp, f->token_path), 0);
}

static void apply_pod(struct fake_kube_api *api, const char *type, const char *ns, const char *name,
		      const char *uid, const char *node, const struct fake_kube_container *c,
		      size_t n)
{
	char *json = fake_kube_pod_json(ns, name, uid, node, c, n);

	assert_non_null(json);
	assert_int_equal(fake_kube_api_apply(api, type, json), 0);
	free(json);
}

static void seed(struct fake_kube_api *api)
{
	const struct fake_kube_container web[] = { { "app", "containerd://" ID_A, NULL },
						   { "sidecar", "containerd://" ID_B, NULL } };
	const struct fake_kube_container db[] = { { "pg", "containerd://" ID_C, NULL } };
	const struct fake_kube_container other[] = { { "x", "containerd://" ID_D, NULL } };

	apply_pod(api, "ADDED", "shop", "web-5d8f7", UID_WEB, "node-a", web, 2);
	apply_pod(api, "ADDED", "data", "db-0", UID_DB, "node-a", db, 1);
	apply_pod(api, "ADDED", "shop", "other-1", UID_OTHER, "node-b", other, 1);
}

static struct k8s_pods *start_on(struct fixture *f, const char *url, unsigned int max_pods,
				 const char *node)
{
	struct k8s_pods_options o = {
		.api_url = url,
		.node_name = node,
		.token_path = f->token_path,
		.max_pods = max_pods,
		.connect_timeout_ms = 1000,
		.list_timeout_ms = 5000,
		.watch_timeout_s = 5,
		.backoff_initial_ms = 10,
		.backoff_max_ms = 50,
		.page_size = 1, /* two pages for node-a's two pods */
	};

	return k8s_pods_new(&o);
}

static struct k8s_pods *start(struct fixture *f, const char *url, unsigned int max_pods)
{
	return start_on(f, url, max_pods, "node-a");
}

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	if (!f)
		return -1;
	f->dir = tmpdir_new("k8spods");
	if (!f->dir)
		return -1;
	snprintf(f->token_path, sizeof(f->token_path), "%s/token", f->dir);
	write_token(f, TOKEN);
	f->api = fake_kube_api_new(TOKEN);
	if (!f->api)
		return -1;
	seed(f->api);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	k8s_pods_free(f->pods);
	fake_kube_api_free(f->api);
	tmpdir_remove(f->dir);
	free(f);
	return 0;
}

static int lookup(struct fixture *f, const char *id, const char *want_ns, const char *want_pod,
		  const char *want_container)
{
	struct k8s_pod_ref ref;

	if (k8s_pods_lookup_container(f->pods, id, &ref))
		return 0;
	return !strcmp(ref.namespace, want_ns) && !strcmp(ref.pod, want_pod) &&
	       !strcmp(ref.container, want_container);
}

static int gone(struct fixture *f, const char *id)
{
	struct k8s_pod_ref ref;

	return k8s_pods_lookup_container(f->pods, id, &ref) == -ENOENT;
}

static unsigned int open_watches(struct fixture *f)
{
	struct fake_kube_counts c;

	fake_kube_api_counts(f->api, &c);
	return c.open_watches;
}

static void test_k8s_pods_lists_this_nodes_pods_across_pages(void **state)
{
	struct fixture *f = *state;
	struct fake_kube_counts c;
	struct k8s_pods_stats st;
	struct k8s_pod_ref ref;

	f->pods = start(f, fake_kube_api_url(f->api), 0);
	assert_non_null(f->pods);
	assert_int_equal(k8s_pods_wait_synced(f->pods, 3000), 0);
	assert_true(lookup(f, ID_A, "shop", "web-5d8f7", "app"));
	assert_true(lookup(f, ID_B, "shop", "web-5d8f7", "sidecar"));
	assert_true(lookup(f, ID_C, "data", "db-0", "pg"));
	assert_true(gone(f, ID_D)); /* on node-b */
	assert_int_equal(k8s_pods_lookup_pod(f->pods, UID_DB, &ref), 0);
	assert_string_equal(ref.namespace, "data");
	assert_string_equal(ref.pod, "db-0");
	assert_string_equal(ref.container, "");
	assert_int_equal(k8s_pods_lookup_pod(f->pods, UID_OTHER, &ref), -ENOENT);
	fake_kube_api_counts(f->api, &c);
	assert_int_equal(c.lists, 2); /* limit=1: two pages joined by a continue token */
	assert_int_equal(c.unauthorized, 0);
	k8s_pods_stats(f->pods, &st);
	assert_int_equal(st.lists, 1);
	assert_int_equal(st.pods, 2);
	assert_int_equal(st.containers, 3);
	assert_int_equal(st.synced, 1);
	WAIT_FOR(open_watches(f) == 1);
	fake_kube_api_counts(f->api, &c);
	assert_string_equal(c.field_selector, "spec.nodeName=node-a");
	assert_string_equal(c.watch_rv, "1003"); /* the list's resourceVersion */
}

/* A node name with characters that mean something in a query ('&', '=', '%', '+', a space, a
 * slash) reaches the server percent-encoded (libcurl's escaper), decoded back to the same name:
 * the node's pods are listed and watched, no other node's. */
static void test_k8s_pods_escapes_the_node_name_in_its_urls(void **state)
{
	static const char odd[] = "node a/b&c=d%2B+e";
	const struct fake_kube_container app[] = { { "app", "containerd://" ID_E, NULL } };
	struct fixture *f = *state;
	struct fake_kube_counts c;

	apply_pod(f->api, "ADDED", "odd", "odd-0", UID_NEW, odd, app, 1);
	f->pods = start_on(f, fake_kube_api_url(f->api), 0, odd);
	assert_non_null(f->pods);
	assert_int_equal(k8s_pods_wait_synced(f->pods, 3000), 0);
	assert_true(lookup(f, ID_E, "odd", "odd-0", "app"));
	assert_true(gone(f, ID_A)); /* node-a's */
	WAIT_FOR(open_watches(f) == 1);
	fake_kube_api_counts(f->api, &c);
	assert_string_equal(c.field_selector, "spec.nodeName=node a/b&c=d%2B+e");
	assert_int_equal(c.unauthorized, 0);
}

static void test_k8s_pods_follows_added_modified_deleted_and_bookmarks(void **state)
{
	const struct fake_kube_container restarted[] = {
		{ "app", "containerd://" ID_E, NULL }, { "sidecar", "containerd://" ID_B, NULL }
	};
	const struct fake_kube_container fresh[] = { { "worker", "cri-o://" ID_D, NULL } };
	struct fixture *f = *state;
	struct fake_kube_counts c;
	struct k8s_pods_stats st;
	uint64_t events, gen;

	f->pods = start(f, fake_kube_api_url(f->api), 0);
	assert_non_null(f->pods);
	assert_int_equal(k8s_pods_wait_synced(f->pods, 3000), 0);
	WAIT_FOR(open_watches(f) == 1);
	k8s_pods_stats(f->pods, &st);
	gen = st.generation;

	apply_pod(f->api, "ADDED", "jobs", "batch-x", UID_NEW, "node-a", fresh, 1);
	WAIT_FOR(lookup(f, ID_D, "jobs", "batch-x", "worker"));
	apply_pod(f->api, "MODIFIED", "shop", "web-5d8f7", UID_WEB, "node-a", restarted, 2);
	WAIT_FOR(lookup(f, ID_E, "shop", "web-5d8f7", "app"));
	assert_true(gone(f, ID_A)); /* the container before the restart */
	assert_true(lookup(f, ID_B, "shop", "web-5d8f7", "sidecar"));
	apply_pod(f->api, "DELETED", "data", "db-0", UID_DB, "node-a", NULL, 0);
	WAIT_FOR(gone(f, ID_C));

	k8s_pods_stats(f->pods, &st);
	assert_int_equal(st.watch_events, 3);
	assert_true(st.generation >= gen + 3);
	assert_int_equal(st.pods, 2);
	events = st.watch_events;
	fake_kube_api_bookmark(f->api);
	WAIT_FOR((k8s_pods_stats(f->pods, &st), st.watch_events == events + 1));
	fake_kube_api_counts(f->api, &c);
	assert_int_equal(c.bookmarks, 1);
	/* Another node's pod is not sent to us; the next event of ours arrives alone. */
	apply_pod(f->api, "MODIFIED", "shop", "other-1", UID_OTHER, "node-b", fresh, 1);
	apply_pod(f->api, "DELETED", "jobs", "batch-x", UID_NEW, "node-a", NULL, 0);
	WAIT_FOR(gone(f, ID_D));
	k8s_pods_stats(f->pods, &st);
	assert_int_equal(st.watch_events, events + 2);
	assert_int_equal(st.lists, 1);
	assert_int_equal(st.errors, 0);
}

static void test_k8s_pods_resumes_a_watch_from_the_last_resource_version(void **state)
{
	const struct fake_kube_container fresh[] = { { "worker", "containerd://" ID_D, NULL } };
	struct fixture *f = *state;
	struct fake_kube_counts c;
	struct k8s_pods_stats st;

	f->pods = start(f, fake_kube_api_url(f->api), 0);
	assert_non_null(f->pods);
	assert_int_equal(k8s_pods_wait_synced(f->pods, 3000), 0);
	WAIT_FOR(open_watches(f) == 1);
	apply_pod(f->api, "ADDED", "jobs", "batch-x", UID_NEW, "node-a", fresh, 1);
	WAIT_FOR(lookup(f, ID_D, "jobs", "batch-x", "worker"));
	/* The server ends the watch (timeoutSeconds); an event lands before the client is back
	 * and must be replayed from the history. */
	fake_kube_api_pause_watches(f->api, 1);
	fake_kube_api_end_watches(f->api);
	apply_pod(f->api, "DELETED", "jobs", "batch-x", UID_NEW, "node-a", NULL, 0);
	fake_kube_api_pause_watches(f->api, 0);
	WAIT_FOR(gone(f, ID_D));
	fake_kube_api_counts(f->api, &c);
	assert_int_equal(c.watches, 2);
	assert_string_equal(c.watch_rv, "1004");
	k8s_pods_stats(f->pods, &st);
	assert_int_equal(st.lists, 1);
	assert_int_equal(st.relists, 0);
}

static void test_k8s_pods_relists_after_an_expired_error_event(void **state)
{
	const struct fake_kube_container fresh[] = { { "worker", "containerd://" ID_D, NULL } };
	struct fixture *f = *state;
	struct fake_kube_counts c;
	struct k8s_pods_stats st;

	f->pods = start(f, fake_kube_api_url(f->api), 0);
	assert_non_null(f->pods);
	assert_int_equal(k8s_pods_wait_synced(f->pods, 3000), 0);
	WAIT_FOR(open_watches(f) == 1);
	/* The client falls behind, and the history it needs is compacted away: the open watch
	 * gets {"type":"ERROR","object":{"kind":"Status","code":410,...}} over HTTP 200. */
	fake_kube_api_pause_watches(f->api, 1);
	apply_pod(f->api, "DELETED", "shop", "web-5d8f7", UID_WEB, "node-a", NULL, 0);
	apply_pod(f->api, "ADDED", "jobs", "batch-x", UID_NEW, "node-a", fresh, 1);
	fake_kube_api_compact(f->api);
	fake_kube_api_pause_watches(f->api, 0);
	WAIT_FOR((k8s_pods_stats(f->pods, &st), st.relists == 1));
	assert_true(gone(f, ID_A));
	assert_true(gone(f, ID_B));
	assert_true(lookup(f, ID_D, "jobs", "batch-x", "worker"));
	assert_true(lookup(f, ID_C, "data", "db-0", "pg"));
	assert_int_equal(st.lists, 2);
	assert_int_equal(st.watch_events, 0);
	assert_int_equal(st.errors, 0);
	WAIT_FOR(open_watches(f) == 1);
	fake_kube_api_counts(f->api, &c);
	assert_string_equal(c.watch_rv, "1005"); /* from the new list */
}

static void test_k8s_pods_relists_after_http_410_gone(void **state)
{
	struct fixture *f = *state;
	struct k8s_pods_stats st;

	f->pods = start(f, fake_kube_api_url(f->api), 0);
	assert_non_null(f->pods);
	assert_int_equal(k8s_pods_wait_synced(f->pods, 3000), 0);
	WAIT_FOR(open_watches(f) == 1);
	fake_kube_api_fail_watches(f->api, 410, 1);
	fake_kube_api_end_watches(f->api);
	WAIT_FOR((k8s_pods_stats(f->pods, &st), st.relists == 1));
	WAIT_FOR(open_watches(f) == 1);
	assert_true(lookup(f, ID_A, "shop", "web-5d8f7", "app"));
	k8s_pods_stats(f->pods, &st);
	assert_int_equal(st.lists, 2);
	assert_int_equal(st.errors, 0);
	assert_int_equal(st.watches, 3);
}

static void test_k8s_pods_relists_when_resuming_keeps_failing(void **state)
{
	struct fixture *f = *state;
	struct k8s_pods_stats st;

	f->pods = start(f, fake_kube_api_url(f->api), 0);
	assert_non_null(f->pods);
	assert_int_equal(k8s_pods_wait_synced(f->pods, 3000), 0);
	WAIT_FOR(open_watches(f) == 1);
	fake_kube_api_fail_watches(f->api, 500, 3);
	fake_kube_api_end_watches(f->api);
	WAIT_FOR((k8s_pods_stats(f->pods, &st), st.relists == 1));
	WAIT_FOR(open_watches(f) == 1);
	k8s_pods_stats(f->pods, &st);
	assert_int_equal(st.errors, 3);
	assert_int_equal(st.watches, 5); /* the first, three refused, one after the relist */
	assert_true(lookup(f, ID_A, "shop", "web-5d8f7", "app"));
}

static void test_k8s_pods_sends_the_token_and_rereads_it_when_rotated(void **state)
{
	struct fixture *f = *state;
	struct fake_kube_counts c;
	struct k8s_pods_stats st;
	unsigned int unauthorized;

	write_token(f, "stale-token");
	f->pods = start(f, fake_kube_api_url(f->api), 0);
	assert_non_null(f->pods);
	assert_int_equal(k8s_pods_wait_synced(f->pods, 150), -ETIMEDOUT);
	fake_kube_api_counts(f->api, &c);
	assert_true(c.unauthorized >= 1);
	assert_int_equal(c.lists, 0);
	k8s_pods_stats(f->pods, &st);
	assert_true(st.errors >= 1);
	assert_true(gone(f, ID_A));
	/* The kubelet rotates the projected token: the next request carries the new one. */
	write_token(f, TOKEN);
	assert_int_equal(k8s_pods_wait_synced(f->pods, 3000), 0);
	assert_true(lookup(f, ID_A, "shop", "web-5d8f7", "app"));
	WAIT_FOR(open_watches(f) == 1);
	fake_kube_api_counts(f->api, &c);
	unauthorized = c.unauthorized;
	/* And again while watching: the server moves on, so does the file. */
	fake_kube_api_set_token(f->api, "tok-2");
	write_token(f, "tok-2");
	fake_kube_api_end_watches(f->api);
	WAIT_FOR((fake_kube_api_counts(f->api, &c), c.watches == 2 && c.open_watches == 1));
	assert_int_equal(c.unauthorized, unauthorized);
}

static void test_k8s_pods_drops_pods_beyond_the_limit(void **state)
{
	struct fixture *f = *state;
	struct k8s_pods_stats st;

	f->pods = start(f, fake_kube_api_url(f->api), 1);
	assert_non_null(f->pods);
	assert_int_equal(k8s_pods_wait_synced(f->pods, 3000), 0);
	k8s_pods_stats(f->pods, &st);
	assert_int_equal(st.pods, 1);
	assert_int_equal(st.pods_dropped, 1);
}

/* A port on 127.0.0.1 where nothing listens: connections are refused at once. */
static unsigned int closed_port(void)
{
	struct sockaddr_in sa = { .sin_family = AF_INET,
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(sa);
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	assert_true(fd >= 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&sa, &len), 0);
	close(fd);
	return ntohs(sa.sin_port);
}

static void test_k8s_pods_down_server_misses_without_blocking(void **state)
{
	struct fixture *f = *state;
	struct k8s_pods_stats st;
	uint64_t t0;
	char url[64];
	int i;

	snprintf(url, sizeof(url), "http://127.0.0.1:%u", closed_port());
	f->pods = start(f, url, 0);
	assert_non_null(f->pods);
	t0 = now_ms();
	for (i = 0; i < 1000; i++)
		assert_true(gone(f, ID_A));
	assert_true(now_ms() - t0 < 100);
	WAIT_FOR((k8s_pods_stats(f->pods, &st), st.errors >= 3)); /* retried with backoff */
	assert_int_equal(st.synced, 0);
	assert_int_equal(st.lists, 0);
	t0 = now_ms();
	k8s_pods_free(f->pods);
	f->pods = NULL;
	assert_true(now_ms() - t0 < 500);
}

static void test_k8s_pods_free_interrupts_a_hanging_request(void **state)
{
	struct sockaddr_in sa = { .sin_family = AF_INET,
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	struct fixture *f = *state;
	socklen_t len = sizeof(sa);
	uint64_t t0;
	char url[64];
	int fd;

	/* Listens but never answers: the connection completes and the list request hangs. */
	fd = socket(AF_INET, SOCK_STREAM, 0);
	assert_true(fd >= 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(listen(fd, 8), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&sa, &len), 0);
	snprintf(url, sizeof(url), "http://127.0.0.1:%u", ntohs(sa.sin_port));
	f->pods = start(f, url, 0);
	assert_non_null(f->pods);
	usleep(100 * 1000);
	t0 = now_ms();
	assert_true(gone(f, ID_A));
	assert_int_equal(k8s_pods_wait_synced(f->pods, 0), -ETIMEDOUT);
	assert_true(now_ms() - t0 < 50);
	k8s_pods_free(f->pods);
	f->pods = NULL;
	assert_true(now_ms() - t0 < 300);
	close(fd);
}

static void test_k8s_pods_rejects_missing_options(void **state)
{
	struct k8s_pods_options o = { .api_url = "http://127.0.0.1:1" };

	(void)state;
	errno = 0;
	assert_null(k8s_pods_new(&o));
	assert_int_equal(errno, EINVAL);
	o.api_url = NULL;
	o.node_name = "node-a";
	assert_null(k8s_pods_new(&o));
	assert_int_equal(errno, EINVAL);
}

#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_k8s_pods_lists_this_nodes_pods_across_pages),
		T(test_k8s_pods_escapes_the_node_name_in_its_urls),
		T(test_k8s_pods_follows_added_modified_deleted_and_bookmarks),
		T(test_k8s_pods_resumes_a_watch_from_the_last_resource_version),
		T(test_k8s_pods_relists_after_an_expired_error_event),
		T(test_k8s_pods_relists_after_http_410_gone),
		T(test_k8s_pods_relists_when_resuming_keeps_failing),
		T(test_k8s_pods_sends_the_token_and_rereads_it_when_rotated),
		T(test_k8s_pods_drops_pods_beyond_the_limit),
		T(test_k8s_pods_down_server_misses_without_blocking),
		T(test_k8s_pods_free_interrupts_a_hanging_request),
		cmocka_unit_test(test_k8s_pods_rejects_missing_options),
	};

	return cmocka_run_group_tests_name("k8s_pods", tests, curl_group_setup,
					   curl_group_teardown);
}
