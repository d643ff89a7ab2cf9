// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Unit tests for cgroup_id: /proc/PID/cgroup texts as containerd, CRI-O, docker and systemd
 * write them under cgroup v1 and v2, host processes, malformed text, and a fake proc root. */
#define _GNU_SOURCE
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "k8s/cgroup_id.h"
#include "tmpdir.h"

#define ID_A "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
#define ID_B "fedcba9876543210fedcba9876543210fedcba9876543210fedcba9876543210"
#define UID_A "5c8b0a4c-1d2e-4f60-8a9b-0c1d2e3f4a5b"
#define UID_A_US "5c8b0a4c_1d2e_4f60_8a9b_0c1d2e3f4a5b"

static void expect_container(const char *text, const char *id, const char *uid)
{
	struct cgroup_id cg;

	memset(&cg, 'x', sizeof(cg));
	assert_int_equal(cgroup_id_parse(text, &cg), 0);
	assert_string_equal(cg.container_id, id);
	assert_string_equal(cg.pod_uid, uid);
}

static void test_cgroup_id_containerd_cgroupfs_v1_uses_memory_line(void **state)
{
	(void)state;
	/* k3s / kubeadm with the cgroupfs driver on a v1 host; the unified line (hybrid
	 * mode) still shows the shim's cgroup and must not win. */
	expect_container("12:hugetlb:/kubepods/burstable/pod" UID_A "/" ID_A "\n"
			 "11:memory:/kubepods/burstable/pod" UID_A "/" ID_A "\n"
			 "10:cpu,cpuacct:/kubepods/burstable/pod" UID_A "/" ID_A "\n"
			 "9:pids:/kubepods/burstable/pod" UID_A "/" ID_A "\n"
			 "1:name=systemd:/kubepods/burstable/pod" UID_A "/" ID_A "\n"
			 "0::/system.slice/containerd.service\n",
			 ID_A, UID_A);
}

static void test_cgroup_id_guaranteed_pod_has_no_qos_level(void **state)
{
	(void)state;
	expect_container("4:memory:/kubepods/pod" UID_A "/" ID_B "\n", ID_B, UID_A);
	expect_container("0::/kubepods.slice/kubepods-pod" UID_A_US ".slice/cri-containerd-" ID_B
			 ".scope\n",
			 ID_B, UID_A);
}

static void test_cgroup_id_containerd_systemd_v2(void **state)
{
	(void)state;
	expect_container(
		"0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" UID_A_US
		".slice/cri-containerd-" ID_A ".scope\n",
		ID_A, UID_A);
}

static void test_cgroup_id_crio_v2_and_v1(void **state)
{
	(void)state;
	expect_container(
		"0::/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod" UID_A_US
		".slice/crio-" ID_B ".scope\n",
		ID_B, UID_A);
	/* CRI-O with cgroupfs on v1 names the directory crio-<id>, without ".scope". */
	expect_container("8:memory:/kubepods/besteffort/pod" UID_A "/crio-" ID_B "\n"
			 "2:cpu,cpuacct:/kubepods/besteffort/pod" UID_A "/crio-" ID_B "\n",
			 ID_B, UID_A);
}

static void test_cgroup_id_crio_conmon_is_not_a_container(void **state)
{
	struct cgroup_id cg;

	(void)state;
	assert_int_equal(cgroup_id_parse("0::/kubepods.slice/kubepods-burstable.slice/"
					 "kubepods-burstable-pod" UID_A_US
					 ".slice/crio-conmon-" ID_B ".scope\n",
					 &cg),
			 -ENOENT);
}

static void test_cgroup_id_docker_formats(void **state)
{
	(void)state;
	/* Plain docker: cgroupfs on v1, systemd driver on v2 (no pod). */
	expect_container("9:perf_event:/docker/" ID_A "\n4:memory:/docker/" ID_A "\n"
			 "2:cpu:/docker/" ID_A "\n",
			 ID_A, "");
	expect_container("0::/system.slice/docker-" ID_B ".scope\n", ID_B, "");
	/* cri-dockerd under the kubelet with the systemd driver on v1. */
	expect_container(
		"11:memory:/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" UID_A_US
		".slice/docker-" ID_A ".scope\n"
		"1:name=systemd:/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" UID_A_US
		".slice/docker-" ID_A ".scope\n",
		ID_A, UID_A);
}

static void test_cgroup_id_innermost_container_and_sub_cgroup(void **state)
{
	(void)state;
	/* kind: the node is itself a docker container; the pod's container is the inner one. */
	expect_container("0::/docker/" ID_B "/kubepods/burstable/pod" UID_A "/" ID_A "\n", ID_A,
			 UID_A);
	/* A runtime's own sub-cgroup below the container's scope. */
	expect_container("0::/kubepods.slice/kubepods-pod" UID_A_US ".slice/crio-" ID_B
			 ".scope/container\n",
			 ID_B, UID_A);
}

static void test_cgroup_id_path_from_another_cgroup_namespace(void **state)
{
	(void)state;
	/* The agent in its own cgroup namespace sees other pods' paths relative to its root. */
	expect_container("0::/../../kubepods-besteffort-pod" UID_A_US ".slice/cri-containerd-" ID_A
			 ".scope\n",
			 ID_A, UID_A);
}

static void test_cgroup_id_static_pod_config_hash(void **state)
{
	(void)state;
	expect_container("0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-"
			 "pod0f1e2d3c4b5a69788796a5b4c3d2e1f0.slice/cri-containerd-" ID_A
			 ".scope\n",
			 ID_A, "0f1e2d3c4b5a69788796a5b4c3d2e1f0");
}

static void test_cgroup_id_host_processes_are_enoent(void **state)
{
	struct cgroup_id cg;

	(void)state;
	assert_int_equal(cgroup_id_parse("0::/system.slice/sshd.service\n", &cg), -ENOENT);
	assert_int_equal(cgroup_id_parse("0::/\n", &cg), -ENOENT);
	assert_int_equal(cgroup_id_parse("0::/user.slice/user-1000.slice/session-3.scope\n", &cg),
			 -ENOENT);
	/* A pod's own slice (no container below it) and the pause-less QoS level. */
	assert_int_equal(cgroup_id_parse("0::/kubepods.slice/kubepods-burstable.slice/kubepods-"
					 "burstable-pod" UID_A_US ".slice\n",
					 &cg),
			 -ENOENT);
	assert_int_equal(
		cgroup_id_parse("12:memory:/user.slice\n11:cpu,cpuacct:/user.slice\n"
				"1:name=systemd:/user.slice/user-0.slice/session-1.scope\n",
				&cg),
		-ENOENT);
}

static void test_cgroup_id_rejects_malformed_text(void **state)
{
	struct cgroup_id cg;

	(void)state;
	assert_int_equal(cgroup_id_parse("", &cg), -EINVAL);
	assert_int_equal(cgroup_id_parse("garbage\nno colons here\n", &cg), -EINVAL);
	assert_int_equal(cgroup_id_parse(":memory:/docker/" ID_A "\n", &cg), -EINVAL);
	/* Near misses: 63 and 65 digits, upper case, a bad pod UID (the container still counts). */
	assert_int_equal(cgroup_id_parse("0::/docker/" ID_A "f\n", &cg), -ENOENT);
	assert_int_equal(cgroup_id_parse("0::/docker/0123456789ABCDEF0123456789abcdef0123456789"
					 "abcdef0123456789abcdef\n",
					 &cg),
			 -ENOENT);
	assert_int_equal(cgroup_id_parse("0::/docker-0123456789abcdef.scope\n", &cg), -ENOENT);
	expect_container("0::/kubepods/podnot-a-uid/" ID_A "\n", ID_A, "");
	/* A malformed line next to a good one is skipped; no trailing newline is fine. */
	expect_container("junk\n0::/docker/" ID_A, ID_A, "");
}

static int setup(void **state)
{
	*state = tmpdir_new("cgroupid");
	return *state ? 0 : -1;
}

static void test_cgroup_id_reads_under_a_proc_root(void **state)
{
	const char *root = *state;
	struct cgroup_id cg;
	char path[4096];
	FILE *f;
	int err;

	snprintf(path, sizeof(path), "%s/4242", root);
	assert_int_equal(mkdir(path, 0755), 0);
	snprintf(path, sizeof(path), "%s/4242/cgroup", root);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs("0::/kubepods.slice/kubepods-pod" UID_A_US ".slice/cri-containerd-" ID_A ".scope\n",
	      f);
	fclose(f);
	assert_int_equal(cgroup_id_read(root, 4242, &cg), 0);
	assert_string_equal(cg.container_id, ID_A);
	assert_string_equal(cg.pod_uid, UID_A);
	assert_int_equal(cgroup_id_read(root, 4243, &cg), -ESRCH);
	/* The real /proc: this test runs on a host or in a container; either answer is valid. */
	err = cgroup_id_read(NULL, getpid(), &cg);
	assert_true(err == 0 || err == -ENOENT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cgroup_id_containerd_cgroupfs_v1_uses_memory_line),
		cmocka_unit_test(test_cgroup_id_guaranteed_pod_has_no_qos_level),
		cmocka_unit_test(test_cgroup_id_containerd_systemd_v2),
		cmocka_unit_test(test_cgroup_id_crio_v2_and_v1),
		cmocka_unit_test(test_cgroup_id_crio_conmon_is_not_a_container),
		cmocka_unit_test(test_cgroup_id_docker_formats),
		cmocka_unit_test(test_cgroup_id_innermost_container_and_sub_cgroup),
		cmocka_unit_test(test_cgroup_id_path_from_another_cgroup_namespace),
		cmocka_unit_test(test_cgroup_id_static_pod_config_hash),
		cmocka_unit_test(test_cgroup_id_host_processes_are_enoent),
		cmocka_unit_test(test_cgroup_id_rejects_malformed_text),
		cmocka_unit_test_setup_teardown(test_cgroup_id_reads_under_a_proc_root, setup,
						tmpdir_teardown),
	};

	return cmocka_run_group_tests_name("cgroup_id", tests, NULL, NULL);
}
