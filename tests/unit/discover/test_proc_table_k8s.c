// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* proc_table with Kubernetes metadata: a process in a pod gets namespace/pod/container and, when
 * it names no OTel service, the service "<namespace>/<container>"; a pod the cache has not seen
 * yet is looked up again once the cache changes. Fake proc root + fake API server. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "discover/proc_table.h"
#include "fake_kube_api.h"
#include "k8s/k8s_meta.h"
#include "tmpdir.h"
#include "text_file.h"

#define ID_A "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
#define ID_B "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
#define UID_WEB "11111111-1111-4111-8111-111111111111"
#define UID_WEB_US "11111111_1111_4111_8111_111111111111"
#define TOKEN "pt-token"

struct fixture {
	char *dir;
	char proc[4096], token[4096];
	struct fake_kube_api *api;
	struct k8s_meta *meta;
	struct proc_table *table;
};

/* A containerd (systemd driver, cgroup v2) process of pod web with this container id. */
static void fake_pod_process(struct fixture *fx, int pid, const char *id, const char *environ,
			     size_t environ_len)
{
	char cgroup[512];

	snprintf(cgroup, sizeof(cgroup),
		 "0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" UID_WEB_US
		 ".slice/cri-containerd-%s.scope\n",
		 id);
	proc_file_write(fx->proc, pid, "cgroup", cgroup, strlen(cgroup));
	proc_file_write(fx->proc, pid, "comm", "server\n", 7);
	proc_file_write(fx->proc, pid, "environ", environ, environ_len);
}

static void apply_web(struct fixture *fx, const char *type, size_t ncontainers)
{
	const struct fake_kube_container c[] = { { "app", "containerd://" ID_A, NULL },
						 { "sidecar", "containerd://" ID_B, NULL } };
	char *json = fake_kube_pod_json("shop", "web-5d8f7", UID_WEB, "node-a", c, ncontainers);

	assert_non_null(json);
	assert_int_equal(fake_kube_api_apply(fx->api, type, json), 0);
	free(json);
}

static int setup(void **state)
{
	static struct fixture fx;
	struct k8s_meta_options o = { .node_name = "node-a",
				      .token_path = fx.token,
				      .connect_timeout_ms = 1000,
				      .backoff_initial_ms = 10,
				      .backoff_max_ms = 50,
				      .watch_timeout_s = 5 };
	FILE *f;

	memset(&fx, 0, sizeof(fx));
	fx.dir = tmpdir_new("pt-k8s");
	if (!fx.dir)
		return -1;
	snprintf(fx.proc, sizeof(fx.proc), "%s/proc", fx.dir);
	snprintf(fx.token, sizeof(fx.token), "%s/token", fx.dir);
	mkdir(fx.proc, 0755);
	f = fopen(fx.token, "w");
	if (!f)
		return -1;
	fputs(TOKEN, f);
	fclose(f);
	fx.api = fake_kube_api_new(TOKEN);
	if (!fx.api)
		return -1;
	apply_web(&fx, "ADDED", 1); /* only "app" is known at first */
	o.api_url = fake_kube_api_url(fx.api);
	fx.meta = k8s_meta_new(&o);
	fx.table = proc_table_new(16, fx.proc);
	if (!fx.meta || !fx.table || k8s_meta_wait_synced(fx.meta, 5000))
		return -1;
	proc_table_set_k8s(fx.table, fx.meta);
	*state = &fx;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *fx = *state;

	proc_table_free(fx->table);
	k8s_meta_free(fx->meta);
	fake_kube_api_free(fx->api);
	tmpdir_remove(fx->dir);
	return 0;
}

static void test_proc_table_names_pod_process_namespace_slash_container(void **state)
{
	struct fixture *fx = *state;
	struct proc_info scratch;
	const struct proc_info *p;

	fake_pod_process(fx, 200, ID_A, "PATH=/bin", sizeof("PATH=/bin"));
	p = proc_table_get(fx->table, 200, &scratch);
	assert_string_equal(p->service, "shop/app");
	assert_string_equal(p->k8s_namespace, "shop");
	assert_string_equal(p->k8s_pod, "web-5d8f7");
	assert_string_equal(p->k8s_container, "app");
}

static void test_proc_table_prefers_otel_service_name_in_pods(void **state)
{
	struct fixture *fx = *state;
	static const char env[] = "OTEL_SERVICE_NAME=checkout\0PATH=/bin";
	struct proc_info scratch;
	const struct proc_info *p;

	fake_pod_process(fx, 201, ID_A, env, sizeof(env));
	p = proc_table_get(fx->table, 201, &scratch);
	assert_string_equal(p->service, "checkout");
	assert_string_equal(p->k8s_pod, "web-5d8f7"); /* still placed in its pod */
}

static void test_proc_table_retries_a_container_the_cache_learns_later(void **state)
{
	struct fixture *fx = *state;
	struct proc_info scratch;
	const struct proc_info *p;
	int tries;

	fake_pod_process(fx, 202, ID_B, "", 1);
	p = proc_table_get(fx->table, 202, &scratch);
	assert_string_equal(p->service, "server"); /* not known yet: the executable's name */
	assert_string_equal(p->k8s_container, "");
	apply_web(fx, "MODIFIED", 2); /* the sidecar starts */
	for (tries = 0; tries < 500; tries++) {
		p = proc_table_get(fx->table, 202, &scratch);
		if (!strcmp(p->service, "shop/sidecar"))
			break;
		usleep(10000);
	}
	assert_string_equal(p->service, "shop/sidecar");
	assert_string_equal(p->k8s_container, "sidecar");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_proc_table_names_pod_process_namespace_slash_container),
		cmocka_unit_test(test_proc_table_prefers_otel_service_name_in_pods),
		cmocka_unit_test(test_proc_table_retries_a_container_the_cache_learns_later),
	};

	return cmocka_run_group_tests_name("proc_table_k8s", tests, setup, teardown);
}
