/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Test-only: runs build/spanprof and workloads as child processes and waits on them. */
#ifndef SPANPROF_TEST_AGENT_PROC_H
#define SPANPROF_TEST_AGENT_PROC_H

#include <sys/types.h>

struct agent_proc {
	pid_t pid;
	char log_path[512]; /* the agent's stderr */
};

/* 1 when this process can load BPF (root, kernel BTF present); otherwise prints why and returns 0
 * so the caller can skip(). */
int agent_proc_can_run(void);

/* A cmocka setup for tests that run the agent in a directory of their own: *state becomes a
 * fresh tmpdir_new(tag), or NULL when the agent cannot run here (agent_proc_can_run() said why;
 * the tests skip; tmpdir_teardown() removes it). Returns 0, or -1 when the directory could not be
 * made. */
int agent_proc_dir_setup(void **state, const char *tag);

/* agent_proc_dir_setup() for a test of the Go workload build_path(workload): *state is NULL too
 * (the tests skip) when it was not built (go_workload_built() said why). */
int agent_proc_go_setup(void **state, const char *workload, const char *tag);

/* One agent that a cmocka group of tests shares, in a directory of its own. */
struct agent_group {
	char *dir; /* tmpdir_new(tag); the agent's --output and its log */
	struct agent_proc agent;
	int skip; /* the agent cannot run here (agent_proc_can_run() said why) */
};

/* A group setup's body: sets skip and returns 0 when the agent cannot run here; else makes dir,
 * puts it into argv[1] (argv is "--output", NULL, ...: without argv[0]) and starts the agent.
 * Returns 0 or -1. */
int agent_group_start(struct agent_group *g, const char *tag, const char **argv);

/* A group teardown's body: stops the agent and removes dir (nothing when skipped). Returns 0. */
int agent_group_stop(struct agent_group *g);

/* Starts build/spanprof with argv (NULL-terminated, without argv[0]), stderr into
 * <log_dir>/agent.log, and waits up to 60 s for it to log that it is profiling.
 * Returns 0 or -1 (the log is printed). */
int agent_proc_start(struct agent_proc *a, const char *log_dir, const char *const *argv);

/* The same with the agent binary at bin (a benchmark comparing an older build). */
int agent_proc_start_bin(struct agent_proc *a, const char *bin, const char *log_dir,
			 const char *const *argv);

/* SIGINT, then waits up to 60 s. Returns the exit status, or -1 (killed). */
int agent_proc_stop(struct agent_proc *a);

/* 1 when the agent has exited (it is not reaped: agent_proc_stop or workload_wait still work). */
int agent_proc_has_exited(const struct agent_proc *a);

/* Prints the agent's log, indented. */
void agent_proc_print_log(const struct agent_proc *a);

/* Lines of the agent's log that contain text. */
int agent_proc_log_count(const struct agent_proc *a, const char *text);

/* 1 if the agent's log contains text. */
int agent_proc_log_contains(const struct agent_proc *a, const char *text);

/* Polls the agent's log until it contains text. Returns 1, or 0 after timeout_s or when the
 * agent exited without logging it (it is left for agent_proc_stop() or workload_wait()). */
int agent_proc_wait_log(const struct agent_proc *a, const char *text, int timeout_s);

/* Polls the agent's log until it attached the span hook in hook_file (by its real path) in pid.
 * Returns 1, or 0 after printing what it waited for and the agent's log when that did not come
 * within timeout_s. */
int agent_proc_wait_attach(const struct agent_proc *a, const char *hook_file, pid_t pid,
			   int timeout_s);

/* Runs a command (argv[0] is a path), environment extended with env ("K=V", NULL-terminated,
 * may be NULL). Returns the pid, or -1. */
pid_t workload_start(const char *const *argv, const char *const *env, const char *stdout_path);

/* Polls until pid runs the executable at path (its exec is done), so an agent started next with
 * --pid sees the program rather than the forked test binary. Returns 0, or -1 after timeout_s. */
int workload_wait_exec(pid_t pid, const char *path, int timeout_s);

/* Waits for pid; returns its exit status, or -1 when it did not end normally within timeout_s. */
int workload_wait(pid_t pid, int timeout_s);

/* Like workload_wait, also returning the child's user+system CPU seconds. */
int workload_wait_cpu(pid_t pid, int timeout_s, double *cpu_s);

/* Path of a file under the build directory (the test binaries live in build/tests/...). The
 * result stays valid for the next 7 calls. */
const char *build_path(const char *rel);

/* 1 when build_path(rel), a Go workload, was built; else prints why the test skips and returns 0. */
int go_workload_built(const char *rel);

#endif /* SPANPROF_TEST_AGENT_PROC_H */
