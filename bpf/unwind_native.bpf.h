/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Native user-stack unwinder for the perf_event sampler and the off-CPU capture (off_cpu.bpf.c,
 * from the registers a waiting thread entered the kernel with): walks a thread's stack
 * with the CFI tables the agent builds from each file's .eh_frame (user/unwind/), frame by frame
 * in a bpf_loop callback, falling back to frame pointers in files without CFI and in anonymous
 * executable memory (JIT code).
 *
 * Verifier-driven choices:
 * - bpf_loop rather than an unrolled loop or tail calls: the callback is verified once, whatever
 *   the depth (127 frames), and needs no program array.
 * - Every binary search runs a constant number of branch-free steps over a power-of-two array
 *   padded with "never" entries: mappings (256 per process, 8 steps), a table's chunk index (128
 *   chunks, 7 steps), the rows of one chunk (4096, 12 steps). A search with branches made the
 *   verifier walk every path separately (over its 1M-instruction limit); indexes are masked with
 *   the array size so each access is provably in bounds.
 * - Rows live in fixed 32 KiB chunks of one map (unwind_chunks): a table is a list of chunk
 *   numbers, so tables of any size up to 128 chunks share one map without fragmentation. The map
 *   is a hash without preallocation, so the kernel holds memory for the chunks in use only: the
 *   table budget (--unwind-table-bytes) is a bound, not an up-front cost. A chunk or table missing
 *   from its map (never written, or dropped) is a failed lookup, handled like a stale table.
 * - Unwinder state and the frame array (1 KiB) are per-CPU scratch: the BPF stack is 512 bytes.
 * - Rules are interned in unwind_rules (8-byte rows instead of 16): fewer than 1000 distinct
 *   rules cover libc, python3.11 and libruby together. */
#ifndef SPANPROF_UNWIND_NATIVE_BPF_H
#define SPANPROF_UNWIND_NATIVE_BPF_H

#include "maps.bpf.h"

/* The CFI tables, written by the agent and defined in unwind_tables.bpf.c; every program that
 * unwinds reads them. Each such program brings its own scratch (UNWIND_SCRATCH_MAP) and stack
 * maps (STACKS_MAP): a program the sampler can interrupt must not share the sampler's
 * per-CPU scratch. */
extern UNWIND_CHUNKS_MAP;
extern UNWIND_RULES_MAP;
extern UNWIND_TABLES_MAP;
extern UNWIND_PROCS_MAP;

struct native_unwind {
	__u64 pc, sp, bp;
	__u64 hash;
	__u32 pid;
	__u32 pc_is_ra; /* pc is a return address: look up pc - 1 (the call) */
	__u32 fallback; /* give up on CFI for this sample: use frame pointers (bpf_get_stack) */
	/* Added to a SPANPROF_DROP_UNWIND_* reason where a walk stops: 0 for CPU samples, the
	 * distance to the SPANPROF_DROP_OFF_CPU_UNWIND_* reasons for off-CPU stacks. */
	__u32 drop_shift;
	struct spanprof_user_stack stack;
};

/* The walk state of one program, per CPU: each program that unwinds has its own. */
#define UNWIND_SCRATCH_MAP(name)                         \
	struct {                                         \
		__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY); \
		__uint(max_entries, 1);                  \
		__type(key, __u32);                      \
		__type(value, struct native_unwind);     \
	} name SEC(".maps")

extern DROP_COUNTS_MAP;
extern EVENT_COUNTS_MAP;

#if defined(__TARGET_ARCH_x86)

/* Offsets in the signal frame the kernel pushes (struct rt_sigframe, after the handler's return
 * popped pretcode): uc_mcontext is at +40, and in it rbp, rsp and rip are words 10, 15, 16. */
#define SIGFRAME_MCONTEXT 40
#define MCONTEXT_RBP (10 * 8)
#define MCONTEXT_RSP (15 * 8)
#define MCONTEXT_RIP (16 * 8)

/* 1 when x <= pc, without a branch: both are below 2^63 (user addresses, or file addresses
 * and the 2^62 padding of unused entries), so pc - x borrows exactly when x > pc. Branch-free
 * searches keep the verifier from exploring each path of a binary search separately. */
static __always_inline __u64 not_above(__u64 x, __u64 pc)
{
	return ((pc - x) >> 63) ^ 1;
}

static __always_inline const struct spanprof_unwind_mapping *
find_mapping(const struct spanprof_unwind_proc *proc, __u64 pc)
{
	const struct spanprof_unwind_mapping *m;
	__u32 base = 0, half = SPANPROF_UNWIND_MAX_MAPPINGS / 2;
	int k;

	/* Unused entries start at SPANPROF_UNWIND_ADDR_END: the search never stops in them. */
	for (k = 0; k < SPANPROF_UNWIND_MAPS_SHIFT; k++, half >>= 1) {
		m = &proc->maps[(base + half) & (SPANPROF_UNWIND_MAX_MAPPINGS - 1)];
		base += not_above(m->start, pc) * half;
	}
	m = &proc->maps[base & (SPANPROF_UNWIND_MAX_MAPPINGS - 1)];
	return m->start <= pc && pc < m->end ? m : NULL;
}

/* The rule of the row covering file address pc in table t, or NULL. Unused chunk index entries
 * and chunk rows have pc SPANPROF_UNWIND_PC_END, so both searches run over the full size. */
static __always_inline const struct spanprof_unwind_rule *
find_rule(const struct spanprof_unwind_table *t, __u32 pc)
{
	const struct spanprof_unwind_chunk *chunk;
	__u32 base = 0, half = SPANPROF_UNWIND_TABLE_CHUNKS / 2, id, rule;
	int k;

	if (t->index[0].first_pc > pc)
		return NULL;
	for (k = 0; k < SPANPROF_UNWIND_TABLE_SHIFT; k++, half >>= 1)
		base += not_above(t->index[(base + half) & (SPANPROF_UNWIND_TABLE_CHUNKS - 1)]
					  .first_pc,
				  pc) *
			half;
	id = t->index[base & (SPANPROF_UNWIND_TABLE_CHUNKS - 1)].chunk;
	chunk = bpf_map_lookup_elem(&unwind_chunks, &id);
	if (!chunk)
		return NULL;
	base = 0;
	half = SPANPROF_UNWIND_CHUNK_ROWS / 2;
	for (k = 0; k < SPANPROF_UNWIND_CHUNK_SHIFT; k++, half >>= 1)
		base += not_above(chunk->rows[(base + half) & (SPANPROF_UNWIND_CHUNK_ROWS - 1)].pc,
				  pc) *
			half;
	rule = chunk->rows[base & (SPANPROF_UNWIND_CHUNK_ROWS - 1)].rule;
	return bpf_map_lookup_elem(&unwind_rules, &rule);
}

/* Appends the caller's pc; returns 1 (stop) at the end of the stack or when full. */
static __always_inline long push_frame(struct native_unwind *st, __u64 pc)
{
	__u32 n = st->stack.nframes;

	if (!pc)
		return 1; /* a zero return address ends the chain */
	if (n >= SPANPROF_MAX_STACK_DEPTH) {
		counter_inc(&drop_counts, SPANPROF_DROP_UNWIND_DEPTH + st->drop_shift);
		return 1;
	}
	st->stack.ips[n] = pc;
	st->stack.nframes = n + 1;
	st->hash = (st->hash ^ pc) * 0x9e3779b97f4a7c15ull;
	st->hash ^= st->hash >> 29;
	st->pc = pc;
	return 0;
}

static __always_inline long stop_bad_read(const struct native_unwind *st)
{
	counter_inc(&drop_counts, SPANPROF_DROP_UNWIND_BAD_READ + st->drop_shift);
	return 1;
}

/* Frame-pointer step, for files without CFI and anonymous (JIT) code: [rbp] is the caller's
 * rbp, [rbp+8] the RA. Code that does not keep frame pointers leaves anything in rbp, so the
 * step is checked: rbp aligned, above sp and readable, and the RA inside a published mapping;
 * else the walk stops there, counted, without a made-up frame. */
static __always_inline long fp_step(struct native_unwind *st,
				    const struct spanprof_unwind_proc *proc)
{
	__u64 frame[2];

	if (!st->bp)
		return 1; /* the outermost frame of a frame-pointer chain (Go's, for one) */
	counter_inc(&event_counts, SPANPROF_EVENT_UNWIND_FP_FRAMES);
	if (st->bp & 7 || st->bp < st->sp ||
	    bpf_probe_read_user(frame, sizeof(frame), (void *)st->bp))
		return stop_bad_read(st);
	if (frame[1] && !find_mapping(proc, frame[1] - 1)) {
		counter_inc(&drop_counts, SPANPROF_DROP_UNWIND_NO_MAPPING + st->drop_shift);
		return 1;
	}
	st->sp = st->bp + 16;
	st->bp = frame[0];
	st->pc_is_ra = 1;
	return push_frame(st, frame[1]);
}

/* Code without CFI that is about to return: when the instructions at pc are one of these plain
 * epilogues, they say exactly where the return address is, whatever rbp holds (CPython's perf
 * trampolines, `sub $8,%rsp; call *%rcx; add $8,%rsp; ret`, keep no frame pointer):
 *   c3                   ret
 *   5d c3                pop %rbp; ret
 *   48 83 c4 NN c3       add $NN,%rsp; ret
 *   48 83 c4 NN 5d c3    add $NN,%rsp; pop %rbp; ret
 * Returns 0 or 1 as the other steps when it stepped, -1 when pc holds no such epilogue. */
static __always_inline long epilogue_step(struct native_unwind *st,
					  const struct spanprof_unwind_proc *proc)
{
	__u64 sp = st->sp, bp = st->bp, ra;
	__u8 code[6] = {}, op, next;

	if (bpf_probe_read_user(code, 2, (void *)st->pc))
		return -1;
	op = code[0];
	next = code[1];
	if (op == 0x48 && next == 0x83) {
		if (bpf_probe_read_user(code, sizeof(code), (void *)st->pc) || code[2] != 0xc4 ||
		    code[3] >= 0x80 || code[3] & 7)
			return -1;
		sp += code[3];
		op = code[4];
		next = code[5];
	}
	if (op == 0x5d && next == 0xc3) {
		if (bpf_probe_read_user(&bp, sizeof(bp), (void *)sp))
			return stop_bad_read(st);
		sp += 8;
	} else if (op != 0xc3) {
		return -1;
	}
	counter_inc(&event_counts, SPANPROF_EVENT_UNWIND_FP_FRAMES);
	if (bpf_probe_read_user(&ra, sizeof(ra), (void *)sp))
		return stop_bad_read(st);
	if (ra && !find_mapping(proc, ra - 1)) {
		counter_inc(&drop_counts, SPANPROF_DROP_UNWIND_NO_MAPPING + st->drop_shift);
		return 1;
	}
	st->sp = sp + 8;
	st->bp = bp;
	st->pc_is_ra = 1;
	return push_frame(st, ra);
}

/* A mapping without CFI: a plain epilogue at pc, else frame pointers. */
static __always_inline long nocfi_step(struct native_unwind *st,
				       const struct spanprof_unwind_proc *proc)
{
	long ret = epilogue_step(st, proc);

	return ret >= 0 ? ret : fp_step(st, proc);
}

/* Signal trampoline: the interrupted registers are in the ucontext the kernel pushed. */
static __always_inline long signal_step(struct native_unwind *st)
{
	__u64 mc = st->sp + SIGFRAME_MCONTEXT, pc, sp, bp;

	if (bpf_probe_read_user(&bp, 8, (void *)(mc + MCONTEXT_RBP)) ||
	    bpf_probe_read_user(&sp, 8, (void *)(mc + MCONTEXT_RSP)) ||
	    bpf_probe_read_user(&pc, 8, (void *)(mc + MCONTEXT_RIP)))
		return stop_bad_read(st);
	st->sp = sp;
	st->bp = bp;
	st->pc_is_ra = 0; /* the interrupted PC itself, not a return address */
	return push_frame(st, pc);
}

static __always_inline long apply_rule(struct native_unwind *st,
				       const struct spanprof_unwind_proc *proc,
				       const struct spanprof_unwind_rule *r)
{
	__u64 cfa, ra, bp = st->bp;

	switch (r->cfa_kind) {
	case SPANPROF_CFA_RSP:
		cfa = st->sp + r->cfa_off;
		break;
	case SPANPROF_CFA_RBP:
		cfa = st->bp + r->cfa_off;
		break;
	case SPANPROF_CFA_PLT1:
	case SPANPROF_CFA_PLT2:
		cfa = st->sp + r->cfa_off;
		if ((st->pc & 15) >= (r->cfa_kind == SPANPROF_CFA_PLT1 ? 11 : 10))
			cfa += 8;
		break;
	case SPANPROF_CFA_SIGNAL:
		return signal_step(st);
	case SPANPROF_CFA_STOP:
		return 1; /* the outermost frame: a whole stack */
	case SPANPROF_CFA_FP:
		return fp_step(st, proc);
	default:
		counter_inc(&drop_counts, SPANPROF_DROP_UNWIND_NO_ROW + st->drop_shift);
		return 1;
	}
	if (cfa <= st->sp || bpf_probe_read_user(&ra, sizeof(ra), (void *)(cfa - 8)))
		return stop_bad_read(st);
	if (r->rbp_kind == SPANPROF_RBP_AT_CFA) {
		if (bpf_probe_read_user(&bp, sizeof(bp), (void *)(cfa + r->rbp_off)))
			return stop_bad_read(st);
	} else if (r->rbp_kind == SPANPROF_RBP_LOST) {
		bp = 0;
	}
	st->sp = cfa;
	st->bp = bp;
	st->pc_is_ra = 1;
	return push_frame(st, ra);
}

/* One frame: find the mapping and row of st->pc, unwind to the caller. Returns 1 to stop. */
static __always_inline long unwind_frame(struct native_unwind *st)
{
	const struct spanprof_unwind_mapping *m;
	const struct spanprof_unwind_proc *proc;
	const struct spanprof_unwind_table *t;
	const struct spanprof_unwind_rule *r;
	__u64 pc = st->pc - st->pc_is_ra;
	__u32 table;

	proc = bpf_map_lookup_elem(&unwind_procs, &st->pid);
	if (!proc) {
		st->fallback = 1; /* forgotten meanwhile */
		return 1;
	}
	m = find_mapping(proc, pc);
	if (!m) {
		counter_inc(&drop_counts, SPANPROF_DROP_UNWIND_NO_MAPPING + st->drop_shift);
		return 1;
	}
	table = m->table;
	if (table == SPANPROF_UNWIND_TABLE_PENDING) {
		st->fallback = 1;
		return 1;
	}
	if (table == SPANPROF_UNWIND_TABLE_FP)
		return nocfi_step(st, proc); /* JIT code, Go, a stripped file */
	t = bpf_map_lookup_elem(&unwind_tables, &table);
	if (!t || t->gen != m->gen) {
		counter_inc(&drop_counts, SPANPROF_DROP_UNWIND_STALE + st->drop_shift);
		st->fallback = 1;
		return 1;
	}
	r = find_rule(t, (__u32)(pc - m->bias));
	if (!r) {
		counter_inc(&drop_counts, SPANPROF_DROP_UNWIND_NO_ROW + st->drop_shift);
		return 1;
	}
	return apply_rule(st, proc, r);
}

/* Starts a walk at pc, sp, bp (the thread's user registers) for process pid. */
static __always_inline void unwind_begin(struct native_unwind *st, __u32 pid, __u64 pc, __u64 sp,
					 __u64 bp, __u32 drop_shift)
{
	st->pid = pid;
	st->pc = pc;
	st->sp = sp;
	st->bp = bp;
	st->pc_is_ra = 0;
	st->fallback = 0;
	st->drop_shift = drop_shift;
	st->hash = 0xcbf29ce484222325ull;
	st->stack.nframes = 0;
}

/* Walks the stack unwind_begin() set up, one frame per call of step (a bpf_loop callback that
 * finds st in its program's own scratch and calls unwind_frame), and stores it in stacks (a
 * STACKS_MAP) under *hash. Returns 1 when it did, 0 when the caller should take a
 * frame-pointer stack instead (a table being built or evicted, no pc). A stack that could not be
 * stored still returns 1: its loss is counted at drop_reason. */
static __always_inline int unwind_walk(struct native_unwind *st, long (*step)(__u32, void *),
				       void *stacks, __u64 *hash, __u32 drop_reason)
{
	long err;

	if (!st->pc)
		return 0;
	push_frame(st, st->pc);
	bpf_loop(SPANPROF_MAX_STACK_DEPTH, step, NULL, 0);
	if (st->fallback)
		return 0;
	*hash = st->hash ?: 1;
	err = bpf_map_update_elem(stacks, hash, &st->stack, BPF_NOEXIST);
	if (err && err != -EEXIST)
		counter_inc(&drop_counts, drop_reason);
	return 1;
}

#endif /* __TARGET_ARCH_x86 */

#endif /* SPANPROF_UNWIND_NATIVE_BPF_H */
