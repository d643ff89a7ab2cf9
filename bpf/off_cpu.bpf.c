// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* tp_btf/sched_switch: a thread in a span adds its time on the CPU to the span at every switch
 * out. When it blocks (leaves the CPU to wait: sleep, I/O, lock, futex), its stacks and the time
 * are kept in its task storage; when it runs again, the time off the CPU (the wait and the
 * run-queue delay after the wake-up) goes to the span's off-CPU total and, above --off-cpu-min,
 * to (process, stacks, span) in the window's off-CPU count map. Preemption is not a wait the
 * span chose: a thread preempted while runnable is counted in neither. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "helpers.bpf.h"
#include "maps.bpf.h"

/* Blocked times below this are not put in the off-CPU profile (the agent sets it:
 * --off-cpu-min); the exact off-CPU time per span counts them all. */
const volatile __u64 cfg_off_cpu_min_ns = 1000000;

/* Which window (0 or 1) off-CPU time goes to; user space flips it with window_slot. */
__u32 off_cpu_slot = 0;

extern THREAD_SPANS_MAP;
extern SPAN_TASKS_MAP;
extern DROP_COUNTS_MAP;
extern EVENT_COUNTS_MAP;
extern SPAN_NAMES_MAP;

#include "thread_ctx.bpf.h"

/* One stack map for both windows, never emptied: a thread may stay blocked across any number
 * of windows, so the id it took when it left the CPU must stay valid until it runs again.
 * BPF_F_REUSE_STACKID lets a new stack take a colliding slot, which bounds the map. */
struct {
	__uint(type, BPF_MAP_TYPE_STACK_TRACE);
	__uint(max_entries, SPANPROF_OFF_CPU_STACKS);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, SPANPROF_MAX_STACK_DEPTH * sizeof(__u64));
} off_cpu_stacks SEC(".maps");

#define OFF_CPU_COUNT_MAP(name)                               \
	struct {                                              \
		__uint(type, BPF_MAP_TYPE_HASH);              \
		__uint(max_entries, SPANPROF_OFF_CPU_COUNTS); \
		__type(key, struct sample_key);               \
		__type(value, __u64);                         \
	} name SEC(".maps")

OFF_CPU_COUNT_MAP(off_cpu_counts_0);
OFF_CPU_COUNT_MAP(off_cpu_counts_1);

#define KERN_SKIP_FRAMES 2

/* The span hook (span_hook.bpf.c) makes a thread's span_tasks entry active when the thread
 * enters a span of a profiled process; threads without one leave at the first lookup. */

/* Keeps the stacks where prev, in a span, blocks: its wait will go to them. */
static __always_inline void capture_wait(void *ctx, struct task_struct *prev, struct span_task *st)
{
	struct thread_span *ts = bpf_task_storage_get(&thread_spans, prev, NULL, 0);

	st->key.pid = prev->tgid;
	st->key.has_span = ts != NULL;
	if (ts)
		__builtin_memcpy(&st->key.span, &ts->slot[ts->current & 1], sizeof(st->key.span));
	else
		st->key.has_span =
			thread_ctx_span(&st->key.span, prev, st->key.pid, TCTX_SCRATCH_OFF_CPU);
	/* The kernel stack starts at __schedule: this program and bpf_trace_run4 are skipped. */
	st->key.kern_stack_id =
		bpf_get_stackid(ctx, &off_cpu_stacks, BPF_F_REUSE_STACKID | KERN_SKIP_FRAMES);
	st->key.user_stack_id =
		bpf_get_stackid(ctx, &off_cpu_stacks, BPF_F_USER_STACK | BPF_F_REUSE_STACKID);
}

/* prev leaves the CPU: its time on it goes to its span; if it blocks, the wait starts. */
static __always_inline void switch_out(void *ctx, struct task_struct *prev, __u64 now, bool blocks)
{
	struct span_task *st = bpf_task_storage_get(&span_tasks, prev, NULL, 0);

	if (!st || !st->active)
		return;
	/* on_cpu_ns is 0 or later than now only if the span hook, preempted between its clock
	 * read and its store, raced this switch: that slice is lost rather than made negative. */
	if (st->on_cpu_ns && now > st->on_cpu_ns)
		st->cpu_ns += now - st->on_cpu_ns;
	st->on_cpu_ns = 0;
	if (!blocks)
		return;
	st->off_since_ns = now;
	capture_wait(ctx, prev, st);
}

/* Adds ns to key's entry in the window's count map. */
static __always_inline void add_time(void *counts, struct sample_key *key, __u64 ns)
{
	static const __u64 zero;
	__u64 *total;
	int err;

	total = map_lookup_or_init(counts, key, &zero, &err);
	if (!total) {
		counter_inc(&drop_counts, SPANPROF_DROP_OFF_CPU_FULL);
		return;
	}
	__sync_fetch_and_add(total, ns);
}

/* next runs again: if it blocked in a span, the wait goes to the span's total and, when long
 * enough, to the off-CPU profile. */
static __always_inline void switch_in(struct task_struct *next, __u64 now)
{
	struct span_task *st = bpf_task_storage_get(&span_tasks, next, NULL, 0);
	__u64 delta;

	if (!st || !st->active)
		return;
	st->on_cpu_ns = now;
	if (!st->off_since_ns)
		return;
	delta = now - st->off_since_ns;
	st->off_since_ns = 0;
	st->off_cpu_ns += delta;
	if (delta < cfg_off_cpu_min_ns) {
		counter_inc(&event_counts, SPANPROF_EVENT_OFF_CPU_SHORT);
		return;
	}
	add_time(off_cpu_slot ? (void *)&off_cpu_counts_1 : (void *)&off_cpu_counts_0, &st->key,
		 delta);
	counter_inc(&event_counts, SPANPROF_EVENT_OFF_CPU);
}

SEC("tp_btf/sched_switch")
int BPF_PROG(on_sched_switch, bool preempt, struct task_struct *prev, struct task_struct *next,
	     unsigned int prev_state)
{
	__u64 now = bpf_ktime_get_ns();

	/* Only a thread that stops being runnable (TASK_RUNNING is 0) waits for something; a
	 * preempted one is neither on the CPU nor blocked until it runs again. */
	switch_out(ctx, prev, now, !preempt && prev_state);
	switch_in(next, now);
	return 0;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
