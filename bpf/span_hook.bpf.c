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
#include "user_budget.bpf.h"

THREAD_SPANS_MAP;
GOROUTINE_SPANS_MAP;
SPAN_NAMES_MAP;
GO_PIDS_MAP;
DROP_COUNTS_MAP;
EVENT_COUNTS_MAP;
TARGET_PIDS_MAP;
SPAN_TASKS_MAP;
SPAN_ENDS_MAP;
SPAN_AREAS_MAP;
USER_BUDGETS_MAP;

/* Keep each thread's span segment in span_tasks for the sched_switch program (--off-cpu). */
const volatile bool cfg_span_tasks = false;
/* ... and emit a record when one ends: exact CPU time per span (--span-stats-max above 0). */
const volatile bool cfg_span_records = false;
/* With --pid, only the processes listed in target_pids are profiled: they alone are sampled
 * (sample.bpf.c), raise process events (proc_events.bpf.c) and get span times (here). One knob,
 * defined here beside target_pids and declared extern by the others. */
const volatile bool cfg_filter_pids = false;

/* The time stamp counter's rate, measured by the agent before it attaches and again at each
 * profile window (user/agent/tsc_rate.c): ns per tick << SPANPROF_TSC_MULT_SHIFT. One 64-bit
 * store: a program never sees half of it. */
__u64 tsc_mult = 0;

_Static_assert(__builtin_offsetof(struct span_ctx, name_id) == SPANPROF_ABI_SPAN_NAME_OFFSET,
	       "the ids are the hook struct's first 40 bytes");

/* The calling task's user_budget_take() (user_budget.bpf.h). */
static __always_inline int budget_take(enum budget_kind kind, __u32 drop)
{
	__u64 ids = bpf_get_current_uid_gid(), key;

	key = user_budget_key((__u32)ids, bpf_get_current_pid_tgid() >> 32);
	return user_budget_take(&user_budgets, &drop_counts, key, kind, drop);
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

/* Fills rec with the segment that ends at now: span's ids and name, st's times, thread id's. */
static __always_inline void span_end_fill(struct spanprof_span_end *rec, const struct span_task *st,
					  const struct span_ctx *span, __u64 now, __u64 id)
{
	__builtin_memcpy(rec->trace_id, span->trace_id, sizeof(rec->trace_id));
	__builtin_memcpy(rec->span_id, span->span_id, sizeof(rec->span_id));
	rec->name_id = span->name_id;
	rec->cpu_ns = st->cpu_ns;
	rec->off_cpu_ns = st->off_cpu_ns;
	rec->wall_ns = now - st->start_ns;
	rec->end_ns = now;
	rec->pid = id >> 32;
	rec->tid = (__u32)id;
}

/* The wake-up flag for what is sent to span_ends now: the agent is woken only when the buffer
 * is half full (it reads it at every drain anyway), so a span costs no wake-up. */
static __always_inline __u64 span_ends_wakeup(void)
{
	return bpf_ringbuf_query(&span_ends, BPF_RB_AVAIL_DATA) >= SPANPROF_SPAN_ENDS_BYTES / 2 ?
		       BPF_RB_FORCE_WAKEUP :
		       BPF_RB_NO_WAKEUP;
}

/* st's segment ends at now: its CPU time since the thread came on the CPU is added. */
static __always_inline void segment_close(struct span_task *st, __u64 now)
{
	if (st->on_cpu_ns && now > st->on_cpu_ns)
		st->cpu_ns += now - st->on_cpu_ns;
	st->active = 0;
}

/* The span segment that ends now: span's ids and name, st's times. One record to span_ends.
 * Returns 1 when the user's share of records this second is spent (the record was refused and
 * counted), else 0. */
static __always_inline int end_span(struct span_task *st, const struct span_ctx *span, __u64 now)
{
	struct spanprof_span_end *rec;

	segment_close(st, now);
	if (!cfg_span_records)
		return 0;
	/* The ring is every process's: one user's flood of short spans gets its share only. */
	if (!budget_take(BUDGET_ENDS, SPANPROF_DROP_SPAN_END_BUDGET))
		return 1;
	rec = bpf_ringbuf_reserve(&span_ends, sizeof(*rec), 0);
	if (!rec) {
		counter_inc(&drop_counts, SPANPROF_DROP_SPAN_END_FULL);
		return 0;
	}
	span_end_fill(rec, st, span, now, bpf_get_current_pid_tgid());
	bpf_ringbuf_submit(rec, span_ends_wakeup());
	return 0;
}

/* st's segment starts at now, on the CPU, with nothing counted yet. */
static __always_inline void segment_begin(struct span_task *st, __u64 now)
{
	st->start_ns = now;
	st->on_cpu_ns = now;
	st->off_since_ns = 0;
	st->cpu_ns = 0;
	st->off_cpu_ns = 0;
	st->pending_ns = 0;
	st->active = 1;
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
	segment_begin(st, now);
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

/* ---- Hook ABI version 3: span changes read from the thread's ring ---- */

/* A ring read works in this CPU's stage: the changes it reads are copied in one piece (two when
 * the ring wraps), not one bpf_probe_read_user() a change, and its records go to span_ends in
 * pieces of up to SPAN_END_BATCH, one reservation a piece, not one a record. The agent reads a
 * piece as that many struct spanprof_span_end. Per CPU, so only a read that no other read on
 * the CPU can come between uses it: sched_switch and sched_process_exit run with preemption
 * off; the uprobe, which may be preempted, turns preemption off around its reads with the
 * kfuncs below (Linux 6.10+). On older kernels the agent loads on_span_set_compat instead,
 * whose reads take each change and reserve each record on their own. 8.7 KiB a CPU. */
#define SPAN_END_BATCH 16

/* Weak: an object that names them still loads where the kernel lacks them (the agent then
 * loads only the program that does not call them, see on_span_set_compat). */
extern void bpf_preempt_disable(void) __ksym __weak;
extern void bpf_preempt_enable(void) __ksym __weak;

/* How a ring read reaches the stage. */
enum ring_stage_use {
	STAGE_NONE, /* not at all: each change read and each record reserved alone */
	STAGE_HELD, /* the caller cannot be preempted (sched_switch, sched_process_exit) */
	STAGE_CLAIM, /* the read turns preemption off around its use of the stage (uprobe) */
};

struct span_ring_stage {
	struct spanprof_ring_entry ring[SPANPROF_RING_ENTRIES];
	struct spanprof_span_end rec[SPAN_END_BATCH];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct span_ring_stage);
} span_ring_stages SEC(".maps");

/* State of one read of a ring (bpf_loop callback context). What every change needs is looked up
 * once per read: the thread's task storage, its user's budget, the stage. */
struct ring_walk {
	struct span_area *sa; /* the thread's registered area */
	struct span_task *st; /* its span segment; NULL until one starts */
	struct user_budget *budget; /* its user's span records this second; NULL: unbounded */
	struct span_ring_stage *stage; /* NULL: each change read, each record reserved, alone */
	__u64 area; /* the thread's struct spanprof_thread_area */
	__u64 pos, end; /* entries [pos, end) are read */
	__u64 now; /* no change is later than this */
	__u64 id; /* the thread's pid_tgid */
	__u32 staged, next; /* stage->ring[next, staged) are entries pos... */
	__u32 nbatch; /* records in stage->rec */
	__u32 sets, clears; /* changes read, into a span and out of any */
	__u32 skip; /* the user's records are spent: only the last entry is read (see ring_step) */
	__u8 budget_read; /* budget was looked up */
	__u8 target_read; /* with --pid: whether the process is a target was looked up */
	__u8 no_start; /* with --pid: the process is not a target, no segment starts */
};

/* ticks * mult >> SPANPROF_TSC_MULT_SHIFT without overflowing 64 bits for any tick count a
 * thread's ring holds (the counter's high half times mult is already in ns). */
static __always_inline __u64 ticks_ns(__u64 ticks, __u64 mult)
{
	return (ticks >> 32) * mult + (((ticks & 0xffffffffULL) * mult) >> SPANPROF_TSC_MULT_SHIFT);
}

_Static_assert(SPANPROF_TSC_MULT_SHIFT == 32, "ticks_ns splits the count at the shift");

/* A ring entry's time in CLOCK_MONOTONIC ns: as queued, or a counter reading converted from the
 * pair the hook passed at its last uprobe entry (at most about a second away). The caller clamps
 * the result into the interval the change must lie in. With no rate measured (the agent sets
 * it before it attaches, so never in practice) every change falls on the pair's time. */
static __always_inline __u64 ring_entry_ns(const struct span_area *sa, __u64 time)
{
	__u64 mult = tsc_mult, ns;

	if (!sa->clock_tsc)
		return time;
	if (time >= sa->clock_tsc)
		return sa->clock_ns + ticks_ns(time - sa->clock_tsc, mult);
	ns = ticks_ns(sa->clock_tsc - time, mult);
	return ns < sa->clock_ns ? sa->clock_ns - ns : 0;
}

static __always_inline int ring_same_span(const struct span_ctx *cur,
					  const struct spanprof_ring_entry *e)
{
	const __u64 *x = (const __u64 *)cur->trace_id, *y = (const __u64 *)e->trace_id;

	return x[0] == y[0] && x[1] == y[1] && x[2] == y[2];
}

/* Sends the records batched so far (one piece). */
static __always_inline void batch_flush(struct ring_walk *w)
{
	__u32 n = w->nbatch;

	w->nbatch = 0;
	if (!w->stage || !n || n > SPAN_END_BATCH)
		return;
	if (bpf_ringbuf_output(&span_ends, w->stage->rec, n * sizeof(struct spanprof_span_end),
			       span_ends_wakeup()))
		counter_add(&drop_counts, SPANPROF_DROP_SPAN_END_FULL, n);
}

/* end_span for a ring read: the budget looked up once per read, the record batched. */
static __always_inline int ring_end(struct ring_walk *w, struct span_task *st,
				    const struct span_ctx *span, __u64 now)
{
	struct spanprof_span_end *rec;
	__u32 i;

	segment_close(st, now);
	if (!cfg_span_records)
		return 0;
	if (!w->budget_read) {
		w->budget = user_budget_get_at(
			&user_budgets,
			user_budget_key((__u32)bpf_get_current_uid_gid(), w->id >> 32), w->now);
		w->budget_read = 1;
	}
	/* The ring is every process's: one user's flood of short spans gets its share only. */
	if (!user_budget_spend(w->budget, &drop_counts, BUDGET_ENDS, SPANPROF_DROP_SPAN_END_BUDGET))
		return 1;
	if (!w->stage) {
		rec = bpf_ringbuf_reserve(&span_ends, sizeof(*rec), 0);
		if (!rec) {
			counter_inc(&drop_counts, SPANPROF_DROP_SPAN_END_FULL);
			return 0;
		}
		span_end_fill(rec, st, span, now, w->id);
		bpf_ringbuf_submit(rec, span_ends_wakeup());
		return 0;
	}
	i = w->nbatch;
	if (i >= SPAN_END_BATCH) {
		batch_flush(w);
		i = 0;
	}
	span_end_fill(&w->stage->rec[i], st, span, now, w->id);
	w->nbatch = i + 1;
	return 0;
}

/* start_span for a ring read: the thread's segment (created at its first), the --pid filter
 * looked up once per read. */
static __always_inline void ring_start(struct ring_walk *w, __u64 now)
{
	struct span_task *st = w->st;
	__u32 pid = w->id >> 32;

	if (cfg_filter_pids && !w->target_read) {
		w->target_read = 1;
		w->no_start = !bpf_map_lookup_elem(&target_pids, &pid);
	}
	if (w->no_start)
		return;
	if (!st) {
		st = bpf_task_storage_get(&span_tasks, bpf_get_current_task_btf(), NULL,
					  BPF_LOCAL_STORAGE_GET_F_CREATE);
		if (!st) {
			counter_inc(&drop_counts, SPANPROF_DROP_OFF_CPU_STORAGE);
			return;
		}
		w->st = st;
	}
	segment_begin(st, now);
}

/* From ns on, the thread is in e's span: the segment it was in ends, the next starts. With skip,
 * the changes before e were not read: the segment open since then is not the one sa and st
 * hold, so it ends with no record (counted as refused) and e's starts afresh. Returns 1 when
 * the ended segment's record was refused for the user's share, else 0. */
static __always_inline int ring_change(struct ring_walk *w, const struct spanprof_ring_entry *e,
				       __u64 ns)
{
	struct span_area *sa = w->sa;
	struct span_task *st = w->st;
	int refused = 0;
	__u64 span_id;

	if (st && st->active) {
		if (w->skip) {
			st->active = 0;
			counter_inc(&drop_counts, SPANPROF_DROP_SPAN_END_BUDGET);
		} else {
			if (ring_same_span(&sa->cur, e)) {
				/* The same span under another root name: its segment goes on,
				 * renamed. */
				sa->cur.name_id = e->name_id;
				return 0;
			}
			if (ns < st->start_ns)
				ns = st->start_ns;
			/* ns is after the thread came on the CPU (the ring is read at every
			 * switch-out), so the segment gets ns - on_cpu_ns, its time on the CPU
			 * since then. */
			refused = ring_end(w, st, &sa->cur, ns);
		}
	}
	__builtin_memcpy(&span_id, e->span_id, sizeof(span_id));
	if (!span_id)
		return refused;
	sa->cur.abi_version = SPANPROF_ABI_VERSION_V3;
	__builtin_memcpy(sa->cur.trace_id, e->trace_id, sizeof(sa->cur.trace_id));
	__builtin_memcpy(sa->cur.span_id, e->span_id, sizeof(sa->cur.span_id));
	__builtin_memset(sa->cur.root_span_id, 0, sizeof(sa->cur.root_span_id));
	sa->cur.name_id = e->name_id;
	ring_start(w, ns);
	return refused;
}

/* The entry at w->pos, into *buf or the stage: NULL when it cannot be read (counted). */
static __always_inline const struct spanprof_ring_entry *ring_entry(struct ring_walk *w,
								    struct spanprof_ring_entry *buf)
{
	__u64 at = w->area + __builtin_offsetof(struct spanprof_thread_area, ring), n, room;
	struct span_ring_stage *stage = w->stage;
	__u32 i;

	if (!stage) {
		at += (w->pos & SPANPROF_RING_MASK) * sizeof(*buf);
		if (bpf_probe_read_user(buf, sizeof(*buf), (const void *)at)) {
			counter_inc(&drop_counts, SPANPROF_DROP_SPAN_RING_LOST);
			return NULL;
		}
		return buf;
	}
	if (w->next >= w->staged) {
		/* The rest of the read, up to the ring's end, in one piece. */
		room = SPANPROF_RING_ENTRIES - (w->pos & SPANPROF_RING_MASK);
		n = w->end - w->pos;
		if (n > room)
			n = room;
		if (n > SPANPROF_RING_ENTRIES || !n)
			return NULL;
		at += (w->pos & SPANPROF_RING_MASK) * sizeof(*buf);
		w->next = 0;
		w->staged = 0;
		if (bpf_probe_read_user(stage->ring, n * sizeof(*buf), (const void *)at)) {
			/* this entry, now; the rest of the piece, as the walk meets them */
			counter_inc(&drop_counts, SPANPROF_DROP_SPAN_RING_LOST);
			return NULL;
		}
		w->staged = n;
	}
	i = w->next++;
	return &stage->ring[i & SPANPROF_RING_MASK];
}

static long ring_step(__u64 index, void *ctx)
{
	struct ring_walk *w = ctx;
	struct span_area *sa = w->sa;
	const struct spanprof_ring_entry *e;
	struct spanprof_ring_entry buf;
	__u64 ns, span_id;

	if (w->pos >= w->end)
		return 1;
	e = ring_entry(w, &buf);
	w->pos++;
	if (!e)
		return 0;
	__builtin_memcpy(&span_id, e->span_id, sizeof(span_id));
	if (span_id)
		w->sets++;
	else
		w->clears++;
	/* A change is never before the thread last came on the CPU (the hook was preempted
	 * between its clock read and its store, so the entry showed up a run late) nor after
	 * now: clamped, the time between goes to the span the thread was in, never a wait. */
	ns = ring_entry_ns(sa, e->time);
	if (ns > w->now)
		ns = w->now;
	if (ns < sa->floor_ns)
		ns = sa->floor_ns;
	if (ring_change(w, e, ns) && w->pos + 1 < w->end) {
		/* The user's records for this second are spent: the segments the changes up to
		 * the last one end would get none. They are not read (a tight loop of span changes
		 * costs a read of its ring, not a walk of it); from the last change on, the
		 * thread's segment is timed again. Counted: at most one record per change. */
		counter_add(&drop_counts, SPANPROF_DROP_SPAN_END_BUDGET, w->end - 1 - w->pos);
		w->pos = w->end - 1;
		w->skip = 1;
		w->staged = 0; /* the last entry is read anew */
	}
	return 0;
}

/* Reads the thread's ring up to entry end (exclusive). A ring that wrapped past what was read
 * lost its oldest changes: counted, and their time goes to the segment the thread was in.
 * use: whether and how the read works in this CPU's stage (a constant at every call). */
static __always_inline void ring_read(struct span_area *sa, __u64 end, __u64 now,
				      enum ring_stage_use use)
{
	struct ring_walk w = {
		.sa = sa, .area = sa->area, .pos = sa->consumed, .end = end, .now = now
	};
	__u32 zero = 0;

	if (end <= w.pos) {
		if (end < w.pos) /* the hook's head went back: a hostile or reset area */
			sa->consumed = end;
		return;
	}
	if (end - w.pos > SPANPROF_RING_ENTRIES) {
		counter_add(&drop_counts, SPANPROF_DROP_SPAN_RING_LOST,
			    end - w.pos - SPANPROF_RING_ENTRIES);
		w.pos = end - SPANPROF_RING_ENTRIES;
	}
	sa->consumed = end;
	w.id = bpf_get_current_pid_tgid();
	w.st = bpf_task_storage_get(&span_tasks, bpf_get_current_task_btf(), NULL, 0);
	if (cfg_span_records && end - w.pos > 1) {
		w.budget = user_budget_get_at(
			&user_budgets,
			user_budget_key((__u32)bpf_get_current_uid_gid(), w.id >> 32), now);
		w.budget_read = 1;
		if (w.budget && w.budget->ends >= SPANPROF_SPAN_ENDS_PER_USER_S) {
			/* Spent before the walk starts: as in ring_step, only the last change is
			 * read. */
			counter_add(&drop_counts, SPANPROF_DROP_SPAN_END_BUDGET, end - 1 - w.pos);
			w.pos = end - 1;
			w.skip = 1;
		}
	}
	if (use == STAGE_CLAIM)
		bpf_preempt_disable();
	if (use != STAGE_NONE)
		w.stage = bpf_map_lookup_elem(&span_ring_stages, &zero);
	bpf_loop(SPANPROF_RING_ENTRIES, ring_step, &w, 0);
	batch_flush(&w);
	if (use == STAGE_CLAIM)
		bpf_preempt_enable();
	/* The hook calls seen are the changes read (a thread past its user's records has only its
	 * last one read). */
	counter_add(&event_counts, SPANPROF_EVENT_SPAN_SET, w.sets);
	counter_add(&event_counts, SPANPROF_EVENT_SPAN_CLEAR, w.clears);
	sa->floor_ns = now;
}

static __always_inline int ring_head(const struct span_area *sa, __u64 *head)
{
	return bpf_probe_read_user(
		head, sizeof(*head),
		(const void *)(sa->area + __builtin_offsetof(struct spanprof_thread_area, head)));
}

/* The sched_switch program, as the current thread leaves the CPU (off_cpu.bpf.c): the span
 * changes its hook queued while it ran end and start its span segments before its time on the
 * CPU is added to the segment it is in. Global, so off_cpu.bpf.c can call it. */
__noinline int span_ring_switch_out(__u64 now)
{
	struct task_struct *task;
	struct span_area *sa;
	__u64 head;

	if (!cfg_span_tasks)
		return 0;
	task = bpf_get_current_task_btf();
	/* An exiting thread that let go of its memory (its last switch-out, after exit_mm()): user
	 * memory cannot be read any more, and nothing is lost that a read could still save. */
	if (!task->mm)
		return 0;
	sa = bpf_task_storage_get(&span_areas, task, NULL, 0);
	if (!sa || !sa->area)
		return 0;
	if (ring_head(sa, &head)) {
		counter_inc(&drop_counts, SPANPROF_DROP_SPAN_RING_LOST);
		return 0;
	}
	ring_read(sa, head, now, STAGE_HELD);
	return 0;
}

/* A thread exits: the changes it queued since its last switch-out still end its span
 * segments. From Linux 6.16 the tracepoint fires before the thread lets go of its memory, so
 * its ring is read here; on older kernels it fires after exit_mm(), the ring can no longer be
 * read, and span_ring_switch_out skips it (those last changes are lost, uncounted). */
SEC("tp_btf/sched_process_exit")
int BPF_PROG(on_thread_exit, struct task_struct *task)
{
	span_ring_switch_out(bpf_ktime_get_ns());
	return 0;
}

/* The hook (ABI version 3) entered the uprobe: to register its area, with a new root name, or
 * to have its ring read. user_span is struct spanprof_span's layout, then the area's address
 * and the ring index of the change this call queued. use: STAGE_CLAIM or STAGE_NONE. */
static __always_inline int on_area(struct task_struct *task, const void *user_span,
				   enum ring_stage_use use)
{
	__u64 tail[5], head = 0, now;
	struct span_area *sa;
	int read_early = 0;
	__u64 name_id;

	/* tail: the area, the ring index of this call's change, the otel_thread_ctx_v1 slot, the
	 * ring's clock pair. */
	if (bpf_probe_read_user(tail, sizeof(tail),
				(const char *)user_span + SPANPROF_ABI_V3_AREA_OFFSET)) {
		counter_inc(&drop_counts, SPANPROF_DROP_SPAN_READ);
		return 0;
	}
	sa = bpf_task_storage_get(&span_areas, task, NULL, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!sa) {
		counter_inc(&drop_counts, SPANPROF_DROP_SPAN_STORAGE);
		return 0;
	}
	/* Samples read the record through the slot (span_area.bpf.h). */
	sa->slot = tail[2];
	if (!cfg_span_tasks) {
		sa->area = tail[0];
		return 0;
	}
	name_id = intern_name(user_span, SPANPROF_ABI_VERSION_V3, sa->name_id);
	/* The hook always sends the thread's root name; an empty one (a hook that sent none) keeps
	 * the name the thread had. */
	if (!name_id)
		name_id = sa->name_id;
	now = bpf_ktime_get_ns();
	if (sa->area != tail[0]) {
		/* A new area (or a new agent): its ring is read from this call's change on. */
		sa->area = tail[0];
		sa->consumed = tail[1];
		sa->floor_ns = 0;
	} else if (sa->consumed == tail[1] + 1) {
		/* This call's change was read already: the thread was switched out between the
		 * hook's queueing and this entry, and the switch-out started the change's segment.
		 * Reading up to tail[1] would take the ring back (as for a reset area). */
		read_early = 1;
	} else {
		/* The changes queued before this call were stamped closer to the pair before this
		 * one. */
		ring_read(sa, tail[1], now, use);
	}
	sa->clock_tsc = tail[3];
	sa->clock_ns = tail[4];
	sa->name_id = name_id;
	if (ring_head(sa, &head)) {
		counter_inc(&drop_counts, SPANPROF_DROP_SPAN_RING_LOST);
		return 0;
	}
	/* This call's change read early started its segment at the switch-out: the time since the
	 * thread came back, spent returning into the hook and in this uprobe entry, is the hook's,
	 * not the span's. A change read here is clamped to the entry's end and that time goes to
	 * the span being left; that span has ended already, so here it goes to none. */
	if (read_early) {
		struct span_task *st = bpf_task_storage_get(&span_tasks, task, NULL, 0);

		if (st && st->active && st->on_cpu_ns && st->on_cpu_ns < now)
			st->on_cpu_ns = now;
	}
	/* This call's change happened after the uprobe's own time (as the v1/v2 path reads its
	 * clock after the copy): that time is the hook's, not the span's. */
	sa->floor_ns = now;
	ring_read(sa, head, now, use);
	return 0;
}

/* The uprobe on spanprof_span_set(). use: how its ring reads reach the stage. */
static __always_inline int span_set(const void *user_span, enum ring_stage_use use)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct thread_span *ts;
	__u32 was_active, version;
	__u64 now;

	if (user_span && !bpf_probe_read_user(&version, sizeof(version), user_span) &&
	    version == SPANPROF_ABI_VERSION_V3) {
		/* Rare by design (registration, a new root name, every 256 changes, for age):
		 * counted, so that a hook entering at every call shows. */
		counter_inc(&event_counts, SPANPROF_EVENT_HOOK_ENTRY);
		return on_area(task, user_span, use);
	}
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

/* BPF_KPROBE reads the argument registers; libbpf 1.1 has no BPF_UPROBE spelling yet. The agent
 * loads one of the two: this one where the kernel has bpf_preempt_disable() (Linux 6.10+), so
 * the reads at uprobe entries (one per 256 changes, most of a busy thread's reads on an idle
 * CPU) are batched through the stage as at a switch-out ... */
SEC("uprobe")
int BPF_KPROBE(on_span_set, const void *user_span)
{
	return span_set(user_span, STAGE_CLAIM);
}

/* ... and this one on older kernels: each change read and each record reserved on its own. */
SEC("uprobe")
int BPF_KPROBE(on_span_set_compat, const void *user_span)
{
	return span_set(user_span, STAGE_NONE);
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
	void *spans;
	int err;

	if (current_goroutine(task, (__s32)(__u32)cookie, &key.g) ||
	    goroutine_owner(task, key.g, (__u32)(cookie >> 32), &goid, &mm)) {
		counter_inc(&drop_counts, SPANPROF_DROP_GOROUTINE_READ);
		return 0;
	}
	spans = goroutine_spans_of();
	if (!spans) {
		counter_inc(&drop_counts, SPANPROF_DROP_GOROUTINE_FULL);
		return 0;
	}
	gs = bpf_map_lookup_elem(spans, &key);
	if (!user_span) {
		if (gs && gs->goid == goid && gs->mm == mm)
			gs->span.active = 0;
		counter_inc(&event_counts, SPANPROF_EVENT_SPAN_CLEAR);
		return 0;
	}
	if (!gs)
		gs = map_lookup_or_init(spans, &key, &empty, &err);
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
