// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Unit tests for k8s_pod_table: Pod objects in the API's JSON shape to names and container ids,
 * replacing and removing pods, the container-id index, and the pod limit. */
#define _GNU_SOURCE
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <json-c/json.h>

#include "fake_kube_api.h"
#include "k8s/k8s_pod_table.h"

#define ID_A "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
#define ID_B "fedcba9876543210fedcba9876543210fedcba9876543210fedcba9876543210"
#define ID_C "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
#define ID_D "dddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddd"
#define UID_1 "11111111-2222-4333-8444-555555555555"

static int parse_text(const char *json, struct k8s_pod *pod, unsigned long *ignored)
{
	struct json_object *o = json_tokener_parse(json);
	int err;

	assert_non_null(o);
	err = k8s_pod_parse(o, pod, ignored);
	json_object_put(o);
	return err;
}

/* Builds a pod with fake_kube_pod_json() and parses it; the pod is the caller's to release. */
static void make_pod(struct k8s_pod *pod, const char *ns, const char *name, const char *uid,
		     const struct fake_kube_container *c, size_t n)
{
	char *json = fake_kube_pod_json(ns, name, uid, "node-a", c, n);
	unsigned long ignored = 0;

	assert_non_null(json);
	assert_int_equal(parse_text(json, pod, &ignored), 0);
	free(json);
}

static void test_k8s_pod_table_parses_every_status_list_and_runtime(void **state)
{
	const struct fake_kube_container c[] = {
		{ "app", "containerd://" ID_A, NULL },
		{ "sidecar", "cri-o://" ID_B, NULL },
		{ "pending", NULL, NULL },
		{ "setup", "docker://" ID_C, "initContainerStatuses" },
		{ "debugger", "containerd://" ID_D, "ephemeralContainerStatuses" },
	};
	struct k8s_pod pod;

	(void)state;
	make_pod(&pod, "shop", "checkout-7d9f8-abcde", UID_1, c, 5);
	assert_string_equal(pod.uid, UID_1);
	assert_string_equal(pod.namespace, "shop");
	assert_string_equal(pod.name, "checkout-7d9f8-abcde");
	assert_string_equal(pod.config_hash, "");
	assert_int_equal(pod.n_containers, 4);
	assert_string_equal(pod.containers[0].name, "app");
	assert_string_equal(pod.containers[0].id, ID_A);
	assert_string_equal(pod.containers[1].name, "sidecar");
	assert_string_equal(pod.containers[1].id, ID_B);
	assert_string_equal(pod.containers[2].name, "setup");
	assert_string_equal(pod.containers[2].id, ID_C);
	assert_string_equal(pod.containers[3].name, "debugger");
	assert_string_equal(pod.containers[3].id, ID_D);
	k8s_pod_release(&pod);
}

static void test_k8s_pod_table_rejects_what_is_not_a_pod(void **state)
{
	unsigned long ignored = 0;
	struct k8s_pod pod;
	char name[300], *json;

	(void)state;
	assert_int_equal(parse_text("{\"kind\":\"Status\",\"code\":410}", &pod, &ignored), -EINVAL);
	assert_int_equal(
		parse_text("{\"metadata\":{\"name\":\"a\",\"namespace\":\"b\"}}", &pod, &ignored),
		-EINVAL);
	assert_int_equal(parse_text("[1,2]", &pod, &ignored), -EINVAL);
	memset(name, 'n', 260);
	name[260] = '\0';
	json = fake_kube_pod_json("ns", name, UID_1, "node-a", NULL, 0);
	assert_int_equal(parse_text(json, &pod, &ignored), -EINVAL);
	free(json);
	/* Malformed ids are skipped and counted; the pod itself stays. */
	assert_int_equal(parse_text("{\"metadata\":{\"uid\":\"" UID_1 "\",\"name\":\"a\","
				    "\"namespace\":\"b\"},\"status\":{\"containerStatuses\":["
				    "{\"name\":\"x\",\"containerID\":\"containerd://abc\"},"
				    "{\"name\":\"y\",\"containerID\":\"" ID_A "\"},"
				    "{\"containerID\":\"containerd://" ID_B "\"},"
				    "{\"name\":\"z\",\"containerID\":\"containerd://" ID_C "\"}]}}",
				    &pod, &ignored),
			 0);
	assert_int_equal(ignored, 3);
	assert_int_equal(pod.n_containers, 1);
	assert_string_equal(pod.containers[0].name, "z");
	k8s_pod_release(&pod);
}

static void test_k8s_pod_table_static_pod_found_by_config_hash(void **state)
{
	unsigned long ignored = 0;
	struct k8s_pod_table t;
	struct k8s_pod pod;

	(void)state;
	k8s_pod_table_init(&t, 8);
	assert_int_equal(
		parse_text("{\"metadata\":{\"uid\":\"" UID_1 "\",\"name\":\"etcd-node-a\","
			   "\"namespace\":\"kube-system\",\"annotations\":{"
			   "\"kubernetes.io/config.hash\":\"0f1e2d3c4b5a69788796a5b4c3d2e1f0\""
			   "}}}",
			   &pod, &ignored),
		0);
	assert_int_equal(k8s_pod_table_put(&t, &pod), 0);
	assert_string_equal(k8s_pod_table_find_pod(&t, "0f1e2d3c4b5a69788796a5b4c3d2e1f0")->name,
			    "etcd-node-a");
	assert_string_equal(k8s_pod_table_find_pod(&t, UID_1)->name, "etcd-node-a");
	assert_null(k8s_pod_table_find_pod(&t, ""));
	k8s_pod_table_release(&t);
}

static void test_k8s_pod_table_replace_and_remove_update_the_index(void **state)
{
	const struct fake_kube_container before[] = { { "app", "containerd://" ID_A, NULL } };
	const struct fake_kube_container after[] = { { "app", "containerd://" ID_B, NULL } };
	const struct k8s_container *ctr;
	struct k8s_pod_table t;
	struct k8s_pod pod;

	(void)state;
	k8s_pod_table_init(&t, 8);
	make_pod(&pod, "shop", "web", UID_1, before, 1);
	assert_int_equal(k8s_pod_table_put(&t, &pod), 0);
	assert_null(pod.containers);
	assert_string_equal(k8s_pod_table_find_container(&t, ID_A, &ctr)->name, "web");
	assert_string_equal(ctr->name, "app");
	/* The container restarted: the same pod now names a new id. */
	make_pod(&pod, "shop", "web", UID_1, after, 1);
	assert_int_equal(k8s_pod_table_put(&t, &pod), 0);
	assert_int_equal(t.n_pods, 1);
	assert_null(k8s_pod_table_find_container(&t, ID_A, &ctr));
	assert_non_null(k8s_pod_table_find_container(&t, ID_B, &ctr));
	assert_int_equal(k8s_pod_table_remove(&t, UID_1), 0);
	assert_int_equal(k8s_pod_table_remove(&t, UID_1), -ENOENT);
	assert_null(k8s_pod_table_find_container(&t, ID_B, &ctr));
	assert_int_equal(k8s_pod_table_containers(&t), 0);
	k8s_pod_table_release(&t);
}

static void test_k8s_pod_table_is_bounded_and_indexes_many_pods(void **state)
{
	struct fake_kube_container c[2] = { { "app", NULL, NULL }, { "log", NULL, NULL } };
	char ids[2][80], uid[40], name[32];
	const struct k8s_container *ctr;
	const struct k8s_pod *hit;
	struct k8s_pod_table t;
	struct k8s_pod pod;
	int i;

	(void)state;
	k8s_pod_table_init(&t, 300);
	for (i = 0; i < 301; i++) {
		snprintf(ids[0], sizeof(ids[0]), "containerd://%064x", i * 2);
		snprintf(ids[1], sizeof(ids[1]), "containerd://%064x", i * 2 + 1);
		c[0].container_id = ids[0];
		c[1].container_id = ids[1];
		snprintf(uid, sizeof(uid), "%08x-0000-4000-8000-000000000000", i);
		snprintf(name, sizeof(name), "pod-%d", i);
		make_pod(&pod, "ns", name, uid, c, 2);
		assert_int_equal(k8s_pod_table_put(&t, &pod), i < 300 ? 0 : -ENOSPC);
	}
	assert_int_equal(t.n_pods, 300);
	assert_int_equal(k8s_pod_table_containers(&t), 600);
	for (i = 0; i < 600; i++) {
		snprintf(ids[0], sizeof(ids[0]), "%064x", i);
		hit = k8s_pod_table_find_container(&t, ids[0], &ctr);
		assert_non_null(hit);
		snprintf(name, sizeof(name), "pod-%d", i / 2);
		assert_string_equal(hit->name, name);
		assert_string_equal(ctr->name, i % 2 ? "log" : "app");
	}
	snprintf(ids[0], sizeof(ids[0]), "%064x", 600);
	assert_null(k8s_pod_table_find_container(&t, ids[0], &ctr));
	k8s_pod_table_release(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_k8s_pod_table_parses_every_status_list_and_runtime),
		cmocka_unit_test(test_k8s_pod_table_rejects_what_is_not_a_pod),
		cmocka_unit_test(test_k8s_pod_table_static_pod_found_by_config_hash),
		cmocka_unit_test(test_k8s_pod_table_replace_and_remove_update_the_index),
		cmocka_unit_test(test_k8s_pod_table_is_bounded_and_indexes_many_pods),
	};

	return cmocka_run_group_tests_name("k8s_pod_table", tests, NULL, NULL);
}
