// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* An exec storm under the agent: a thousand children of a few ms each, most gone before the
 * agent could read their /proc. Afterwards the process table must be back near the number of
 * live processes (no entry per dead child), and every sample of the children must carry their
 * service (from OTEL_SERVICE_NAME), none "unknown_service", on a loaded machine too. */
#define _GNU_SOURCE
#include <dirent.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "agent_proc.h"
#include "metrics_scrape.h"
#include "pprof_file.h"
#include "profile_census.h"
#include "tmpdir.h"

#define CHILDREN "1000"
#define SPIN_MS "4"
#define FREQUENCY 100
#define KERNEL_HALF 0xffff800000000000ull
#define EVENTS_LOST "spanprof_samples_dropped_total{reason=\"proc_event_lost\"}"

struct fixture {
	struct agent_group g;
	int port;
};

/* The value of one metric line from /metrics (the line must be there). */
static double scrape(int port, const char *metric)
{
	double v = -1;

	assert_int_equal(metrics_scrape(port, metric, &v), 0);
	return v;
}

/* Processes alive on the machine now. */
static int live_processes(void)
{
	DIR *d = opendir("/proc");
	struct dirent *de;
	int n = 0;

	while (d && (de = readdir(d)))
		n += de->d_name[0] >= '1' && de->d_name[0] <= '9';
	if (d)
		closedir(d);
	return n;
}

static int group_setup(void **state)
{
	static struct fixture fx;
	const char *argv[] = { "--output",	 NULL,		"--interval", "1",
			       "--metrics-addr", "127.0.0.1:0", NULL };

	*state = &fx;
	if (agent_group_start(&fx.g, "execstorm", argv))
		return -1;
	if (fx.g.skip)
		return 0;
	fx.port = metrics_scrape_port(fx.g.agent.log_path);
	return fx.port > 0 ? 0 : -1;
}

static int group_teardown(void **state)
{
	struct fixture *fx = *state;

	return agent_group_stop(&fx->g);
}

/* Waits until `windows` more windows were written (interval 1 s), 60 s at most. */
static void wait_windows(const struct fixture *fx, int windows)
{
	double start = scrape(fx->port, "spanprof_windows_written_total");
	int i;

	for (i = 0; i < 600; i++) {
		if (scrape(fx->port, "spanprof_windows_written_total") >= start + windows)
			return;
		usleep(100000);
	}
	fail_msg("the agent wrote no %d windows within 60 s", windows);
}

static double run_storm(const struct fixture *fx, const char *service)
{
	const char *argv[] = { build_path("tests/workloads/exec_storm"), CHILDREN, SPIN_MS, NULL };
	char env_service[128], out[600], line[256];
	const char *env[] = { env_service, NULL };
	double cpu = -1;
	FILE *f;
	pid_t pid;

	snprintf(env_service, sizeof(env_service), "OTEL_SERVICE_NAME=%s", service);
	snprintf(out, sizeof(out), "%s/storm.out", fx->g.dir);
	pid = workload_start(argv, env, out);
	assert_true(pid > 0);
	assert_int_equal(workload_wait(pid, 300), 0);
	f = fopen(out, "r");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f))
		sscanf(line, "children %*d cpu %lf", &cpu);
	fclose(f);
	assert_true(cpu > 0);
	return cpu;
}

/* Where storm_child_spin() sits in the (non-PIE) storm binary, from nm -S. */
struct code_range {
	uint64_t lo, hi;
};

static struct code_range spin_range(void)
{
	char cmd[4200], line[256], name[128];
	struct code_range r = { 0, 0 };
	unsigned long long addr, size;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "nm -S %s", build_path("tests/workloads/exec_storm"));
	p = popen(cmd, "r");
	assert_non_null(p);
	while (fgets(line, sizeof(line), p))
		if (sscanf(line, "%llx %llx %*s %127s", &addr, &size, name) == 3 &&
		    !strcmp(name, "storm_child_spin"))
			r = (struct code_range){ addr, addr + size };
	pclose(p);
	assert_true(r.hi > r.lo);
	return r;
}

/* 1 when a frame of the sample is storm_child_spin: by name, or by address when the child was
 * gone before its symbols could be read. exec_storm is not PIE, so other non-PIE programs on
 * the machine (Go binaries) have code at the same addresses: an address only counts in a
 * location with no mapping or with exec_storm's. */
static int is_spin_sample(const Perftools__Profiles__Profile *p,
			  const Perftools__Profiles__Sample *s, struct code_range r)
{
	const Perftools__Profiles__Location *loc;
	const Perftools__Profiles__Mapping *m;
	size_t i;

	if (pprof_sample_has_function(p, s, "storm_child_spin"))
		return 1;
	for (i = 0; i < s->n_location_id; i++) {
		loc = pprof_location(p, s->location_id[i]);
		if (!loc || loc->address < r.lo || loc->address >= r.hi)
			continue;
		m = loc->mapping_id ? pprof_mapping(p, loc->mapping_id) : NULL;
		if (!m || strstr(pprof_str(p, m->filename) ?: "", "exec_storm"))
			return 1;
	}
	return 0;
}

/* 1 when the sample ran the storm's code at all (a frame in exec_storm's mapping: a child's
 * main(), its start-up) or storm_child_spin. */
static int is_storm_sample(const Perftools__Profiles__Profile *p,
			   const Perftools__Profiles__Sample *s, struct code_range r)
{
	const Perftools__Profiles__Location *loc;
	const Perftools__Profiles__Mapping *m;
	size_t i;

	if (is_spin_sample(p, s, r))
		return 1;
	for (i = 0; i < s->n_location_id; i++) {
		loc = pprof_location(p, s->location_id[i]);
		m = loc && loc->mapping_id ? pprof_mapping(p, loc->mapping_id) : NULL;
		if (m && strstr(pprof_str(p, m->filename) ?: "", "/exec_storm"))
			return 1;
	}
	return 0;
}

/* Counts the storm children's storm_child_spin samples in the storm's service (in_service), and
 * every sample of the storm's code filed under another service (elsewhere), "unknown_service"
 * among them. */
static void count_storm_samples(const char *dir, const char *service, uint64_t *in_service,
				uint64_t *elsewhere)
{
	struct code_range r = spin_range();
	char path[4096], suffix[128];
	Perftools__Profiles__Profile *p;
	struct dirent *de;
	DIR *d = opendir(dir);
	size_t i, len, slen;
	int mine;

	snprintf(suffix, sizeof(suffix), "-%s.pb.gz", service);
	slen = strlen(suffix);
	*in_service = *elsewhere = 0;
	assert_non_null(d);
	while ((de = readdir(d))) {
		len = strlen(de->d_name);
		if (len < 6 || strcmp(de->d_name + len - 6, ".pb.gz"))
			continue;
		/* CPU profiles only: the off-CPU ones hold nanoseconds waited, not samples. */
		if (strstr(de->d_name, ".off_cpu.pb.gz"))
			continue;
		mine = len > slen && !strcmp(de->d_name + len - slen, suffix);
		/* Another test's storm on the machine (a parallel run) is not ours to judge. */
		if (!mine && strstr(de->d_name, "-it-storm-"))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		p = pprof_file_read(path);
		assert_non_null(p);
		for (i = 0; i < p->n_sample; i++) {
			if (mine && is_spin_sample(p, p->sample[i], r))
				*in_service += p->sample[i]->value[0] / (1000000000 / FREQUENCY);
			if (!mine && is_storm_sample(p, p->sample[i], r)) {
				*elsewhere += p->sample[i]->value[0] / (1000000000 / FREQUENCY);
				printf("  a storm sample in %s (leaf %s)\n", de->d_name,
				       pprof_leaf_function(p, p->sample[i]) ?: "?");
			}
		}
		pprof_file_free(p);
	}
	closedir(d);
}

/* Kernel threads all go to one service, "kernel": its samples run only kernel code (a kernel
 * thread has no user stack), and no profile is filed under a kernel thread's own name. Returns
 * the samples in "kernel" (a machine's kernel threads may also have had none). */
static uint64_t check_kernel_service(const char *dir)
{
	static const char *const thread_names[] = { "-kworker", "-ksoftirqd", "-kthreadd",
						    "-rcu_",	"-migration", "-kswapd" };
	const Perftools__Profiles__Location *loc;
	Perftools__Profiles__Profile *p;
	char path[4096];
	struct dirent *de;
	DIR *d = opendir(dir);
	uint64_t samples = 0;
	size_t i, j, len;

	assert_non_null(d);
	while ((de = readdir(d))) {
		len = strlen(de->d_name);
		if (len < 6 || strcmp(de->d_name + len - 6, ".pb.gz"))
			continue;
		for (i = 0; i < sizeof(thread_names) / sizeof(thread_names[0]); i++)
			if (strstr(de->d_name, thread_names[i]))
				fail_msg("a kernel thread's own service: %s", de->d_name);
		if (len < 13 || strcmp(de->d_name + len - 13, "-kernel.pb.gz"))
			continue; /* off-CPU ones end in "-kernel.off_cpu.pb.gz" */
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		p = pprof_file_read(path);
		assert_non_null(p);
		for (i = 0; i < p->n_sample; i++) {
			samples += p->sample[i]->value[0] / (1000000000 / FREQUENCY);
			/* x86-64 kernel addresses are the upper half (kallsyms or a module);
			 * address 1 is the agent's "[kernel stack lost]" marker. */
			for (j = 0; j < p->sample[i]->n_location_id; j++) {
				loc = pprof_location(p, p->sample[i]->location_id[j]);
				if (!loc || (loc->address < KERNEL_HALF && loc->address != 1))
					fail_msg("a sample of service \"kernel\" in %s runs "
						 "user code at %#llx",
						 de->d_name,
						 (unsigned long long)(loc ? loc->address : 0));
			}
		}
		pprof_file_free(p);
	}
	closedir(d);
	return samples;
}

static void test_exec_storm_leaves_no_dead_entries_and_keeps_its_service(void **state)
{
	struct fixture *fx = *state;
	uint64_t spin_mine, spin_elsewhere;
	double before, after, cpu, expected, lost;
	struct census storm = { 0 };
	char service[64];
	int live, i;

	if (fx->g.skip)
		skip();
	snprintf(service, sizeof(service), "it-storm-%d", getpid());
	wait_windows(fx, 1);
	before = scrape(fx->port, "spanprof_processes_tracked");
	lost = scrape(fx->port, EVENTS_LOST);
	cpu = run_storm(fx, service);
	/* The exits are seen, then an exited entry lives through one more drain. Other work on
	 * the machine comes and goes too: wait (15 s at most) for a moment the table is near the
	 * live count. Without reaping it stays about CHILDREN entries above it. */
	wait_windows(fx, 3);
	for (i = 0; i < 150; i++) {
		after = scrape(fx->port, "spanprof_processes_tracked");
		live = live_processes();
		if (after <= live + 50 && after - before < atoi(CHILDREN) / 10)
			break;
		usleep(100000);
	}
	printf("  tracked %.0f before, %.0f after %s children (%d processes alive now)\n", before,
	       after, CHILDREN, live);
	assert_true(after <= live + 50);
	assert_true(after - before < atoi(CHILDREN) / 10);

	expected = cpu * FREQUENCY;
	assert_true(census_read(&storm, fx->g.dir, service) > 0);
	count_storm_samples(fx->g.dir, service, &spin_mine, &spin_elsewhere);
	printf("  children used %.2f CPU s (about %.0f samples): %llu samples as %s, of which "
	       "%llu in storm_child_spin; %llu samples of the storm under other services\n",
	       cpu, expected, (unsigned long long)storm.total_samples, service,
	       (unsigned long long)spin_mine, (unsigned long long)spin_elsewhere);
	printf("  %llu samples of kernel threads under the service \"kernel\"\n",
	       (unsigned long long)check_kernel_service(fx->g.dir));
	assert_true(storm.total_samples >= expected / 2);
	assert_true(spin_mine > 0);
	/* Every child is named from its exec event, even one gone before any drain; only a
	 * process event the full ring could not take (counted) would leave one nameless. */
	if (spin_elsewhere)
		fail_msg("%llu samples of the storm under other services; process events lost "
			 "during the run: %.0f",
			 (unsigned long long)spin_elsewhere, scrape(fx->port, EVENTS_LOST) - lost);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_exec_storm_leaves_no_dead_entries_and_keeps_its_service),
	};

	return cmocka_run_group_tests_name("exec_storm", tests, group_setup, group_teardown);
}
