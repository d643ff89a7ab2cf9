// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* One window, two services, written to the output directory and pushed to a receiver on
 * 127.0.0.1: every profile of a window carries the same start and duration in its local file and
 * in its push, whichever service and output came first, and `go tool pprof` reads both. */
#define _GNU_SOURCE
#include <dirent.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "agent_proc.h"
#include "pprof_file.h"
#include "push_fixture.h"

#define MAX_PROFILES 256
#define NSERVICES 2

static const char *const services[NSERVICES] = { "win-a", "win-b" };

/* One profile as written or pushed: which service, which window. */
struct seen {
	int service; /* index in services */
	int64_t time_ns, duration_ns;
};

struct fixture {
	struct push_fixture push;
	pid_t spin[NSERVICES];
};

static int setup(void **state)
{
	static struct fixture fx;
	int r;

	memset(&fx, 0, sizeof(fx));
	r = push_fixture_open(&fx.push, "it-window-time");
	*state = r ? NULL : &fx;
	return r < 0 ? -1 : 0;
}

static int teardown(void **state)
{
	struct fixture *fx = *state;

	if (!fx)
		return 0;
	push_fixture_close(&fx->push);
	for (int i = 0; i < NSERVICES; i++) {
		if (fx->spin[i] > 0) {
			kill(fx->spin[i], SIGKILL);
			waitpid(fx->spin[i], NULL, 0);
		}
	}
	return 0;
}

static int service_index(const char *name)
{
	for (int i = 0; i < NSERVICES; i++)
		if (name && !strcmp(name, services[i]))
			return i;
	return -1;
}

/* A shell spinning on the CPU until killed, named by OTEL_SERVICE_NAME. */
static pid_t start_spinner(const char *service)
{
	const char *argv[] = { "/bin/sh", "-c", "while :; do :; done", NULL };
	char env_service[64];
	const char *env[] = { env_service, NULL };
	pid_t pid;

	snprintf(env_service, sizeof(env_service), "OTEL_SERVICE_NAME=%s", service);
	pid = workload_start(argv, env, NULL);
	assert_true(pid > 0);
	assert_int_equal(workload_wait_exec(pid, "/bin/sh", 30), 0);
	return pid;
}

/* The local files: <time>-<seq>-<service>.pb.gz; each is also checked with `go tool pprof`. */
static size_t read_local(const char *dir, struct seen *out, int *go_checked)
{
	char path[1024], goerr[256];
	struct dirent *de;
	size_t n = 0;
	DIR *d = opendir(dir);

	assert_non_null(d);
	while ((de = readdir(d)) && n < MAX_PROFILES) {
		Perftools__Profiles__Profile *p;
		char *svc = strchr(de->d_name, '-');

		if (!strstr(de->d_name, ".pb.gz") || de->d_name[0] == '.' || !svc)
			continue;
		svc = strchr(svc + 1, '-');
		assert_non_null(svc);
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		*strstr(svc, ".pb.gz") = '\0';
		out[n].service = service_index(svc + 1);
		assert_true(out[n].service >= 0);
		p = pprof_file_read(path);
		assert_non_null(p);
		out[n].time_ns = p->time_nanos;
		out[n++].duration_ns = p->duration_nanos;
		pprof_file_free(p);
		if (!*go_checked) {
			int rc = pprof_file_check_with_go(path, goerr, sizeof(goerr));

			if (rc < 0)
				fail_msg("go tool pprof cannot read %s: %s", path, goerr);
			*go_checked = rc == 0;
		}
	}
	closedir(d);
	return n;
}

/* Writes one pushed profile's bytes to a file for `go tool pprof`. */
static int check_pushed_with_go(const char *dir, const ProtobufCBinaryData *raw)
{
	char path[1024], goerr[256];
	FILE *f;
	int rc;

	snprintf(path, sizeof(path), "%s/pushed.pb", dir);
	f = fopen(path, "w");
	assert_non_null(f);
	assert_int_equal(fwrite(raw->data, 1, raw->len, f), raw->len);
	assert_int_equal(fclose(f), 0);
	rc = pprof_file_check_with_go(path, goerr, sizeof(goerr));
	if (rc < 0)
		fail_msg("go tool pprof cannot read a pushed profile: %s", goerr);
	return rc == 0;
}

static size_t read_pushed(struct fixture *fx, struct seen *out, int *go_checked)
{
	size_t n = 0;

	for (size_t i = 0; i < push_receiver_count(fx->push.rx) && n < MAX_PROFILES; i++) {
		const struct push_record *rec = push_receiver_record(fx->push.rx, i);

		assert_non_null(rec->req);
		assert_int_equal(rec->nprofiles, 1);
		assert_non_null(rec->profiles[0]);
		out[n].service = service_index(push_record_label(rec, 0, "service_name"));
		assert_true(out[n].service >= 0);
		out[n].time_ns = rec->profiles[0]->time_nanos;
		out[n++].duration_ns = rec->profiles[0]->duration_nanos;
		if (!*go_checked)
			*go_checked = check_pushed_with_go(
				fx->push.dir, &rec->req->series[0]->samples[0]->raw_profile);
	}
	return n;
}

static const struct seen *find(const struct seen *all, size_t n, int service, int64_t time_ns)
{
	for (size_t i = 0; i < n; i++)
		if (all[i].service == service && all[i].time_ns == time_ns)
			return &all[i];
	return NULL;
}

static void test_local_and_pushed_profiles_of_a_window_share_its_time(void **state)
{
	static struct seen local[MAX_PROFILES], pushed[MAX_PROFILES];
	struct fixture *fx = *state;
	char out[600], pid_a[16], pid_b[16];
	const char *argv[] = { "--pid",	   pid_a, "--pid",    pid_b, "--interval", "1",
			       "--output", out,	  "--server", NULL,  NULL };
	int go_local = 0, go_pushed = 0, want, both = 0;
	size_t nlocal, npushed;

	if (!fx)
		skip();
	snprintf(out, sizeof(out), "%s/out", fx->push.dir);
	argv[9] = push_receiver_url(fx->push.rx);
	for (int i = 0; i < NSERVICES; i++)
		fx->spin[i] = start_spinner(services[i]);
	snprintf(pid_a, sizeof(pid_a), "%d", (int)fx->spin[0]);
	snprintf(pid_b, sizeof(pid_b), "%d", (int)fx->spin[1]);
	assert_int_equal(agent_proc_start(&fx->push.agent, fx->push.dir, argv), 0);
	/* Three whole windows with both services in them, then the partial last one at stop. */
	want = 3;
	for (int i = 0;
	     i < 3000 && agent_proc_log_count(&fx->push.agent, "window written: 2") < want; i++)
		usleep(10000);
	assert_true(agent_proc_log_count(&fx->push.agent, "window written: 2") >= want);
	assert_int_equal(agent_proc_stop(&fx->push.agent), 0);
	fx->push.agent.pid = 0;

	nlocal = read_local(out, local, &go_local);
	npushed = read_pushed(fx, pushed, &go_pushed);
	printf("  %zu local and %zu pushed profiles\n", nlocal, npushed);
	assert_true(npushed >= 2 * (size_t)want);
	/* Every push has its local file, with the same window; a window's services agree. */
	for (size_t i = 0; i < npushed; i++) {
		const struct seen *l = find(local, nlocal, pushed[i].service, pushed[i].time_ns);
		const struct seen *other =
			find(local, nlocal, !pushed[i].service, pushed[i].time_ns);

		if (!l)
			fail_msg("pushed window %lld of %s has no local file",
				 (long long)pushed[i].time_ns, services[pushed[i].service]);
		assert_int_equal(l->duration_ns, pushed[i].duration_ns);
		assert_true(pushed[i].duration_ns > 0);
		if (other) {
			assert_int_equal(other->duration_ns, pushed[i].duration_ns);
			both++;
		}
	}
	assert_true(both >= 2 * want);
	/* Consecutive windows meet: each starts where the one before ended. */
	for (size_t i = 0; i < nlocal; i++) {
		const struct seen *next = find(local, nlocal, local[i].service,
					       local[i].time_ns + local[i].duration_ns);
		int64_t last = 0;

		for (size_t j = 0; j < nlocal; j++)
			if (local[j].service == local[i].service && local[j].time_ns > last)
				last = local[j].time_ns;
		if (local[i].time_ns != last)
			assert_non_null(next);
	}
	if (!go_local || !go_pushed)
		printf("  go is not on PATH: profiles not checked with go tool pprof\n");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(
			test_local_and_pushed_profiles_of_a_window_share_its_time, setup, teardown),
	};

	return cmocka_run_group_tests_name("window_time", tests, NULL, NULL);
}
