// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Off-CPU time of threads in spans. tp_btf/sched_switch: a thread in a span adds its time on the
 * CPU to the span at every switch out; when it blocks (leaves the CPU to wait: sleep, I/O, lock,
 * futex) the wait starts; when it runs again, the time off the CPU (the wait and the run-queue
 * delay after the wake-up) goes to the span's off-CPU total and, above --off-cpu-min, to
 * (process, stacks, span) in the window's off-CPU count map. Preemption is not a wait the span
 * chose: a thread preempted while runnable is counted in neither.
 *
 * Where the stacks are taken (docs/off-cpu.md says why):
 * - full stacks (the default): when a wait of at least --off-cpu-min ends, sched_switch marks it
 *   pending; tp_btf/sched_exit_tp, at the end of __schedule() in the thread that just came back,
 *   takes its stacks: the thread is current again, its user registers (saved when it entered the
 *   kernel) and its memory are the wait's, so the CFI unwinder and the Python and Ruby walkers
 *   run as they do for CPU samples. Shorter waits pay the counter only.
 * - frame pointers (--off-cpu-unwind=fp, or a kernel without sched_exit_tp): the stacks are taken
 *   when the thread blocks, as before full stacks existed. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "helpers.bpf.h"
#include "maps.bpf.h"
#include "unwind_native.bpf.h"
#include "stack_store.bpf.h"

/* Blocked times below this are not put in the off-CPU profile (the agent sets it:
 * --off-cpu-min); the exact off-CPU time per span counts them all. */
const volatile __u64 cfg_off_cpu_min_ns = 1000000;
/* 1: stacks taken when the thread runs again (on_sched_exit attached); 0: when it blocks. */
const volatile bool cfg_off_cpu_full_stacks = true;

/* Which window (0 or 1) off-CPU time goes to; user space flips it with window_slot. */
__u32 off_cpu_slot = 0;

extern THREAD_SPANS_MAP;
extern SPAN_AREAS_MAP;
extern SPAN_TASKS_MAP;
/* drop_counts and event_counts: declared by unwind_native.bpf.h. */
extern SPAN_NAMES_MAP;

#include "thread_ctx.bpf.h"
#include "span_area.bpf.h"

/* span_hook.bpf.c: the span changes the current thread's hook queued (hook ABI version 3) end
 * and start its span segments, up to now. */
extern int span_ring_switch_out(__u64 now);

/* python_frames.bpf.c, ruby_frames.bpf.c: the current thread's interpreter frames into window
 * slot's off_cpu_interp_stacks, walked with their own scratch. */
extern __u64 py_capture_off_cpu(__u32 pid, __u32 slot);
extern __u64 rb_capture_off_cpu(__u32 pid, __u32 slot);

/* Frame-pointer mode's stacks (kernel and user), one map for both windows, never emptied by a
 * drain: a thread may stay blocked across any number of windows, so the stack it took when it
 * left the CPU must still be there when it runs again. Each stack carries when it was last
 * taken, and the agent deletes those not taken for long (user/profile/stack_sweep.h); a full map
 * is counted. Full stacks use the window's own stack map instead (this one keeps one entry). */
STACKS_MAP(off_cpu_fp_stacks);

/* Sized by the agent from --off-cpu-map-entries; not preallocated (memory for the waits a window
 * has), a full map counted as off_cpu_map_full. */
#define OFF_CPU_COUNT_MAP(name)                               \
	struct {                                              \
		__uint(type, BPF_MAP_TYPE_HASH);              \
		__uint(map_flags, BPF_F_NO_PREALLOC);         \
		__uint(max_entries, SPANPROF_OFF_CPU_COUNTS); \
		__type(key, struct sample_key);               \
		__type(value, __u64);                         \
	} name SEC(".maps")

OFF_CPU_COUNT_MAP(off_cpu_counts_0);
OFF_CPU_COUNT_MAP(off_cpu_counts_1);

/* The stacks of each window with full stacks (all kinds, by hash: the loader sizes them), the
 * unwinder's state and the kernel and frame-pointer stacks' buffer: on_sched_exit runs with
 * interrupts on, so the sampler can interrupt it on its CPU and must not find its own scratch
 * half written. */
STACKS_MAP(off_cpu_stacks_0);
STACKS_MAP(off_cpu_stacks_1);
UNWIND_SCRATCH_MAP(off_cpu_unwind_scratch);
STACK_SCRATCH_MAP(off_cpu_stack_scratch);

/* Where a CFI walk of an off-CPU stack stops is counted apart from the CPU samples' stops. */
#define OFF_CPU_DROP_SHIFT \
	(SPANPROF_DROP_OFF_CPU_UNWIND_NO_MAPPING - SPANPROF_DROP_UNWIND_NO_MAPPING)
_Static_assert(SPANPROF_DROP_OFF_CPU_UNWIND_STALE - SPANPROF_DROP_UNWIND_STALE ==
		       OFF_CPU_DROP_SHIFT,
	       "off-CPU unwind stops in the order of the sampler's");
_Static_assert(SPANPROF_DROP_UNWIND_STALE - SPANPROF_DROP_UNWIND_NO_MAPPING == 4,
	       "five unwind stop reasons");

/* Kernel frames above the wait's own, so that the stack starts at __schedule: this program and
 * the tracepoint's BPF trampoline, and at switch-out the tracepoint's iterator too. */
#define KERN_SKIP_AT_SWITCH 3
#define KERN_SKIP_AT_RESUME 2

#if defined(__TARGET_ARCH_x86)
static long off_cpu_unwind_step(__u32 index, void *ctx)
{
	struct native_unwind *st;
	__u32 zero = 0;

	st = bpf_map_lookup_elem(&off_cpu_unwind_scratch, &zero);
	if (!st)
		return 1;
	return unwind_frame(st);
}

/* The CFI walk of task's user stack, from the registers it entered the kernel with, into window
 * slot's off_cpu_stacks. task must be current (its memory is read). Returns 1 with *hash
 * set, or 0: take a frame-pointer stack (no tables for the process yet, one being built). */
static __always_inline int unwind_wait(struct task_struct *task, __u32 pid, void *stacks,
				       __u64 *hash)
{
	struct pt_regs *regs = (struct pt_regs *)bpf_task_pt_regs(task);
	struct native_unwind *st;
	__u32 zero = 0;

	if (!bpf_map_lookup_elem(&unwind_procs, &pid))
		return 0;
	st = bpf_map_lookup_elem(&off_cpu_unwind_scratch, &zero);
	if (!st)
		return 0;
	unwind_begin(st, pid, BPF_CORE_READ(regs, ip), BPF_CORE_READ(regs, sp),
		     BPF_CORE_READ(regs, bp), OFF_CPU_DROP_SHIFT);
	return unwind_walk(st, off_cpu_unwind_step, stacks, hash, SPANPROF_DROP_OFF_CPU_USER_STACK);
}
#else
static __always_inline int unwind_wait(struct task_struct *task, __u32 pid, void *stacks,
				       __u64 *hash)
{
	return 0;
}
#endif

/* The one place a wait's stacks and span are taken, into st->key, with task current (the thread
 * that waits, in its own address space). Full stacks: the CFI walk (frame pointers where a
 * process has no tables yet) and the interpreter frames, into window slot's maps. fp mode: the
 * frame-pointer stacks only. kern_skip: the kernel frames of the caller's own context. */
static __always_inline void capture_wait(void *ctx, struct task_struct *task, struct span_task *st,
					 __u32 slot, __u32 kern_skip)
{
	struct thread_span *ts = bpf_task_storage_get(&thread_spans, task, NULL, 0);
	struct sample_key *key = &st->key;
	__u32 pid = task->tgid, taken;
	void *stacks;

	key->pid = pid;
	key->has_span = ts != NULL;
	if (ts)
		__builtin_memcpy(&key->span, &ts->slot[ts->current & 1], sizeof(key->span));
	else /* the hook's record (ABI version 3), else another tracer's span: OpenTelemetry
	      * thread context, else OBI's map */
		key->has_span = own_record_span(&key->span, task, TCTX_SCRATCH_OFF_CPU) ||
				thread_ctx_span(&key->span, task, pid, TCTX_SCRATCH_OFF_CPU);
	/* Frame-pointer mode: the shared map, with the stacks' time stamp for the agent's sweep. */
	if (cfg_off_cpu_full_stacks) {
		stacks = slot ? (void *)&off_cpu_stacks_1 : (void *)&off_cpu_stacks_0;
		taken = 0;
	} else {
		stacks = &off_cpu_fp_stacks;
		taken = (__u32)(bpf_ktime_get_ns() >> SPANPROF_STACK_TAKEN_SHIFT) ?: 1;
	}
	key->kern_stack_hash = stack_store(ctx, &off_cpu_stack_scratch, stacks, kern_skip, taken,
					   SPANPROF_DROP_OFF_CPU_KERN_STACK);
	key->user_stack_hash = 0;
	key->interp_stack_hash = 0;
	if (cfg_off_cpu_full_stacks && unwind_wait(task, pid, stacks, &key->user_stack_hash)) {
		counter_inc(&event_counts, SPANPROF_EVENT_OFF_CPU_UNWIND_CFI);
	} else {
		key->user_stack_hash =
			stack_store(ctx, &off_cpu_stack_scratch, stacks, BPF_F_USER_STACK, taken,
				    SPANPROF_DROP_OFF_CPU_USER_STACK);
		counter_inc(&event_counts, SPANPROF_EVENT_OFF_CPU_UNWIND_FP);
	}
	if (!cfg_off_cpu_full_stacks)
		return;
	key->interp_stack_hash = py_capture_off_cpu(pid, slot);
	if (!key->interp_stack_hash)
		key->interp_stack_hash = rb_capture_off_cpu(pid, slot);
}

/* prev leaves the CPU: its time on it goes to its span; if it blocks, the wait starts. */
static __always_inline void switch_out(void *ctx, struct task_struct *prev, __u64 now, bool blocks)
{
	struct span_task *st;

	span_ring_switch_out(now);
	st = bpf_task_storage_get(&span_tasks, prev, NULL, 0);
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
	/* prev is still current here: its stacks can be taken, by frame pointer only (an unwind
	 * here would be paid by every wait, however short). */
	if (!cfg_off_cpu_full_stacks)
		capture_wait(ctx, prev, st, 0, KERN_SKIP_AT_SWITCH);
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

/* Ends st's wait at now and returns its length. A wait shorter than cfg_off_cpu_min_ns is only
 * counted as short; a longer one goes to the off-CPU profile under st's key at once in fp mode,
 * else to st's pending time for on_sched_exit, which takes its stacks. */
static __always_inline __u64 end_wait(struct span_task *st, __u64 now)
{
	__u64 delta = now - st->off_since_ns;

	st->off_since_ns = 0;
	if (delta < cfg_off_cpu_min_ns) {
		counter_inc(&event_counts, SPANPROF_EVENT_OFF_CPU_SHORT);
		return delta;
	}
	if (cfg_off_cpu_full_stacks) {
		/* Added, not set: a wait on_sched_exit missed (it never does after a switch in
		 * __schedule) is then counted with the next one rather than lost. */
		st->pending_ns += delta;
		return delta;
	}
	add_time(off_cpu_slot ? (void *)&off_cpu_counts_1 : (void *)&off_cpu_counts_0, &st->key,
		 delta);
	counter_inc(&event_counts, SPANPROF_EVENT_OFF_CPU);
	return delta;
}

/* next runs again: if it blocked in a span, the wait goes to the span's total and, when long
 * enough, to the off-CPU profile (at once in fp mode, else once on_sched_exit took its
 * stacks). */
static __always_inline void switch_in(struct task_struct *next, __u64 now)
{
	struct span_area *sa = bpf_task_storage_get(&span_areas, next, NULL, 0);
	struct span_task *st;

	/* A span change the hook queued from now on happened on the CPU since now: the floor of
	 * its time when the ring is read (span_hook.bpf.c), so no wait is counted as CPU time. */
	if (sa)
		sa->floor_ns = now;
	st = bpf_task_storage_get(&span_tasks, next, NULL, 0);
	if (!st || !st->active)
		return;
	st->on_cpu_ns = now;
	if (st->off_since_ns)
		st->off_cpu_ns += end_wait(st, now);
}

/* Waits of threads whose span comes from an OpenTelemetry thread context record, not from
 * spanprof's hook (which owns span_tasks): the same bookkeeping, in its own task storage, made
 * only for threads of processes that publish thread context, blocking under a valid record. */
struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct span_task);
} tctx_waits SEC(".maps");

/* 1 when task (current) of process pid has a valid thread context record naming a span: two
 * reads of its memory, made only when its process publishes thread context. */
static __always_inline int tctx_in_span(struct task_struct *task, __u32 pid)
{
	struct tctx_proc *tp = bpf_map_lookup_elem(&tctx_procs, &pid);
	__u8 hdr[TCTX_OFF_VALID + 1];
	__u64 slot, rec = 0;

	if (!tp)
		return 0;
	slot = tctx_slot(tp, task);
	if (!slot || bpf_probe_read_user(&rec, sizeof(rec), (void *)slot) || !rec ||
	    bpf_probe_read_user(hdr, sizeof(hdr), (void *)rec))
		return 0;
	return hdr[TCTX_OFF_VALID] == 1 && !labels_zero8(hdr + TCTX_OFF_SPAN_ID);
}

/* prev blocks with no span of the hook's: if it is under a thread context record, its wait
 * starts (frame-pointer stacks taken now in fp mode, as switch_out does). */
static __always_inline void tctx_switch_out(void *ctx, struct task_struct *prev, __u64 now,
					    bool blocks)
{
	__u32 pid = prev->tgid;
	struct span_task *st;

	if (!blocks || !bpf_map_lookup_elem(&tctx_procs, &pid))
		return;
	st = bpf_task_storage_get(&span_tasks, prev, NULL, 0);
	if ((st && st->active) || !tctx_in_span(prev, pid))
		return;
	st = bpf_task_storage_get(&tctx_waits, prev, NULL, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!st)
		return;
	st->active = 1;
	st->off_since_ns = now;
	st->pending_ns = 0;
	if (!cfg_off_cpu_full_stacks)
		capture_wait(ctx, prev, st, 0, KERN_SKIP_AT_SWITCH);
}

/* next runs again after a wait under a thread context record: counted as switch_in counts a
 * hook span's wait. */
static __always_inline void tctx_switch_in(struct task_struct *next, __u64 now)
{
	struct span_task *st = bpf_task_storage_get(&tctx_waits, next, NULL, 0);

	if (st && st->off_since_ns)
		end_wait(st, now);
}

SEC("tp_btf/sched_switch")
int BPF_PROG(on_sched_switch, bool preempt, struct task_struct *prev, struct task_struct *next,
	     unsigned int prev_state)
{
	__u64 now = bpf_ktime_get_ns();
	bool blocks = !preempt && prev_state;

	/* Only a thread that stops being runnable (TASK_RUNNING is 0) waits for something; a
	 * preempted one is neither on the CPU nor blocked until it runs again. Most switches are
	 * of threads no BPF program keeps task storage for (any program's: the pointer is the
	 * task's list of them): switch_out, switch_in and tctx_switch_in would find none of theirs
	 * and do nothing, so they are not run (five task storage look-ups a switch saved).
	 * tctx_switch_out may create storage: it always runs. */
	if (prev->bpf_storage)
		switch_out(ctx, prev, now, blocks);
	tctx_switch_out(ctx, prev, now, blocks);
	if (next->bpf_storage) {
		switch_in(next, now);
		tctx_switch_in(next, now);
	}
	return 0;
}

/* The current thread runs again (the end of __schedule(), in its own context) after a switch
 * that sched_switch may not have seen: some kernels leave the tracepoint out for switches away
 * from tasks they hide from tracing (on the Firecracker VMs the tests run on, every switch away
 * from a thread of the VM's init; perf's sched_switch events miss them too). Nothing then marked
 * the thread back on the CPU, and its run until the next switch out was lost to its span (records
 * of 0.3 ms spans with 75-230 us of CPU). st is the thread's entry of one wait kind (kind 0:
 * tctx_waits, 1: span_tasks); what switch_in or tctx_switch_in did not do is done now, a context
 * switch's length later than the switch, and counted. A switch that was seen left nothing to do:
 * its span segment has its time on the CPU, its wait has ended.
 * Between spans nothing tells a missed switch in from a seen one, yet switch_in raises the floor
 * of the hook's change times (span_hook.bpf.c) at every one: a change whose store was preempted
 * would otherwise start its segment back at the switch out and count the wait as CPU. The floor
 * is raised here at every switch in of such a thread; after a seen switch that moves it from the
 * switch to now, time the thread spent in the kernel, before any change of its could be queued. */
static __always_inline void unseen_switch_in(struct task_struct *task, struct span_task *st,
					     __u32 kind)
{
	struct span_area *sa;

	if (!kind) {
		if (st->off_since_ns) {
			counter_inc(&event_counts, SPANPROF_EVENT_CAUGHT_UP_TCTX);
			end_wait(st, bpf_ktime_get_ns());
		}
	} else if (!st->active) {
		sa = bpf_task_storage_get(&span_areas, task, NULL, 0);
		if (sa)
			sa->floor_ns = bpf_ktime_get_ns();
	} else if (!st->on_cpu_ns) {
		counter_inc(&event_counts, SPANPROF_EVENT_CAUGHT_UP_SPAN);
		switch_in(task, bpf_ktime_get_ns());
	}
}

/* One wait taken at the end of __schedule(): on_sched_exit's bpf_loop callback, so that the
 * verifier checks the capture once rather than once per kind of wait. */
struct resume_walk {
	void *ctx;
	struct task_struct *task;
};

/* Wait kind index of the current thread: 0, a thread context record's (tctx_waits); 1, a hook
 * span's (span_tasks). Its stacks and span are taken in the thread's own context, and the wait
 * is counted under them. */
static long resume_step(__u64 index, void *arg)
{
	struct resume_walk *w = arg;
	struct span_task *st;
	__u32 slot;
	__u64 ns;

	st = index ? bpf_task_storage_get(&span_tasks, w->task, NULL, 0) :
		     bpf_task_storage_get(&tctx_waits, w->task, NULL, 0);
	if (!st)
		return 0;
	unseen_switch_in(w->task, st, index);
	if (!st->pending_ns)
		return 0;
	ns = st->pending_ns;
	st->pending_ns = 0;
	if (index && !st->active)
		return 0;
	/* One slot for the stacks and the count: the drain reads them as one window. */
	slot = off_cpu_slot;
	capture_wait(w->ctx, w->task, st, slot, KERN_SKIP_AT_RESUME);
	/* A record may have been left while the thread waited: no span, nothing counted. */
	if (!index && !st->key.has_span)
		return 0;
	add_time(slot ? (void *)&off_cpu_counts_1 : (void *)&off_cpu_counts_0, &st->key, ns);
	counter_inc(&event_counts, SPANPROF_EVENT_OFF_CPU);
	return 0;
}

/* The end of __schedule(), in the thread that now runs: if sched_switch left it a pending wait
 * (under a thread context record, then under a hook span), its stacks are taken and the wait
 * counted under them. Every other thread leaves before any look-up or at the task storage
 * look-ups. */
SEC("tp_btf/sched_exit_tp")
int BPF_PROG(on_sched_exit, bool is_switch)
{
	struct resume_walk w = { .ctx = ctx };

	if (!is_switch)
		return 0;
	w.task = bpf_get_current_task_btf();
	/* No task storage at all (on_sched_switch says why): no pending wait of either kind. */
	if (!w.task->bpf_storage)
		return 0;
	bpf_loop(2, resume_step, &w, 0);
	return 0;
}

/* The end of __schedule() when on_sched_exit is not loaded (frame-pointer stacks, taken at the
 * switch out): only the switches in that sched_switch did not see are caught up. */
SEC("tp_btf/sched_exit_tp")
int BPF_PROG(on_sched_exit_unseen, bool is_switch)
{
	struct task_struct *task;
	struct span_task *st;

	if (!is_switch)
		return 0;
	task = bpf_get_current_task_btf();
	if (!task->bpf_storage)
		return 0;
	st = bpf_task_storage_get(&span_tasks, task, NULL, 0);
	if (st)
		unseen_switch_in(task, st, 1);
	st = bpf_task_storage_get(&tctx_waits, task, NULL, 0);
	if (st)
		unseen_switch_in(task, st, 0);
	return 0;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
