// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* tp_btf/sched_switch: when a thread in a span blocks (leaves the CPU to wait: sleep, I/O, lock,
 * futex), its stacks and the time are kept in its task storage; when it runs again, the time
 * off the CPU (the wait and the run-queue delay after the wake-up) goes to (process, stacks,
 * span) in the window's off-CPU count map. Preemption is not a wait the span chose: a thread
 * preempted while runnable is not counted here. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "helpers.bpf.h"
#include "maps.bpf.h"

/* Blocked times below this are not counted (the agent sets it: --off-cpu-min). */
const volatile __u64 cfg_off_cpu_min_ns = 1000000;
/* Only count processes listed in target_pids (--pid). */
const volatile bool cfg_off_cpu_filter_pids = false;

/* Which window (0 or 1) off-CPU time goes to; user space flips it with window_slot. */
__u32 off_cpu_slot = 0;

extern THREAD_SPANS_MAP;
extern DROP_COUNTS_MAP;
extern EVENT_COUNTS_MAP;

extern TARGET_PIDS_MAP;

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

/* Per thread: when it left the CPU (0: not in a span then) and the key its time will go to. */
struct off_cpu_task {
	__u64 start_ns;
	struct sample_key key;
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct off_cpu_task);
} off_cpu_tasks SEC(".maps");

/* prev is the current task: its stacks can be taken. Threads outside spans leave at once. */
static __always_inline void switch_out(void *ctx, struct task_struct *prev, __u64 now)
{
	__u32 pid = prev->tgid;
	struct thread_span *ts;
	struct off_cpu_task *st;

	if (!pid)
		return;
	ts = bpf_task_storage_get(&thread_spans, prev, NULL, 0);
	if (!ts || !ts->active)
		return;
	if (cfg_off_cpu_filter_pids && !bpf_map_lookup_elem(&target_pids, &pid))
		return;
	st = bpf_task_storage_get(&off_cpu_tasks, prev, NULL, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!st) {
		counter_inc(&drop_counts, SPANPROF_DROP_OFF_CPU_STORAGE);
		return;
	}
	st->key.pid = pid;
	st->key.has_span = 1;
	__builtin_memcpy(&st->key.span, &ts->slot[ts->current & 1], sizeof(st->key.span));
	/* The kernel stack starts at __schedule: this program and bpf_trace_run4 are skipped. */
	st->key.kern_stack_id =
		bpf_get_stackid(ctx, &off_cpu_stacks, BPF_F_REUSE_STACKID | KERN_SKIP_FRAMES);
	st->key.user_stack_id =
		bpf_get_stackid(ctx, &off_cpu_stacks, BPF_F_USER_STACK | BPF_F_REUSE_STACKID);
	st->start_ns = now;
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

/* next runs again: if it left the CPU in a span, its time off the CPU is counted. */
static __always_inline void switch_in(struct task_struct *next, __u64 now)
{
	struct off_cpu_task *st;
	__u64 delta;

	st = bpf_task_storage_get(&off_cpu_tasks, next, NULL, 0);
	if (!st || !st->start_ns)
		return;
	delta = now - st->start_ns;
	st->start_ns = 0;
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

	/* Only a thread that stops being runnable (TASK_RUNNING is 0) waits for something. */
	if (!preempt && prev_state)
		switch_out(ctx, prev, now);
	switch_in(next, now);
	return 0;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
