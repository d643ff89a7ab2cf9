// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Unit tests for k8s_meta: when Kubernetes counts as off, and labels of processes on a fake proc
 * root joined to a fake API server's pods, across MODIFIED and DELETED and while it is down. */
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
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>
#include <curl/curl.h>

#include "fake_kube_api.h"
#include "k8s/k8s_meta.h"
#include "text_file.h"
#include "tmpdir.h"
#include "util/clock.h"
#include "wait_for.h"
#include "util/log.h"
#include "curl_group.h"

#define ID_A "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
#define ID_C "cccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccc"
#define ID_E "eeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee"
#define ID_F "ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff"
#define UID_WEB "11111111-1111-4111-8111-111111111111"
#define UID_WEB_US "11111111_1111_4111_8111_111111111111"
#define UID_DB "22222222-2222-4222-8222-222222222222"
#define TOKEN "meta-token"

struct fixture {
	char *dir;
	char proc[4096], token_path[4096];
	struct fake_kube_api *api;
	struct k8s_meta *meta;
};

/* CLOCK_MONOTONIC in ms. */
static uint64_t now_ms(void)
{
	return clock_mono_ns() / NS_PER_MS;
}

static void fake_process(struct fixture *f, int pid, const char *cgroup)
{
	char path[4200];

	snprintf(path, sizeof(path), "%s/%d", f->proc, pid);
	assert_int_equal(mkdir(path, 0755), 0);
	snprintf(path, sizeof(path), "%s/%d/cgroup", f->proc, pid);
	text_file_write(path, cgroup);
}

static void apply_pod(struct fake_kube_api *api, const char *type, const char *ns, const char *name,
		      const char *uid, const struct fake_kube_container *c, size_t n)
{
	char *json = fake_kube_pod_json(ns, name, uid, "node-a", c, n);

	assert_non_null(json);
	assert_int_equal(fake_kube_api_apply(api, type, json), 0);
	free(json);
}

static int setup(void **state)
{
	const struct fake_kube_container web[] = { { "app", "containerd://" ID_A, NULL } };
	const struct fake_kube_container db[] = { { "pg", "containerd://" ID_C, NULL } };
	struct fixture *f = calloc(1, sizeof(*f));

	if (!f || !(f->dir = tmpdir_new("k8smeta")))
		return -1;
	snprintf(f->proc, sizeof(f->proc), "%s/proc", f->dir);
	snprintf(f->token_path, sizeof(f->token_path), "%s/token", f->dir);
	if (mkdir(f->proc, 0755))
		return -1;
	text_file_write(f->token_path, TOKEN "\n");
	f->api = fake_kube_api_new(TOKEN);
	if (!f->api)
		return -1;
	apply_pod(f->api, "ADDED", "shop", "web-5d8f7", UID_WEB, web, 1);
	apply_pod(f->api, "ADDED", "data", "db-0", UID_DB, db, 1);
	/* containerd, systemd driver, cgroup v2 */
	fake_process(f, 100,
		     "0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" UID_WEB_US
		     ".slice/cri-containerd-" ID_A ".scope\n");
	fake_process(f, 101, "0::/system.slice/sshd.service\n");
	/* cgroupfs on v1: a container the API has not reported yet, in a known pod */
	fake_process(f, 102, "5:memory:/kubepods/besteffort/pod" UID_DB "/" ID_F "\n");
	fake_process(f, 103, "0::/system.slice/docker-" ID_F ".scope\n");
	fake_process(f, 105, "this is not a cgroup file\n");
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	k8s_meta_free(f->meta);
	fake_kube_api_free(f->api);
	tmpdir_remove(f->dir);
	free(f);
	return 0;
}

static struct k8s_meta *start(struct fixture *f, const char *url)
{
	struct k8s_meta_options o = {
		.api_url = url,
		.node_name = "node-a",
		.token_path = f->token_path,
		.connect_timeout_ms = 1000,
		.backoff_initial_ms = 10,
		.backoff_max_ms = 50,
		.watch_timeout_s = 5,
	};

	return k8s_meta_new(&o);
}

static int labels_are(struct fixture *f, int pid, const char *ns, const char *pod,
		      const char *container)
{
	struct k8s_labels l;

	return !k8s_meta_lookup(f->meta, f->proc, pid, &l) && !strcmp(l.namespace, ns) &&
	       !strcmp(l.pod, pod) && !strcmp(l.container, container);
}

static void test_k8s_meta_is_off_outside_kubernetes(void **state)
{
	struct fixture *f = *state;
	struct k8s_meta_options o = { .node_name = "node-a", .token_path = f->token_path };

	unsetenv("KUBERNETES_SERVICE_HOST");
	errno = 0;
	assert_null(k8s_meta_new(&o));
	assert_int_equal(errno, ENOENT);
	/* In a pod without a node name or without a mounted token: off as well. */
	setenv("KUBERNETES_SERVICE_HOST", "127.0.0.1", 1);
	setenv("KUBERNETES_SERVICE_PORT", "1", 1);
	unsetenv("NODE_NAME");
	o.node_name = NULL;
	assert_null(k8s_meta_new(&o));
	assert_int_equal(errno, ENOENT);
	o.node_name = "node-a";
	o.token_path = "/nonexistent/token";
	assert_null(k8s_meta_new(&o));
	assert_int_equal(errno, ENOENT);
	/* Everything there (NODE_NAME from the downward API): it starts. */
	setenv("NODE_NAME", "node-a", 1);
	o.node_name = NULL;
	o.token_path = f->token_path;
	f->meta = k8s_meta_new(&o);
	assert_non_null(f->meta);
	unsetenv("KUBERNETES_SERVICE_HOST");
	unsetenv("KUBERNETES_SERVICE_PORT");
	unsetenv("NODE_NAME");
}

static void test_k8s_meta_labels_processes_by_their_cgroup(void **state)
{
	struct fixture *f = *state;
	struct k8s_meta_stats st;
	struct k8s_labels l;
	char svc[128];

	f->meta = start(f, fake_kube_api_url(f->api));
	assert_non_null(f->meta);
	assert_int_equal(k8s_meta_wait_synced(f->meta, 3000), 0);

	assert_int_equal(k8s_meta_lookup(f->meta, f->proc, 100, &l), 0);
	assert_string_equal(l.namespace, "shop");
	assert_string_equal(l.pod, "web-5d8f7");
	assert_string_equal(l.container, "app");
	assert_string_equal(l.container_id, ID_A);
	assert_string_equal(l.pod_uid, UID_WEB);
	assert_int_equal(k8s_meta_service_name(&l, svc, sizeof(svc)), 0);
	assert_string_equal(svc, "shop/app");
	assert_int_equal(k8s_meta_service_name(&l, svc, 8), -ENAMETOOLONG);
	assert_string_equal(svc, "");

	assert_int_equal(k8s_meta_lookup(f->meta, f->proc, 101, &l), -ENOENT);
	assert_string_equal(l.container_id, "");
	assert_string_equal(l.namespace, "");
	/* Only the pod is known: labels without a container, and no derived service name. */
	assert_int_equal(k8s_meta_lookup(f->meta, f->proc, 102, &l), 0);
	assert_string_equal(l.namespace, "data");
	assert_string_equal(l.pod, "db-0");
	assert_string_equal(l.container, "");
	assert_int_equal(k8s_meta_service_name(&l, svc, sizeof(svc)), -ENOENT);
	/* A container no pod on this node runs (plain docker): a miss naming the container. */
	assert_int_equal(k8s_meta_lookup(f->meta, f->proc, 103, &l), -ENOENT);
	assert_string_equal(l.container_id, ID_F);
	assert_int_equal(k8s_meta_lookup(f->meta, f->proc, 104, &l), -ESRCH);
	assert_int_equal(k8s_meta_lookup(f->meta, f->proc, 105, &l), -EINVAL);

	k8s_meta_stats(f->meta, &st);
	assert_int_equal(st.lookups, 6);
	assert_int_equal(st.hits, 2);
	assert_int_equal(st.host, 1);
	assert_int_equal(st.misses, 1);
	assert_int_equal(st.cgroup_errors, 2);
	assert_int_equal(st.pods.pods, 2);
	assert_int_equal(st.pods.lists, 1);
}

static void test_k8s_meta_follows_modified_and_deleted_pods(void **state)
{
	const struct fake_kube_container web[] = { { "app", "containerd://" ID_E, NULL } };
	struct fixture *f = *state;
	struct k8s_labels l;
	uint64_t gen;

	f->meta = start(f, fake_kube_api_url(f->api));
	assert_non_null(f->meta);
	assert_int_equal(k8s_meta_wait_synced(f->meta, 3000), 0);
	assert_true(labels_are(f, 100, "shop", "web-5d8f7", "app"));
	gen = k8s_meta_generation(f->meta);
	/* The container restarts: a new process in a new cgroup, a MODIFIED pod. */
	fake_process(f, 106,
		     "0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" UID_WEB_US
		     ".slice/cri-containerd-" ID_E ".scope\n");
	apply_pod(f->api, "MODIFIED", "shop", "web-5d8f7", UID_WEB, web, 1);
	WAIT_FOR(labels_are(f, 106, "shop", "web-5d8f7", "app"));
	assert_true(k8s_meta_generation(f->meta) > gen);
	/* The old container id is gone; its cgroup still names the pod, which is still there. */
	assert_true(labels_are(f, 100, "shop", "web-5d8f7", ""));
	apply_pod(f->api, "DELETED", "data", "db-0", UID_DB, NULL, 0);
	WAIT_FOR(k8s_meta_lookup(f->meta, f->proc, 102, &l) == -ENOENT);
	assert_string_equal(l.container_id, ID_F);
	assert_string_equal(l.pod, "");
}

static void test_k8s_meta_down_api_server_misses_without_blocking(void **state)
{
	struct sockaddr_in sa = { .sin_family = AF_INET,
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	struct fixture *f = *state;
	socklen_t len = sizeof(sa);
	struct k8s_meta_stats st;
	struct k8s_labels l;
	char url[64];
	uint64_t t0;
	int fd, i;

	fd = socket(AF_INET, SOCK_STREAM, 0);
	assert_true(fd >= 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&sa, &len), 0);
	close(fd); /* nothing listens there now */
	snprintf(url, sizeof(url), "http://127.0.0.1:%u", ntohs(sa.sin_port));
	f->meta = start(f, url);
	assert_non_null(f->meta);
	t0 = now_ms();
	for (i = 0; i < 100; i++) {
		assert_int_equal(k8s_meta_lookup(f->meta, f->proc, 100, &l), -ENOENT);
		assert_string_equal(l.container_id, ID_A);
	}
	/* Answered from memory: microseconds each. 10 ms each still holds under ASan on a loaded
	 * 2-CPU VM (200 ms for the 100 failed once there, beside a stress run). */
	assert_true(now_ms() - t0 < 1000);
	assert_int_equal(k8s_meta_wait_synced(f->meta, 100), -ETIMEDOUT);
	k8s_meta_stats(f->meta, &st);
	assert_true(st.pods.errors >= 1);
	assert_int_equal(st.misses, 100);
	t0 = now_ms();
	k8s_meta_free(f->meta);
	f->meta = NULL;
	assert_true(now_ms() - t0 < 500);
}

#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_k8s_meta_is_off_outside_kubernetes),
		T(test_k8s_meta_labels_processes_by_their_cgroup),
		T(test_k8s_meta_follows_modified_and_deleted_pods),
		T(test_k8s_meta_down_api_server_misses_without_blocking),
	};

	return cmocka_run_group_tests_name("k8s_meta", tests, curl_group_setup,
					   curl_group_teardown);
}
