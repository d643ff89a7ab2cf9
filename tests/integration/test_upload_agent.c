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
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "agent_proc.h"
#include "metrics_scrape.h"
#include "pprof_file.h"
#include "push_receiver.h"
#include "tmpdir.h"

#define SPAN_1 "5a5a000000000001"

struct fixture {
	char *dir;
	struct push_receiver *rx;
	struct agent_proc agent; /* pid 0 when not running */
};

static int setup(void **state)
{
	static struct fixture fx;

	memset(&fx, 0, sizeof(fx));
	*state = NULL;
	if (!agent_proc_can_run())
		return 0;
	fx.dir = tmpdir_new("it-upload");
	fx.rx = push_receiver_new(0);
	if (!fx.dir || !fx.rx)
		return -1;
	*state = &fx;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *fx = *state;

	if (!fx)
		return 0;
	if (fx->agent.pid > 0) /* a failed assertion left it running */
		agent_proc_stop(&fx->agent);
	push_receiver_free(fx->rx);
	tmpdir_remove(fx->dir);
	return 0;
}

/* CPU samples (value / period) in every push of `service` whose stack has `function`, and how
 * many of them carry span_id. */
static void count_pushed(struct push_receiver *rx, const char *service, const char *function,
			 const char *span, size_t *samples, size_t *right, size_t *pushes)
{
	*samples = *right = *pushes = 0;
	for (size_t i = 0; i < push_receiver_count(rx); i++) {
		const struct push_record *rec = push_receiver_record(rx, i);
		const char *svc = push_record_label(rec, 0, "service_name");

		if (rec->status != 200 || !rec->req || !svc || strcmp(svc, service))
			continue;
		(*pushes)++;
		assert_string_equal(push_record_label(rec, 0, "__name__"), "process_cpu");
		for (size_t p = 0; p < rec->nprofiles; p++) {
			const Perftools__Profiles__Profile *prof = rec->profiles[p];

			assert_non_null(prof);
			for (size_t s = 0; s < prof->n_sample; s++) {
				const Perftools__Profiles__Sample *smp = prof->sample[s];
				size_t n = prof->period > 0 ? smp->value[0] / prof->period : 0;
				const char *id;

				if (!pprof_sample_has_function(prof, smp, function))
					continue;
				*samples += n;
				id = pprof_sample_label(prof, smp, "span_id");
				*right += id && !strcmp(id, span) ? n : 0;
			}
		}
	}
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

static int stop_agent(struct agent_proc *a)
{
	int rc = agent_proc_stop(a);

	a->pid = 0;
	return rc;
}

static void run_span_workload(const char *service, const char *seconds)
{
	char env_service[128];
	const char *env[] = { env_service, NULL };
	const char *work[] = { build_path("tests/workloads/span_workload"), "spans", "1", seconds,
			       NULL };

	snprintf(env_service, sizeof(env_service), "OTEL_SERVICE_NAME=%s", service);
	assert_int_equal(workload_wait(workload_start(work, env, "/dev/null"), 30), 0);
}

static void test_agent_pushes_span_profiles_and_metrics_move(void **state)
{
	struct fixture *fx = *state;
	const char *argv[] = { "--server",	 NULL,		"--label",
			       "env=ci",	 "--interval",	"1",
			       "--metrics-addr", "127.0.0.1:0", NULL };
	size_t samples, right, pushes;
	struct agent_proc *agent = &fx->agent;
	int port;

	if (!fx)
		skip();
	argv[1] = push_receiver_url(fx->rx);
	assert_int_equal(agent_proc_start(agent, fx->dir, argv), 0);
	port = metrics_port(agent);
	assert_true(port > 0);
	assert_true(scrape(port, "spanprof_samples_total") >= 0);
	run_span_workload("it-upload", "2");
	usleep(2500000);
	count_pushed(fx->rx, "it-upload", "work_in_span_0", SPAN_1, &samples, &right, &pushes);
	printf("  %zu pushes, work_in_span_0: %zu samples, %zu with span %s\n", pushes, samples,
	       right, SPAN_1);
	assert_true(pushes >= 1 && samples >= 20 && right >= 0.99 * samples);
	/* Static label on the series, gzip on the wire, the push path. */
	for (size_t i = 0; i < push_receiver_count(fx->rx); i++) {
		const struct push_record *rec = push_receiver_record(fx->rx, i);

		assert_true(rec->gzipped);
		assert_string_equal(rec->path, "/push.v1.PusherService/Push");
		assert_string_equal(push_record_label(rec, 0, "env"), "ci");
	}
	assert_true(scrape(port, "spanprof_samples_total") >= samples);
	assert_true(scrape(port, "spanprof_uploads_total{result=\"ok\"}") >= pushes);
	assert_true(scrape(port, "spanprof_windows_written_total") >= 2);
	assert_true(scrape(port, "spanprof_span_events_total{event=\"set\"}") >= 100);
	assert_int_equal(stop_agent(agent), 0);
}

static void test_spooled_backlog_survives_outage_and_agent_kill(void **state)
{
	struct fixture *fx = *state;
	char spool[600];
	const char *argv[] = { "--server", NULL, "--spool", spool, "--interval", "1", NULL };
	size_t samples, right, pushes, before;
	struct agent_proc *agent = &fx->agent;

	if (!fx)
		skip();
	snprintf(spool, sizeof(spool), "%s/spool", fx->dir);
	argv[1] = push_receiver_url(fx->rx);
	push_receiver_answer(fx->rx, 503, 0, "down for maintenance"); /* every request */
	assert_int_equal(agent_proc_start(agent, fx->dir, argv), 0);
	run_span_workload("it-spool", "1.5");
	usleep(1500000);
	/* Killed, not stopped: the windows it had written are already in the spool. */
	kill(agent->pid, SIGKILL);
	assert_int_equal(waitpid(agent->pid, NULL, 0), agent->pid);
	agent->pid = 0;
	count_pushed(fx->rx, "it-spool", "work_in_span_0", SPAN_1, &samples, &right, &pushes);
	assert_int_equal(pushes, 0);
	before = push_receiver_count(fx->rx);
	assert_true(before >= 1); /* it did try, and got 503s */

	push_receiver_answer(fx->rx, 200, 0, NULL);
	assert_int_equal(agent_proc_start(agent, fx->dir, argv), 0);
	usleep(3000000);
	assert_int_equal(stop_agent(agent), 0);
	count_pushed(fx->rx, "it-spool", "work_in_span_0", SPAN_1, &samples, &right, &pushes);
	printf("  backlog after restart: %zu pushes, %zu samples of work_in_span_0, %zu right\n",
	       pushes, samples, right);
	assert_true(pushes >= 1 && samples >= 20 && right >= 0.99 * samples);
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
