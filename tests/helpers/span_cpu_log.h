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
	/* The CPU time of its record and of the records of its burst's spans (their span_id
	 * starts with b0 where this one's starts with c0, bytes 2-3 the change's number): all are
	 * within the span's readings. */
	long long agent_ns;
};

struct span_cpu_log {
	struct logged_span *spans; /* the caller's array, sorted by id */
	int n, max;
	long long span_ns[2]; /* the logged spans' cpu_ns summed by name */
	long long totals[2], outer_totals[2]; /* "total <name> <inside ns> <outside ns>" lines */
	int outside_tid; /* "outside_tid N": the thread that ran outside any span, or 0 */
	/* "ring_lost_min N", "ring_lost_max N": the ring entries the bursts overflowed (-1: none
	 * logged). */
	long long ring_lost_min, ring_lost_max;
};

/* A record's CPU time lies between the workload's reading inside the two hook calls and its
 * reading around them, up to how the kernel's two clocks of run time differ: the record's is
 * ktime from the thread's switch in (sched_switch, or the end of __schedule() when the
 * tracepoint missed the switch) to its switch out, the workload's the scheduler's task clock.
 * - The record longer: the task clock leaves out time a stalled vCPU was away (steal): on a
 *   2-vCPU VM shared with other builds 0.4 to 1.8% of the spans came out 40-60 us longer by
 *   ktime, some without a single switch, a few in a thousand up to several ms longer; and a
 *   thread's first span also holds the kernel's set-up of its first uprobe hit (up to 0.4 ms).
 * - The record shorter: the task clock charges the thread switched in from the run queue's last
 *   clock update, which after a wakeup that preempts is the wakeup's (the time until the switch
 *   was the preempted task's), and from before the tracepoint's other programs ran. A few
 *   records in 4,000 came out 8-35 us short under load, in one run of five one 54-85 us short
 *   (once 2 ms).
 * So the tests want 95% of the records within SPAN_CPU_TOLERANCE_NS and 99.5% within
 * SPAN_CPU_LIMIT_NS, and at most SPAN_CPU_SHORT_MAX records short by more than the tolerance: a
 * lost switch, a change read from the wrong ring or a record given to the wrong span is off by
 * whole time slices in many records, and a switch in whose run is lost (the thread's time on the
 * CPU until its next switch out: 54-230 us of 0.3 ms spans) makes records short. */
#define SPAN_CPU_TOLERANCE_NS(own) (30000 + (own) / 20)
#define SPAN_CPU_LIMIT_NS 1000000
#define SPAN_CPU_SHORT_MAX(nspans) (2 + (nspans) / 1000)

/* Reads the workload's output at path into log, its spans into the caller's array spans of max
 * entries (static in the tests: nothing to free when an assertion ends the test); a failed
 * cmocka assertion when it cannot be read. */
void span_cpu_log_read(struct span_cpu_log *log, const char *path, struct logged_span *spans,
		       int max);

/* The agent's span records against the log. */
struct span_cpu_census {
	int records, unknown, dup, wrong_name, wrong_pid, outside, wall_short;
	int burst_records; /* records of a logged span's burst (counted in records too) */
	int burst_by_name[2];
	int cpu_off; /* beyond SPAN_CPU_TOLERANCE_NS (the first five are printed) */
	int cpu_short; /* ... below the workload's reading inside the hook calls */
	int cpu_wrong; /* beyond SPAN_CPU_LIMIT_NS */
	long long max_diff_ns, sum_diff_ns; /* how far the records lie outside their interval */
	long long agent_ns[2]; /* the records' CPU time by name */
	/* The spans beyond SPAN_CPU_TOLERANCE_NS by name: their records' CPU time and the
	 * workload's readings inside and around the hook calls. The bounds above limit how many
	 * there are; a test compares totals without them, since one task clock outlier of a few ms
	 * is 5% of a thousand 10 us spans. */
	long long off_agent_ns[2], off_inner_ns[2], off_outer_ns[2];
};

/* Counts every record of the span log at jsonl_path against log (marking the spans seen), then
 * each logged span's CPU time against its records' (a burst's records summed into its span's):
 * json_names are the workload's two names as JSON writes them, pid the workload's. A failed
 * cmocka assertion when the file cannot be read. */
void span_cpu_census_read(struct span_cpu_census *c, struct span_cpu_log *log,
			  const char *jsonl_path, const char *const json_names[2], int pid);

#endif /* SPANPROF_TEST_SPAN_CPU_LOG_H */
