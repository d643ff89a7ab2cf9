/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Spans published by other tracers, read while the thread is interrupted (a sample) or leaving
 * the CPU (sched_switch), as the publishers require:
 *  - an OpenTelemetry thread context record, found through the process's TLS slot
 *    otel_thread_ctx_v1 (where it is: struct tctx_proc, written by the agent);
 *  - else OBI's map of the thread's trace and span ids.
 * The caller reads these only when spanprof's own hook has no span on the thread. */
#ifndef SPANPROF_THREAD_CTX_BPF_H
#define SPANPROF_THREAD_CTX_BPF_H

#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>

#include "helpers.bpf.h"
#include "maps.bpf.h"
#include "span_names.bpf.h"
#include "thread_ctx_maps.bpf.h"
#include "user_budget.bpf.h"

/* The includer declares span_names, drop_counts and event_counts (extern) before including. */
extern USER_BUDGETS_MAP;
extern TCTX_PROCS_MAP;
extern TCTX_SCRATCH_MAP;
/* thread_ctx.bpf.c: OBI's ids of thread pid_tgid into *out. Returns 1 when OBI's map is known
 * and holds the thread, else 0. */
extern int obi_ids(__u64 pid_tgid, struct obi_trace_ctx *out);

/* Offsets in a record (packed, 2-byte aligned). */
#define TCTX_OFF_SPAN_ID 16
#define TCTX_OFF_VALID 24
#define TCTX_OFF_ATTRS_SIZE 26
/* Value pieces the label string is made of: the span name, then the label attributes. */
#define TCTX_PIECES (1 + SPANPROF_TCTX_MAX_LABELS)

/* State of the walk over a record's attributes (bpf_loop callback context). */
struct tctx_walk {
	__u32 scratch; /* index in tctx_scratch */
	__u32 pos, n; /* next entry, bytes of attributes read */
	__u16 nkeys, root_key, name_key;
	__u16 label_keys[SPANPROF_TCTX_MAX_LABELS];
	__u16 unknown, cut;
	__u32 root_pos, root_len;
	__u32 piece_pos[TCTX_PIECES], piece_len[TCTX_PIECES];
};

static __always_inline int labels_zero8(const __u8 id[8])
{
	__u64 v;

	__builtin_memcpy(&v, id, sizeof(v));
	return !v;
}

static __always_inline void tctx_take(struct tctx_walk *w, __u32 i, __u32 val, __u32 len)
{
	if (i < TCTX_PIECES) {
		w->piece_pos[i] = val;
		w->piece_len[i] = len;
	}
}

/* One attribute entry {u8 key index; u8 len; u8 value[len]}. Returns 1 to stop the walk. */
static long tctx_attr_step(__u64 index, void *ctx)
{
	struct tctx_walk *w = ctx;
	struct tctx_scratch *s = bpf_map_lookup_elem(&tctx_scratch, &w->scratch);
	__u32 pos = w->pos, key, len, val, i;

	if (!s || pos + 2 > w->n) {
		w->cut |= pos != w->n;
		return 1;
	}
	key = s->attrs[pos & TCTX_ATTRS_MASK];
	len = s->attrs[(pos + 1) & TCTX_ATTRS_MASK];
	val = pos + 2;
	if (val + len > w->n) {
		w->cut = 1; /* the last entry runs past the attributes: left out */
		return 1;
	}
	w->pos = val + len;
	if (key >= w->nkeys) {
		w->unknown = 1; /* the agent has not read this key yet: it will */
		return 0;
	}
	if (key == w->root_key) {
		w->root_pos = val;
		w->root_len = len;
	}
	if (key == w->name_key)
		tctx_take(w, 0, val, len);
	for (i = 0; i < SPANPROF_TCTX_MAX_LABELS; i++)
		if (key == w->label_keys[i])
			tctx_take(w, i + 1, val, len);
	return 0;
}

static __always_inline int tctx_hex(__u8 c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

/* The local root span id: 16 lower-case hex characters (as Datadog's writers put it), else
 * left zero, and the sample is labelled with the record's span. */
static __always_inline void tctx_root_id(const struct tctx_scratch *s, const struct tctx_walk *w,
					 __u8 root[8])
{
	__u8 id[8];
	int i, hi, lo;

	if (w->root_len != 16)
		return;
	for (i = 0; i < 8; i++) {
		hi = tctx_hex(s->attrs[(w->root_pos + 2 * i) & TCTX_ATTRS_MASK]);
		lo = tctx_hex(s->attrs[(w->root_pos + 2 * i + 1) & TCTX_ATTRS_MASK]);
		if (hi < 0 || lo < 0)
			return;
		id[i] = (__u8)(hi << 4 | lo);
	}
	__builtin_memcpy(root, id, 8);
}

/* Joins the span name and the label values with SPANPROF_TCTX_SEP into s->out, interns it in
 * span_names, a new one charged to the budget of `budget` (user_budget_key), and returns its id
 * (0: no piece was present, or it could not be stored). */
static __always_inline __u64 tctx_label_id(struct tctx_scratch *s, const struct tctx_walk *w,
					   __u64 budget)
{
	__u32 off = 0, len, i, any = 0;
	__u64 id;

	for (i = 0; i < TCTX_PIECES; i++) {
		any |= w->piece_len[i];
		if (i) {
			if (off >= TCTX_OUT_MASK)
				break;
			s->out[off & TCTX_OUT_MASK] = SPANPROF_TCTX_SEP;
			off++;
		}
		len = w->piece_len[i];
		if (len > TCTX_OUT_MASK - off)
			len = TCTX_OUT_MASK - off;
		if (bpf_probe_read_kernel(&s->out[off & TCTX_OUT_MASK], len & TCTX_OUT_MASK,
					  &s->attrs[w->piece_pos[i] & TCTX_ATTRS_MASK]))
			return 0;
		off += len & TCTX_OUT_MASK;
	}
	if (!any)
		return 0;
	s->out[off & TCTX_OUT_MASK] = '\0';
	/* A NUL inside a value ends the string there: the later pieces are then missing, which
	 * the agent reads as absent values. */
	id = name_hash(s->out);
	if (!id || bpf_map_lookup_elem(&span_names, &id))
		return id;
	/* A new name, as a hook's: the user's share of new names this second pays for it. */
	if (!user_budget_take(&user_budgets, &drop_counts, budget, BUDGET_NAMES,
			      SPANPROF_DROP_SPAN_NAME_BUDGET))
		return 0;
	if (bpf_map_update_elem(&span_names, &id, s->out, BPF_ANY)) {
		counter_inc(&drop_counts, SPANPROF_DROP_SPAN_NAME);
		return 0;
	}
	return id;
}

/* The address of the thread's otel_thread_ctx_v1 slot, or 0. */
static __always_inline __u64 tctx_slot(const struct tctx_proc *tp, struct task_struct *task)
{
#if defined(__TARGET_ARCH_x86)
	__u64 fsbase = BPF_CORE_READ(task, thread.fsbase), dtv = 0, block = 0;

	if (!fsbase)
		return 0;
	if (tp->tls == SPANPROF_TCTX_TLS_STATIC)
		return fsbase + tp->tp_offset;
	if (tp->tls != SPANPROF_TCTX_TLS_DTV ||
	    bpf_probe_read_user(&dtv, sizeof(dtv), (void *)(fsbase + tp->dtv_off)) || !dtv ||
	    bpf_probe_read_user(&block, sizeof(block), (void *)(dtv + tp->dtv_entry * tp->modid)))
		return 0;
	/* glibc marks a module's block this thread has not allocated yet with -1: the thread
	 * never touched the variable, so it has no record. */
	if (!block || block == ~0ull)
		return 0;
	return block + tp->offset;
#else
	return 0; /* x86-64 only for now */
#endif
}

/* Reads the thread's record into span. Returns 1 when the record is valid and names a span. */
static __always_inline int tctx_record_span(struct span_ctx *span, struct tctx_proc *tp,
					    struct task_struct *task, __u32 scratch)
{
	struct tctx_walk w = { .scratch = scratch };
	__u8 hdr[SPANPROF_TCTX_HEADER_SIZE];
	struct tctx_scratch *s;
	__u64 slot, rec = 0;
	__u16 size;
	int i;

	slot = tctx_slot(tp, task);
	if (!slot)
		return 0;
	if (bpf_probe_read_user(&rec, sizeof(rec), (void *)slot) ||
	    (rec && bpf_probe_read_user(hdr, sizeof(hdr), (void *)rec))) {
		counter_inc(&drop_counts, SPANPROF_DROP_TCTX_READ);
		return 0;
	}
	/* NULL: no span (or one being built); valid != 1: being changed, or left. */
	if (!rec || hdr[TCTX_OFF_VALID] != 1)
		return 0;
	__builtin_memcpy(span->trace_id, hdr, 16);
	__builtin_memcpy(span->span_id, hdr + TCTX_OFF_SPAN_ID, 8);
	__builtin_memset(span->root_span_id, 0, 8);
	span->abi_version = SPANPROF_SPAN_FROM_TCTX;
	span->name_id = 0;
	if (labels_zero8(span->span_id))
		return 0;
	s = bpf_map_lookup_elem(&tctx_scratch, &scratch);
	if (!s)
		return 1;
	__builtin_memcpy(&size, hdr + TCTX_OFF_ATTRS_SIZE, sizeof(size));
	if (size > SPANPROF_TCTX_ATTRS_MAX) {
		size = SPANPROF_TCTX_ATTRS_MAX;
		counter_inc(&drop_counts, SPANPROF_DROP_TCTX_ATTRS);
	}
	if (size && bpf_probe_read_user(s->attrs, size & TCTX_ATTRS_MASK,
					(void *)(rec + SPANPROF_TCTX_HEADER_SIZE))) {
		counter_inc(&drop_counts, SPANPROF_DROP_TCTX_ATTRS);
		return 1; /* the ids stand; the attributes are left out */
	}
	w.n = size;
	w.nkeys = tp->nkeys;
	w.root_key = tp->root_key;
	w.name_key = tp->name_key;
	for (i = 0; i < SPANPROF_TCTX_MAX_LABELS; i++)
		w.label_keys[i] = tp->label_keys[i];
	bpf_loop(SPANPROF_TCTX_ATTRS_MAX / 2 + 1, tctx_attr_step, &w, 0);
	if (w.cut)
		counter_inc(&drop_counts, SPANPROF_DROP_TCTX_ATTRS);
	if (w.unknown && !tp->rescan)
		tp->rescan = 1;
	tctx_root_id(s, &w, span->root_span_id);
	span->name_id = tctx_label_id(
		s, &w,
		user_budget_key(BPF_CORE_READ(task, cred, uid.val), BPF_CORE_READ(task, tgid)));
	return 1;
}

/* OBI's ids of the thread, if OBI's map is known and holds them. */
static __always_inline int obi_span(struct span_ctx *span, struct task_struct *task)
{
	__u64 tid = (__u64)BPF_CORE_READ(task, tgid) << 32 | (__u32)BPF_CORE_READ(task, pid);
	struct obi_trace_ctx v;

	if (!obi_ids(tid, &v))
		return 0;
	__builtin_memcpy(span->trace_id, v.trace_id, 16);
	__builtin_memcpy(span->span_id, v.span_id, 8);
	__builtin_memset(span->root_span_id, 0, 8);
	span->abi_version = SPANPROF_SPAN_FROM_OBI;
	span->name_id = 0;
	return !labels_zero8(span->span_id);
}

/* The span another tracer publishes for task (of process pid), when spanprof's hook has none:
 * its OpenTelemetry thread context, else OBI's entry. Fills span and returns 1, or returns 0
 * with span zeroed. scratch: TCTX_SCRATCH_SAMPLE or TCTX_SCRATCH_OFF_CPU. */
static __always_inline int thread_ctx_span(struct span_ctx *span, struct task_struct *task,
					   __u32 pid, __u32 scratch)
{
	struct tctx_proc *tp = bpf_map_lookup_elem(&tctx_procs, &pid);

	if (tp && tctx_record_span(span, tp, task, scratch)) {
		counter_inc(&event_counts, SPANPROF_EVENT_TCTX_SPAN);
		return 1;
	}
	if (obi_span(span, task)) {
		counter_inc(&event_counts, SPANPROF_EVENT_OBI_SPAN);
		return 1;
	}
	__builtin_memset(span, 0, sizeof(*span));
	return 0;
}

#endif /* SPANPROF_THREAD_CTX_BPF_H */
