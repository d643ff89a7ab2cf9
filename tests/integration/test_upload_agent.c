// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The agent as Pyroscope sees it: pushes of span-labelled profiles to a receiver on 127.0.0.1
 * decoded with the project's own .proto files, its /metrics moving, and a spool that carries a
 * backlog across an outage and an agent killed with SIGKILL. */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "agent_proc.h"
#include "metrics_scrape.h"
#include "pprof_file.h"
#include "profiled_run.h"
#include "push_fixture.h"

#define SPAN_1 "5a5a000000000001"

static int setup(void **state)
{
	static struct push_fixture fx;
	int r = push_fixture_open(&fx, "it-upload");

	*state = r ? NULL : &fx;
	return r < 0 ? -1 : 0;
}

static int teardown(void **state)
{
	if (*state)
		push_fixture_close(*state);
	return 0;
}

struct pushed {
	size_t pushes; /* requests of the service answered with the status asked for */
	size_t windows; /* distinct profiles among them (a retried one counts once) */
	size_t samples; /* CPU samples (value / period) of those windows */
	size_t in_function; /* ... whose stack has the function */
	size_t right; /* ... of those, with the span_id asked for */
};

#define MAX_WINDOWS 512

static int seen_before(int64_t *seen, size_t *nseen, int64_t t)
{
	for (size_t i = 0; i < *nseen; i++)
		if (seen[i] == t)
			return 1;
	if (*nseen < MAX_WINDOWS)
		seen[(*nseen)++] = t;
	return 0;
}

static void count_profile(const Perftools__Profiles__Profile *prof, const char *function,
			  const char *span, struct pushed *out)
{
	for (size_t s = 0; s < prof->n_sample; s++) {
		const Perftools__Profiles__Sample *smp = prof->sample[s];
		size_t n = prof->period > 0 ? smp->value[0] / prof->period : 0;
		const char *id;

		out->samples += n;
		if (!pprof_sample_has_function(prof, smp, function))
			continue;
		out->in_function += n;
		id = pprof_sample_label(prof, smp, "span_id");
		out->right += id && !strcmp(id, span) ? n : 0;
	}
}

/* What the receiver got of `service` in requests it answered `status`, each window once. */
static struct pushed count_pushed(struct push_receiver *rx, int status, const char *service,
				  const char *function, const char *span)
{
	static int64_t seen[MAX_WINDOWS];
	size_t nseen = 0;
	struct pushed out = { 0 };

	for (size_t i = 0; i < push_receiver_count(rx); i++) {
		const struct push_record *rec = push_receiver_record(rx, i);
		const char *svc = push_record_label(rec, 0, "service_name");

		if (rec->status != status || !rec->req || !svc || strcmp(svc, service))
			continue;
		out.pushes++;
		assert_string_equal(push_record_label(rec, 0, "__name__"), "process_cpu");
		for (size_t p = 0; p < rec->nprofiles; p++) {
			const Perftools__Profiles__Profile *prof = rec->profiles[p];

			assert_non_null(prof);
			if (seen_before(seen, &nseen, prof->time_nanos))
				continue;
			out.windows++;
			count_profile(prof, function, span, &out);
		}
	}
	return out;
}

/* Value of one metric line (exact name with labels) in the agent's /metrics. */
static double scrape(int port, const char *metric)
{
	double v = -1;

	if (metrics_scrape(port, metric, &v))
		fail_msg("metric %s not found", metric);
	return v;
}

static int metrics_port(const struct agent_proc *a)
{
	return metrics_scrape_port(a->log_path);
}

/* One agent (--pid) on a span workload of `service` (1 thread, `cpu` CPU seconds); the agent
 * is left running. */
static void run_pushing(struct push_fixture *fx, const char *const *agent_args, const char *service,
			const char *cpu, struct profiled_run *r)
{
	char env_service[128];
	const char *env[] = { env_service, NULL };
	const char *work[] = { build_path("tests/workloads/span_workload"), "spans", "1", cpu,
			       NULL };

	snprintf(env_service, sizeof(env_service), "OTEL_SERVICE_NAME=%s", service);
	*r = (struct profiled_run){ .dir = fx->dir,
				    .agent_args = agent_args,
				    .workload_argv = work,
				    .workload_env = env,
				    .hook_file = build_path("libspanprof.so"),
				    .keep_agent = 1 };
	assert_int_equal(profiled_run(r), 0);
	fx->agent = r->agent; /* the teardown stops it if an assertion fails */
}

/* Polls (up to 30 s) until the agent wrote two more windows than it had when called: then the
 * window the workload ended in is written, and with a spool, in the spool (a window is spooled
 * before it is pushed). */
static void wait_two_more_windows(const struct agent_proc *a)
{
	int want = agent_proc_log_count(a, "window written:") + 2;

	for (int i = 0; i < 3000 && agent_proc_log_count(a, "window written:") < want; i++)
		usleep(10000);
	assert_true(agent_proc_log_count(a, "window written:") >= want);
}

/* Polls (up to 30 s) until the metric reaches min; returns its last value. */
static double wait_metric(int port, const char *metric, double min)
{
	double v = scrape(port, metric);

	for (int i = 0; i < 3000 && v < min; i++) {
		usleep(10000);
		v = scrape(port, metric);
	}
	return v;
}

/* Polls (up to 60 s) until the gauge is 0 (a queue or spool delivered); returns its value. */
static double wait_metric_zero(int port, const char *metric)
{
	double v = scrape(port, metric);

	for (int i = 0; i < 6000 && v > 0; i++) {
		usleep(10000);
		v = scrape(port, metric);
	}
	return v;
}

static void print_pushed(const char *service, const struct pushed *got, double cpu_s)
{
	printf("  %s: %zu pushes (%zu windows), %zu samples for %.2f CPU s; work_in_span_0: %zu "
	       "samples, %zu with span %s\n",
	       service, got->pushes, got->windows, got->samples, cpu_s, got->in_function,
	       got->right, SPAN_1);
}

static int stop_agent(struct agent_proc *a)
{
	int rc = agent_proc_stop(a);

	a->pid = 0;
	return rc;
}

static void test_agent_pushes_span_profiles_and_metrics_move(void **state)
{
	struct push_fixture *fx = *state;
	const char *argv[] = { "--server",	 NULL,		"--label",
			       "env=ci",	 "--interval",	"1",
			       "--metrics-addr", "127.0.0.1:0", NULL };
	struct profiled_run r;
	struct pushed got;
	int port;

	if (!fx)
		skip();
	argv[1] = push_receiver_url(fx->rx);
	run_pushing(fx, argv, "it-upload", "2", &r);
	port = metrics_port(&fx->agent);
	assert_true(port > 0);
	/* The window the workload ended in is written, then the queue is delivered. */
	wait_two_more_windows(&fx->agent);
	assert_true(wait_metric_zero(port, "spanprof_upload_queue_bytes") == 0);
	got = count_pushed(fx->rx, 200, "it-upload", "work_in_span_0", SPAN_1);
	print_pushed("it-upload", &got, r.cpu_s);
	assert_true(PROFILED_RATE_OK(got.samples, r.cpu_s));
	assert_true(got.in_function >= PROFILED_MIN_SAMPLES && got.right >= 0.99 * got.in_function);
	/* Static label on the series, gzip on the wire, the push path. */
	for (size_t i = 0; i < push_receiver_count(fx->rx); i++) {
		const struct push_record *rec = push_receiver_record(fx->rx, i);

		assert_true(rec->gzipped);
		assert_string_equal(rec->path, "/push.v1.PusherService/Push");
		assert_string_equal(push_record_label(rec, 0, "env"), "ci");
	}
	assert_true(scrape(port, "spanprof_samples_total") >= got.samples);
	/* The receiver records a push before the agent has read the answer and counted it. */
	assert_true(wait_metric(port, "spanprof_uploads_total{result=\"ok\"}", got.pushes) >=
		    got.pushes);
	assert_true(scrape(port, "spanprof_windows_written_total") >= 2);
	assert_true(scrape(port, "spanprof_span_events_total{event=\"set\"}") >= 100);
	assert_int_equal(stop_agent(&fx->agent), 0);
}

static void test_spooled_backlog_survives_outage_and_agent_kill(void **state)
{
	struct push_fixture *fx = *state;
	char spool[600], self[16];
	const char *argv[] = { "--server", NULL, "--spool", spool, "--interval", "1", NULL };
	/* The second agent only delivers the backlog: it profiles nothing but this test. */
	const char *argv2[] = { "--server",    NULL,	"--spool", spool, "--metrics-addr",
				"127.0.0.1:0", "--pid", self,	   NULL };
	struct agent_proc *agent = &fx->agent;
	struct profiled_run r;
	struct pushed got;
	int port;

	if (!fx)
		skip();
	snprintf(spool, sizeof(spool), "%s/spool", fx->dir);
	snprintf(self, sizeof(self), "%d", getpid());
	argv[1] = argv2[1] = push_receiver_url(fx->rx);
	push_receiver_answer(fx->rx, 503, 0, "down for maintenance"); /* every request */
	run_pushing(fx, argv, "it-spool", "1.5", &r);
	/* The window the workload ended in is written, so spooled (before any push of it). */
	wait_two_more_windows(agent);
	assert_true(push_receiver_count_status(fx->rx, 503) >= 1); /* it did try, and got 503s */
	/* Killed, not stopped: the windows it had written are already in the spool. */
	kill(agent->pid, SIGKILL);
	assert_int_equal(waitpid(agent->pid, NULL, 0), agent->pid);
	agent->pid = 0;
	assert_int_equal(count_pushed(fx->rx, 200, "it-spool", "work_in_span_0", SPAN_1).pushes, 0);

	push_receiver_answer(fx->rx, 200, 0, NULL);
	assert_int_equal(agent_proc_start(agent, fx->dir, argv2), 0);
	port = metrics_port(agent);
	assert_true(port > 0);
	assert_true(push_receiver_wait(fx->rx, 200, 1, 30000) >= 1);
	assert_true(wait_metric_zero(port, "spanprof_spool_bytes") == 0);
	assert_int_equal(stop_agent(agent), 0);
	got = count_pushed(fx->rx, 200, "it-spool", "work_in_span_0", SPAN_1);
	print_pushed("backlog after restart: it-spool", &got, r.cpu_s);
	assert_true(PROFILED_RATE_OK(got.samples, r.cpu_s));
	assert_true(got.in_function >= PROFILED_MIN_SAMPLES && got.right >= 0.99 * got.in_function);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_agent_pushes_span_profiles_and_metrics_move,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_spooled_backlog_survives_outage_and_agent_kill,
						setup, teardown),
	};

	return cmocka_run_group_tests_name("upload_agent", tests, NULL, NULL);
}
