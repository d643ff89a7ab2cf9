/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Test-only: the stage of an attack by a local user on the agent: a temp dir, a throwaway
 * unprivileged user with a copy of hostile_workload it can run, the processes started, the
 * agent, and what the tests measure of it (windows, peak memory, CPU, SIGTERM, guards). */
#ifndef SPANPROF_TEST_HOSTILE_FIXTURE_H
#define SPANPROF_TEST_HOSTILE_FIXTURE_H

#include <stdint.h>
#include <sys/types.h>

#include "agent_proc.h"
#include "unpriv_user.h"

#define HOSTILE_MAX_PIDS 64

struct hostile_fixture {
	char *dir; /* temp dir, readable by the user */
	char workload[600]; /* hostile_workload, copied where the user can run it */
	struct unpriv_user user;
	pid_t pids[HOSTILE_MAX_PIDS]; /* processes started, killed by hostile_fixture_free() */
	int npids;
	struct agent_proc agent; /* a copy of the last agent started */
	int agent_started;
};

/* Sets up a fixture named name. Returns 0 with *out NULL when attacks cannot run here (no BPF,
 * no useradd: printed why), 0 with *out set, or -1. */
int hostile_fixture_new(const char *name, struct hostile_fixture **out);

/* Stops an agent still running, kills the processes, removes the user and the dir (kept when
 * HOSTILE_KEEP is set). NULL-safe. */
void hostile_fixture_free(struct hostile_fixture *f);

/* Starts argv as uid (-1: root) with OTEL_SERVICE_NAME=service (and LD_LIBRARY_PATH the dir,
 * which holds a copy of the hook library), stdout into dir/<out_name>, and
 * waits until it printed "ready" (timeout_s; 0: no wait). Returns the pid, or -1. */
pid_t hostile_fixture_spawn(struct hostile_fixture *f, int uid, const char *service,
			    const char *out_name, const char *const *argv, double timeout_s);

/* Starts the agent (agent_proc_start) and remembers it. Returns 0 or -1. */
int hostile_fixture_start_agent(struct hostile_fixture *f, struct agent_proc *agent,
				const char *const *argv);

double hostile_now_s(void);

/* Windows (profiles) service wrote into dir, and the longest time between two starts. */
int hostile_windows(const char *dir, const char *service, double *max_gap_s);

/* The share of the Helm chart's memory limit (resources.limits.memory in
 * helm/spanprof/values.yaml, in Mi or Gi) left to the agent's RSS: the limit minus the most its
 * BPF maps may hold with default options (map_budget.h), in bytes; 0 when it cannot be read. */
uint64_t hostile_chart_rss_limit(void);

/* SIGTERM, then waits: the seconds the agent took to exit, or -1 when it ignored SIGTERM for
 * 30 s (then killed). *status gets its wait status. */
double hostile_sigterm(pid_t pid, int *status);

/* Peak resident memory of pid (VmHWM) in bytes; 0 when unknown. */
uint64_t hostile_peak_rss(pid_t pid);

/* User plus system CPU seconds pid has used; -1 when unknown. */
double hostile_cpu_seconds(pid_t pid);

/* spanprof_input_guards_total{guard=...} at 127.0.0.1:port. Returns 0 and *value, or -1. */
int hostile_guard(int port, const char *guard, double *value);

#endif /* SPANPROF_TEST_HOSTILE_FIXTURE_H */
