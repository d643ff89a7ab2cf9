/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Test-only: a workload's own log of its spans' CPU time (span_cpu_workload, two_copies_workload
 * in cpu mode), and the agent's span records (<service>.spans.jsonl) counted against it. */
#ifndef SPANPROF_TEST_SPAN_CPU_LOG_H
#define SPANPROF_TEST_SPAN_CPU_LOG_H

/* One span as the workload logged it: "span <trace_id hex> <span_id hex> <name index> <inside
 * ns> [<outside ns>]". */
struct logged_span {
	char id[64]; /* trace_id hex + span_id hex */
	int name; /* 0 or 1: which of the workload's two names */
	/* Read inside the hook calls (right after the set, right before the clear), and around
	 * them (the hook's own work included; cpu_ns when the workload logs no such reading). */
	long long cpu_ns, outer_ns;
	int seen; /* agent records that named this span */
};

struct span_cpu_log {
	struct logged_span *spans; /* the caller's array, sorted by id */
	int n, max;
	long long span_ns[2]; /* the logged spans' cpu_ns summed by name */
	long long totals[2], outer_totals[2]; /* "total <name> <inside ns> <outside ns>" lines */
	int outside_tid; /* "outside_tid N": the thread that ran outside any span, or 0 */
};

/* A record's CPU time lies between the workload's reading inside the two hook calls and its
 * reading around them. Both clocks count the same run time, so there is no sampling error; but
 * the record's is ktime (or the time stamp counter converted to it), the workload's is the
 * scheduler's task clock, and on a 2-vCPU VM shared with other builds 0.4 to 1.8% of the spans
 * came out 40-60 us longer by ktime, some without a single switch (time the task clock does not
 * charge), a few in a thousand up to several ms longer (a stalled vCPU); and a thread's first
 * span also holds the kernel's set-up of its first uprobe hit (up to 0.4 ms). So the tests want
 * 95% of the records within SPAN_CPU_TOLERANCE_NS and 99.5% within SPAN_CPU_LIMIT_NS: a lost
 * switch, a change read from the wrong ring or a record given to the wrong span is off by whole
 * time slices in many records. */
#define SPAN_CPU_TOLERANCE_NS(own) (30000 + (own) / 20)
#define SPAN_CPU_LIMIT_NS 1000000

/* Reads the workload's output at path into log, its spans into the caller's array spans of max
 * entries (static in the tests: nothing to free when an assertion ends the test); a failed
 * cmocka assertion when it cannot be read. */
void span_cpu_log_read(struct span_cpu_log *log, const char *path, struct logged_span *spans,
		       int max);

/* The agent's span records against the log. */
struct span_cpu_census {
	int records, unknown, dup, wrong_name, wrong_pid, outside, wall_short;
	int cpu_off; /* beyond SPAN_CPU_TOLERANCE_NS (the first five are printed) */
	int cpu_wrong; /* beyond SPAN_CPU_LIMIT_NS */
	long long max_diff_ns, sum_diff_ns; /* how far the records lie outside their interval */
	long long agent_ns[2]; /* the records' CPU time by name */
};

/* Counts every record of the span log at jsonl_path against log (marking the spans seen):
 * json_names are the workload's two names as JSON writes them, pid the workload's. A failed
 * cmocka assertion when the file cannot be read. */
void span_cpu_census_read(struct span_cpu_census *c, struct span_cpu_log *log,
			  const char *jsonl_path, const char *const json_names[2], int pid);

#endif /* SPANPROF_TEST_SPAN_CPU_LOG_H */
