// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* perf_event program: on every cpu-clock tick, counts (process, user stack, kernel stack, span)
 * of the interrupted task in the window's count map. Two windows alternate so that user space
 * drains one while the other fills. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "helpers.bpf.h"
#include "go_labels.bpf.h"
#include "maps.bpf.h"
#include "span_names.bpf.h"
#include "unwind_native.bpf.h"
#include "stack_store.bpf.h"

/* Only count processes listed in target_pids (--pid): span_hook.bpf.c's knob. */
extern const volatile bool cfg_filter_pids;

/* Which window (0 or 1) samples go to; user space flips it before draining the other. */
__u32 window_slot = 0;

extern THREAD_SPANS_MAP;
extern SPAN_AREAS_MAP;
extern GOROUTINE_SPANS_MAP;
extern GO_PIDS_MAP;
extern SPAN_NAMES_MAP;

#include "thread_ctx.bpf.h"
#include "span_area.bpf.h"

/* python_frames.bpf.c: the thread's CPython frames into window slot's interp_stacks. */
extern __u64 py_capture(__u32 pid, __u32 slot);
/* ruby_frames.bpf.c: the thread's CRuby frames, into the same maps. */
extern __u64 rb_capture(__u32 pid, __u32 slot);

extern TARGET_PIDS_MAP;

/* The stacks of each window (all kinds, by hash), the unwinder's per-CPU state and the buffer of
 * the kernel and frame-pointer stacks. */
STACKS_MAP(stacks_0);
STACKS_MAP(stacks_1);
UNWIND_SCRATCH_MAP(unwind_scratch);
STACK_SCRATCH_MAP(stack_scratch);

#if defined(__TARGET_ARCH_x86)
static long unwind_step(__u32 index, void *ctx)
{
	struct native_unwind *st;
	__u32 zero = 0;

	st = bpf_map_lookup_elem(&unwind_scratch, &zero);
	if (!st)
		return 1;
	return unwind_frame(st);
}

/* Unwinds the current user stack with CFI into the window's stacks map. Returns 1 with
 * *hash set when it did, 0 when the sample should take the frame-pointer stack instead (no tables for
 * this process yet, a table being built or evicted, no user context). The registers are the
 * sample's own when it hit user mode, else the ones saved on kernel entry. */
static __always_inline int unwind_user_stack(struct bpf_perf_event_data *ctx, __u32 pid,
					     void *stacks, __u64 *hash)
{
	struct native_unwind *st;
	struct pt_regs *regs;
	__u64 ip = ctx->regs.ip;
	__u32 zero = 0;

	if (!bpf_map_lookup_elem(&unwind_procs, &pid))
		return 0;
	st = bpf_map_lookup_elem(&unwind_scratch, &zero);
	if (!st)
		return 0;
	if (!(ip >> 63)) { /* kernel addresses have the top bit set */
		unwind_begin(st, pid, ip, ctx->regs.sp, ctx->regs.bp, 0);
	} else {
		regs = (struct pt_regs *)bpf_task_pt_regs(bpf_get_current_task_btf());
		unwind_begin(st, pid, BPF_CORE_READ(regs, ip), BPF_CORE_READ(regs, sp),
			     BPF_CORE_READ(regs, bp), 0);
	}
	if (!unwind_walk(st, unwind_step, stacks, hash, SPANPROF_DROP_USER_STACK))
		return 0;
	counter_inc(&event_counts, SPANPROF_EVENT_UNWIND_CFI);
	return 1;
}
#else /* !__TARGET_ARCH_x86: frame pointers only (bpf_get_stack) for now */

static __always_inline int unwind_user_stack(struct bpf_perf_event_data *ctx, __u32 pid,
					     void *stacks, __u64 *hash)
{
	return 0;
}
#endif

/* Sizes are set by the agent before load (bpf_map__set_max_entries). Not preallocated: the
 * kernel holds memory for the keys a window has; a full map is counted (counts_map_full). */
#define COUNT_MAP(name)                                       \
	struct {                                              \
		__uint(type, BPF_MAP_TYPE_HASH);              \
		__uint(map_flags, BPF_F_NO_PREALLOC);         \
		__uint(max_entries, SPANPROF_DEFAULT_COUNTS); \
		__type(key, struct sample_key);               \
		__type(value, __u64);                         \
	} name SEC(".maps")

COUNT_MAP(sample_counts_0);
COUNT_MAP(sample_counts_1);

/* struct sample_key is 80 bytes: built in per-CPU scratch rather than on the 512-byte stack. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct sample_key);
} key_scratch SEC(".maps");

/* A Go span_name label's value while it is hashed and interned. 256 bytes would take half of the
 * 512-byte stack the sampler shares with the key and the label walk, so it is per-CPU scratch:
 * safe because a perf_event program does not nest on its CPU (the kernel skips the overflow
 * handler's program while another BPF program runs there), so no other sample rewrites it. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct span_name);
} name_scratch SEC(".maps");

/* The id of a span_name label's value v, interned in span_names as the span hook does its names,
 * so a Go label span's name reaches the agent like a hook span's. 0 for an empty value, or when
 * the value could not be read or stored (counted as span_name_lost). */
static __always_inline __u64 label_name_id(const struct go_string *v)
{
	__u32 zero = 0;
	struct span_name *buf;
	__u64 n = v->len, id;

	if (!n)
		return 0;
	buf = bpf_map_lookup_elem(&name_scratch, &zero);
	if (!buf)
		return 0; /* cannot happen (a one-slot array), but the verifier needs the check */
	/* Cut at 255 bytes, as the Go hook's Span.SetName cuts (no UTF-8 care either), so a name
	 * gets the same id from the hook and from the label. The `&` restates the bound in a form
	 * the verifier tracks (n <= 255 already), so the read and the NUL store stay in buf. */
	if (n > SPANPROF_ABI_SPAN_NAME_MAX - 1)
		n = SPANPROF_ABI_SPAN_NAME_MAX - 1;
	n &= SPANPROF_ABI_SPAN_NAME_MAX - 1;
	if (bpf_probe_read_user(buf->name, n, (void *)v->ptr)) {
		counter_inc(&drop_counts, SPANPROF_DROP_SPAN_NAME);
		return 0;
	}
	buf->name[n] = '\0';
	/* name_hash's loop has a constant bound (255) and stops at the NUL: bounded for the
	 * verifier, and run here once per sample, outside the label walk's bpf_loop() callbacks. */
	id = name_hash(buf->name);
	/* Bytes after the NUL are another name's leftovers; span_names values allow that. */
	if (!id || bpf_map_lookup_elem(&span_names, &id))
		return id;
	/* A new name, as a hook's: the sampled thread's user pays for it. */
	if (!user_budget_take(&user_budgets, &drop_counts,
			      user_budget_key((__u32)bpf_get_current_uid_gid(),
					      bpf_get_current_pid_tgid() >> 32),
			      BUDGET_NAMES, SPANPROF_DROP_SPAN_NAME_BUDGET))
		return 0;
	if (bpf_map_update_elem(&span_names, &id, buf, BPF_ANY)) {
		counter_inc(&drop_counts, SPANPROF_DROP_SPAN_NAME);
		return 0;
	}
	return id;
}

/* On the system stack (runtime calls on g0, signal handlers on gsignal) TLS holds the M's g0 or
 * gsignal; the goroutine whose work it is, and whose span counts, is g.m.curg. */
static __always_inline __u64 user_goroutine(__u64 g, const struct go_proc *gp)
{
	__u64 m, curg;

	if (!gp->m_offset || !gp->curg_offset ||
	    bpf_probe_read_user(&m, sizeof(m), (void *)(g + gp->m_offset)) || !m ||
	    bpf_probe_read_user(&curg, sizeof(curg), (void *)(m + gp->curg_offset)) || !curg)
		return g;
	return curg;
}

/* The hook's span of goroutine g, when the entry under g was set by this very goroutine (a g the
 * runtime reused still holds a dead goroutine's entry until the new one sets its own span). */
static __always_inline const struct span_ctx *
hook_span(struct task_struct *task, const struct goroutine_key *gkey, const struct go_proc *gp)
{
	void *spans = goroutine_spans_of();
	struct goroutine_span *gs = spans ? bpf_map_lookup_elem(spans, gkey) : NULL;
	__u64 goid, mm;

	if (!gs || !gs->span.active ||
	    goroutine_owner(task, gkey->g, gp->goid_offset, &goid, &mm) || gs->goid != goid ||
	    gs->mm != mm)
		return NULL;
	return &gs->span.slot[gs->span.current & 1];
}

/* The local root id a span labels its samples with (the root's, or its own as a root). */
static __always_inline __u64 root_id(const struct span_ctx *s)
{
	__u64 root = *(const __u64 *)s->root_span_id;

	return root ? root : *(const __u64 *)s->span_id;
}

/* The span of a Go process's running goroutine, from the hook and from its pprof labels. The hook
 * wins unless the labels name another span_id: the Go integration writes both at once (the
 * labels with the local root's id), so labels that disagree were set later, by pprof.Do or
 * pprof.SetGoroutineLabels (otel-profiling-go, a library), and are the current truth. Labels
 * without a span_id (name only) never override the hook. */
static __always_inline void copy_go_span(struct sample_key *key, struct task_struct *task,
					 const struct go_proc *gp)
{
	struct goroutine_key gkey = { .pid = key->pid };
	const struct span_ctx *hook;
	struct go_string name;
	__u64 label_id;
	int found;

	if (current_goroutine(task, gp->g_tls_offset, &gkey.g)) {
		counter_inc(&drop_counts, SPANPROF_DROP_GOROUTINE_READ);
		return;
	}
	gkey.g = user_goroutine(gkey.g, gp);
	hook = hook_span(task, &gkey, gp);
	found = go_labels_span(gkey.g, gp, &key->span, &name);
	if (found < 0)
		counter_inc(&drop_counts, SPANPROF_DROP_GO_LABELS_READ);
	label_id = found > 0 ? *(const __u64 *)key->span.span_id : 0;
	if (hook && (!label_id || label_id == root_id(hook))) {
		__builtin_memcpy(&key->span, hook, sizeof(key->span));
		key->has_span = 1;
		return;
	}
	if (found <= 0) {
		__builtin_memset(&key->span, 0, sizeof(key->span)); /* a fault may leave a part */
		return;
	}
	key->span.name_id = label_name_id(&name);
	key->has_span = 1;
}

static __always_inline void copy_span(struct sample_key *key, struct task_struct *task)
{
	struct go_proc *gp = bpf_map_lookup_elem(&go_pids, &key->pid);
	struct thread_span *ts;

	key->has_span = 0;
	__builtin_memset(&key->span, 0, sizeof(key->span));
	if (gp) {
		copy_go_span(key, task, gp);
		return;
	}
	/* NULL also when the hook's uprobe holds this task's storage lock on this CPU: the sample
	 * then has no span. That is not counted, since the helper's NULL cannot tell it from a
	 * thread that never set a span. */
	ts = bpf_task_storage_get(&thread_spans, task, NULL, 0);
	if (!ts || !ts->active) {
		/* No span from the hook's uprobe: from its thread context record (hook ABI
		 * version 3), else another tracer's (docs/thread-context.md). */
		key->has_span = own_record_span(&key->span, task, TCTX_SCRATCH_SAMPLE) ||
				thread_ctx_span(&key->span, task, key->pid, TCTX_SCRATCH_SAMPLE);
		return;
	}
	__builtin_memcpy(&key->span, &ts->slot[ts->current & 1], sizeof(key->span));
	key->has_span = 1;
}

static __always_inline void count_sample(void *counts, struct sample_key *key)
{
	static const __u64 zero;
	__u64 *count;
	int err;

	count = map_lookup_or_init(counts, key, &zero, &err);
	if (!count) {
		counter_inc(&drop_counts, SPANPROF_DROP_COUNTS_FULL);
		return;
	}
	__sync_fetch_and_add(count, 1);
}

SEC("perf_event")
int on_cpu_sample(struct bpf_perf_event_data *ctx)
{
	__u32 pid = bpf_get_current_pid_tgid() >> 32;
	__u32 zero = 0, slot = window_slot;
	struct sample_key *key;
	void *stacks;

	if (pid == 0) {
		counter_inc(&event_counts, SPANPROF_EVENT_IDLE);
		return 0;
	}
	if (cfg_filter_pids && !bpf_map_lookup_elem(&target_pids, &pid))
		return 0;
	key = bpf_map_lookup_elem(&key_scratch, &zero);
	if (!key)
		return 0;
	key->pid = pid;
	key->user_stack_hash = 0;
	stacks = slot ? (void *)&stacks_1 : (void *)&stacks_0;
	key->kern_stack_hash =
		stack_store(ctx, &stack_scratch, stacks, 0, 0, SPANPROF_DROP_KERN_STACK);
	if (!unwind_user_stack(ctx, pid, stacks, &key->user_stack_hash)) {
		key->user_stack_hash = stack_store(ctx, &stack_scratch, stacks, BPF_F_USER_STACK, 0,
						   SPANPROF_DROP_USER_STACK);
		counter_inc(&event_counts, SPANPROF_EVENT_UNWIND_FP);
	}
	copy_span(key, bpf_get_current_task_btf());
	key->interp_stack_hash = py_capture(pid, slot);
	if (!key->interp_stack_hash)
		key->interp_stack_hash = rb_capture(pid, slot);
	count_sample(slot ? (void *)&sample_counts_1 : (void *)&sample_counts_0, key);
	counter_inc(&event_counts, SPANPROF_EVENT_SAMPLES);
	return 0;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
