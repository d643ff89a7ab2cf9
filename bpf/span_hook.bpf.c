// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* uprobe on spanprof_span_set(): copies the hook's span context into the calling thread's
 * task storage, double-buffered so a sample interrupting the copy still sees a whole span; with
 * off-CPU on, ends the thread's span segment in span_tasks (and with span times, sends its
 * record to span_ends) and starts the next. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "helpers.bpf.h"
#include "maps.bpf.h"
#include "span_names.bpf.h"

THREAD_SPANS_MAP;
GOROUTINE_SPANS_MAP;
SPAN_NAMES_MAP;
GO_PIDS_MAP;
DROP_COUNTS_MAP;
EVENT_COUNTS_MAP;
TARGET_PIDS_MAP;
SPAN_TASKS_MAP;
SPAN_ENDS_MAP;

/* One user's spending in the current second (see SPANPROF_NEW_NAMES_PER_USER_S). */
struct user_budget {
	__u64 second; /* bpf_ktime_get_ns() / 1e9 of the counts below */
	__u32 names, ends;
};

USER_BUDGETS_MAP;

enum budget_kind { BUDGET_NAMES, BUDGET_ENDS };

/* Keep each thread's span segment in span_tasks for the sched_switch program (--off-cpu). */
const volatile bool cfg_span_tasks = false;
/* ... and emit a record when one ends: exact CPU time per span (--span-stats-max above 0). */
const volatile bool cfg_span_records = false;
/* With --pid, only the processes listed in target_pids are profiled: they alone are sampled
 * (sample.bpf.c), raise process events (proc_events.bpf.c) and get span times (here). One knob,
 * defined here beside target_pids and declared extern by the others. */
const volatile bool cfg_filter_pids = false;

_Static_assert(__builtin_offsetof(struct span_ctx, name_id) == SPANPROF_ABI_SPAN_NAME_OFFSET,
	       "the ids are the hook struct's first 40 bytes");

/* The budget key of the calling task: its uid, or for root (uid 0) its process. */
static __always_inline __u64 budget_key(void)
{
	__u32 uid = (__u32)bpf_get_current_uid_gid();

	return uid ? uid : (1ULL << 32) | (bpf_get_current_pid_tgid() >> 32);
}

/* 1 when the caller's user may spend one more of kind this second (and it is spent), 0 when
 * its share is spent (counted as drop). A full budget table or a race between CPUs can let a
 * few more through, never fewer: the bound is on a flood, not on exact counts. */
static __always_inline int budget_take(enum budget_kind kind, __u32 drop)
{
	struct user_budget fresh = { 0 }, *b;
	__u64 key = budget_key(), second = bpf_ktime_get_ns() / 1000000000ULL;
	__u32 *used, limit;

	b = bpf_map_lookup_elem(&user_budgets, &key);
	if (!b) {
		fresh.second = second;
		bpf_map_update_elem(&user_budgets, &key, &fresh, BPF_NOEXIST);
		b = bpf_map_lookup_elem(&user_budgets, &key);
		if (!b)
			return 1;
	}
	if (b->second != second) {
		b->second = second;
		b->names = 0;
		b->ends = 0;
	}
	used = kind == BUDGET_NAMES ? &b->names : &b->ends;
	limit = kind == BUDGET_NAMES ? SPANPROF_NEW_NAMES_PER_USER_S :
				       SPANPROF_SPAN_ENDS_PER_USER_S;
	if (*used >= limit) {
		counter_inc(&drop_counts, drop);
		return 0;
	}
	(*used)++;
	return 1;
}

/* Reads the hook's name (63 bytes at most for ABI v1, 255 for v2) and returns its id, adding
 * it to span_names when the map does not hold it yet; 0 when there is none or it failed.
 * last_id is the name this thread set last: interned one call ago, so the map lookup is
 * skipped (integrations re-set the same root name at every child start and end). */
static __always_inline __u64 intern_name(const void *user_span, __u32 version, __u64 last_id)
{
	/* 256 bytes of stack (the limit is 512): no per-CPU scratch, so a uprobe preempted by
	 * another task's uprobe on this CPU cannot see its buffer change. */
	struct span_name buf;
	const char *src = (const char *)user_span + SPANPROF_ABI_SPAN_NAME_OFFSET;
	__u32 max = version == SPANPROF_ABI_VERSION_V1 ? SPANPROF_ABI_SPAN_NAME_MAX_V1 :
							 SPANPROF_ABI_SPAN_NAME_MAX;
	__u64 id;

	__builtin_memset(&buf, 0, sizeof(buf));
	if (bpf_probe_read_user_str(buf.name, max, src) < 0) {
		counter_inc(&drop_counts, SPANPROF_DROP_SPAN_NAME);
		return 0;
	}
	id = name_hash(buf.name);
	if (!id || id == last_id || bpf_map_lookup_elem(&span_names, &id))
		return id;
	/* A new name: one user's flood of names must not evict everyone else's. */
	if (!budget_take(BUDGET_NAMES, SPANPROF_DROP_SPAN_NAME_BUDGET))
		return 0;
	if (bpf_map_update_elem(&span_names, &id, &buf, BPF_ANY)) {
		counter_inc(&drop_counts, SPANPROF_DROP_SPAN_NAME);
		return 0;
	}
	return id;
}

/* Copies the hook's ids into the slot that is not current, interns the name, then publishes.
 * Returns 0 when the thread's span is now the hook's. */
static __always_inline int write_span(struct thread_span *ts, const void *user_span)
{
	/* `& 1` keeps the index provably inside slot[] for the verifier. */
	__u32 next = (ts->current ^ 1) & 1;
	struct span_ctx *slot = &ts->slot[next];
	__u32 version;

	if (bpf_probe_read_user(slot, SPANPROF_ABI_SPAN_NAME_OFFSET, user_span)) {
		counter_inc(&drop_counts, SPANPROF_DROP_SPAN_READ);
		return -1;
	}
	version = slot->abi_version;
	if (version != SPANPROF_ABI_VERSION && version != SPANPROF_ABI_VERSION_V1) {
		counter_inc(&drop_counts, SPANPROF_DROP_SPAN_VERSION);
		return -1;
	}
	slot->name_id = intern_name(user_span, version, ts->slot[ts->current & 1].name_id);
	/* Publish: the sampler runs on this CPU only between instructions, so two plain stores in
	 * this order are enough; the barrier keeps the compiler from reordering them. */
	ts->current = next;
	__asm__ __volatile__("" ::: "memory");
	ts->active = 1;
	counter_inc(&event_counts, SPANPROF_EVENT_SPAN_SET);
	return 0;
}

/* The span segment that ends now: span's ids and name, st's times. One record to span_ends; the
 * agent is woken only when the buffer is half full (it reads it at every drain anyway), so a
 * span costs no wake-up. */
static __always_inline void end_span(struct span_task *st, const struct span_ctx *span, __u64 now)
{
	struct spanprof_span_end *rec;
	__u64 id = bpf_get_current_pid_tgid();
	__u64 flags;

	if (st->on_cpu_ns && now > st->on_cpu_ns)
		st->cpu_ns += now - st->on_cpu_ns;
	st->active = 0;
	if (!cfg_span_records)
		return;
	/* The ring is every process's: one user's flood of short spans gets its share only. */
	if (!budget_take(BUDGET_ENDS, SPANPROF_DROP_SPAN_END_BUDGET))
		return;
	rec = bpf_ringbuf_reserve(&span_ends, sizeof(*rec), 0);
	if (!rec) {
		counter_inc(&drop_counts, SPANPROF_DROP_SPAN_END_FULL);
		return;
	}
	__builtin_memcpy(rec->trace_id, span->trace_id, sizeof(rec->trace_id));
	__builtin_memcpy(rec->span_id, span->span_id, sizeof(rec->span_id));
	rec->name_id = span->name_id;
	rec->cpu_ns = st->cpu_ns;
	rec->off_cpu_ns = st->off_cpu_ns;
	rec->wall_ns = now - st->start_ns;
	rec->end_ns = now;
	rec->pid = id >> 32;
	rec->tid = (__u32)id;
	flags = bpf_ringbuf_query(&span_ends, BPF_RB_AVAIL_DATA) >= SPANPROF_SPAN_ENDS_BYTES / 2 ?
			BPF_RB_FORCE_WAKEUP :
			BPF_RB_NO_WAKEUP;
	bpf_ringbuf_submit(rec, flags);
}

/* A new span segment starts on the running thread. */
static __always_inline void start_span(struct task_struct *task, __u64 now)
{
	__u32 pid = task->tgid;
	struct span_task *st;

	if (cfg_filter_pids && !bpf_map_lookup_elem(&target_pids, &pid))
		return;
	st = bpf_task_storage_get(&span_tasks, task, NULL, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!st) {
		counter_inc(&drop_counts, SPANPROF_DROP_OFF_CPU_STORAGE);
		return;
	}
	st->start_ns = now;
	st->on_cpu_ns = now;
	st->off_since_ns = 0;
	st->cpu_ns = 0;
	st->off_cpu_ns = 0;
	st->pending_ns = 0;
	st->active = 1;
}

static __always_inline int same_span(const struct span_ctx *a, const struct span_ctx *b)
{
	const __u64 *x = (const __u64 *)a->trace_id, *y = (const __u64 *)b->trace_id;

	/* trace_id and span_id: 24 bytes, 8-aligned after abi_version and _pad. */
	return x[0] == y[0] && x[1] == y[1] && x[2] == y[2];
}

/* After the thread's span became ts's current slot: a span segment ends when the id changed
 * (the slot before holds the old span); the same id set again (a rename, an integration
 * re-setting its root) goes on. */
static __always_inline void span_changed(struct task_struct *task, struct thread_span *ts,
					 __u64 now)
{
	const struct span_ctx *now_span = &ts->slot[ts->current & 1];
	const struct span_ctx *old = &ts->slot[(ts->current ^ 1) & 1];
	struct span_task *st = bpf_task_storage_get(&span_tasks, task, NULL, 0);

	if (st && st->active) {
		if (same_span(old, now_span))
			return;
		end_span(st, old, now);
	}
	start_span(task, now);
}

/* The thread left its span (the hook was called with NULL). */
static __always_inline void span_cleared(struct task_struct *task, struct thread_span *ts,
					 __u64 now)
{
	struct span_task *st = bpf_task_storage_get(&span_tasks, task, NULL, 0);

	if (st && st->active)
		end_span(st, &ts->slot[ts->current & 1], now);
}

/* BPF_KPROBE reads the argument registers; libbpf 1.1 has no BPF_UPROBE spelling yet. */
SEC("uprobe")
int BPF_KPROBE(on_span_set, const void *user_span)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct thread_span *ts;
	__u64 now;
	__u32 was_active;

	if (!user_span) {
		/* Clearing needs no storage: a thread that never set a span has none. */
		ts = bpf_task_storage_get(&thread_spans, task, NULL, 0);
		if (ts && cfg_span_tasks)
			span_cleared(task, ts, bpf_ktime_get_ns());
		if (ts)
			ts->active = 0;
		counter_inc(&event_counts, SPANPROF_EVENT_SPAN_CLEAR);
		return 0;
	}
	ts = bpf_task_storage_get(&thread_spans, task, NULL, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!ts) {
		counter_inc(&drop_counts, SPANPROF_DROP_SPAN_STORAGE);
		return 0;
	}
	was_active = ts->active;
	if (write_span(ts, user_span) || !cfg_span_tasks)
		return 0;
	/* Read after the copy and the name's interning: a uprobe can be preempted, and the later
	 * the clock is read, the less of a preemption can fall between it and the stores. */
	now = bpf_ktime_get_ns();
	if (was_active)
		span_changed(task, ts, now);
	else
		start_span(task, now);
	return 0;
}

/* The Go hook (hooks/go) puts the span pointer in the first argument register too, but the span
 * belongs to the running goroutine, not to the thread. The attach cookie holds the executable's
 * g offset from FS base and goid offset in runtime.g (SPANPROF_GO_COOKIE, set per file by the
 * agent). An entry left by a dead goroutine on the same g is taken over, never continued. */
SEC("uprobe")
int BPF_KPROBE(on_go_span_set, const void *user_span)
{
	static const struct goroutine_span empty;
	struct task_struct *task = bpf_get_current_task_btf();
	struct goroutine_key key = { .pid = bpf_get_current_pid_tgid() >> 32 };
	__u64 cookie = bpf_get_attach_cookie(ctx), goid, mm;
	struct goroutine_span *gs;
	int err;

	if (current_goroutine(task, (__s32)(__u32)cookie, &key.g) ||
	    goroutine_owner(task, key.g, (__u32)(cookie >> 32), &goid, &mm)) {
		counter_inc(&drop_counts, SPANPROF_DROP_GOROUTINE_READ);
		return 0;
	}
	gs = bpf_map_lookup_elem(&goroutine_spans, &key);
	if (!user_span) {
		if (gs && gs->goid == goid && gs->mm == mm)
			gs->span.active = 0;
		counter_inc(&event_counts, SPANPROF_EVENT_SPAN_CLEAR);
		return 0;
	}
	if (!gs)
		gs = map_lookup_or_init(&goroutine_spans, &key, &empty, &err);
	if (!gs) {
		counter_inc(&drop_counts, SPANPROF_DROP_GOROUTINE_FULL);
		return 0;
	}
	if (gs->goid != goid || gs->mm != mm) {
		/* A dead goroutine's entry (or a new one): this goroutine starts with no span. Only
		 * this goroutine reads the entry from now on (samples check the owner), so the
		 * order of these stores does not matter to them. */
		gs->span.active = 0;
		gs->goid = goid;
		gs->mm = mm;
	}
	/* Goroutines move between threads: they get no span times (the switch program follows
	 * threads). */
	write_span(&gs->span, user_span);
	return 0;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
