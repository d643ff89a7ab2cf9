// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* CRuby control frames of the interrupted thread (docs/interpreters.md): the execution context
 * through ruby_current_ec (TLS, via the thread's dtv) or a global, then the rb_control_frame_t
 * array from ec->cfp outwards with bpf_loop. The frames go into the window's interp_stacks map
 * (interp RUBY) under a hash that the sampler puts in the sample's key. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>

#include "helpers.bpf.h"
#include "maps.bpf.h"

/* vm_core.h: frame magic (ep[0] & MASK), and the flags the walk needs. */
#define RB_FRAME_MAGIC_MASK 0x7fff0001
#define RB_FRAME_MAGIC_CFUNC 0x55550001
#define RB_FRAME_MAGIC_IFUNC 0x66660001
#define RB_FRAME_MAGIC_DUMMY 0x79990001
#define RB_FRAME_FLAG_FINISH 0x0020
#define RB_FRAME_FLAG_CFRAME 0x0080
/* A C frame's method entry: ep[-2] is an imemo (T_IMEMO 0x1a) of type ment (6, bits 12-15). */
#define RB_T_MASK 0x1f
#define RB_T_IMEMO 0x1a
#define RB_IMEMO_MENT 6
#define RB_ME_CALLED_ID 24
#define RB_ISEQ_BODY 16
/* Positions past this are garbage (an iseq of 16 M instructions does not exist). */
#define RB_MAX_POS (1u << 24)

extern DROP_COUNTS_MAP;

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, SPANPROF_MAX_RB_PROCS);
	__type(key, __u32);
	__type(value, struct rb_proc_info);
} rb_procs SEC(".maps");

/* python_frames.bpf.c: the window's interpreter stacks. */
extern INTERP_STACK_MAP(interp_stacks_0);
extern INTERP_STACK_MAP(interp_stacks_1);
extern OFF_CPU_INTERP_STACK_MAP(off_cpu_interp_stacks_0);
extern OFF_CPU_INTERP_STACK_MAP(off_cpu_interp_stacks_1);

/* The walk's state: an interp_stack is too big for the 512-byte stack. */
struct rb_walk {
	struct interp_stack stack;
	struct rb_proc_info info;
	__u64 cfp; /* next control frame to read */
	__u64 end; /* the outermost (dummy) frame: the walk stops before it */
	__u64 hash;
};

WALK_SCRATCH_MAP(rb_walk_scratch, struct rb_walk);
WALK_SCRATCH_MAP(off_cpu_rb_walk_scratch, struct rb_walk);

struct rb_cfp {
	__u64 pc, sp, iseq, self, ep;
};

struct rb_location {
	__u64 pathobj, base_label, label, first_lineno;
};

/* A C function's frame: its method's called_id when ep[-2] is the method entry, else 0. */
static __always_inline void cfunc_frame(const struct rb_cfp *cf, struct interp_frame *out)
{
	__u64 me = user_read_u64(cf->ep - 16), flags = me ? user_read_u64(me) : 0;

	out->flags = SPANPROF_RB_FRAME_CFUNC;
	out->code = 0;
	if ((flags & RB_T_MASK) == RB_T_IMEMO && ((flags >> 12) & 0xf) == RB_IMEMO_MENT)
		out->code = user_read_u64(me + RB_ME_CALLED_ID);
}

/* An iseq frame: the iseq, what identifies it (body, label, path, first line) and pc's
 * instruction position. Returns 0, or -1 when the iseq cannot be read. */
static __always_inline int iseq_frame(const struct rb_walk *w, const struct rb_cfp *cf,
				      struct interp_frame *out)
{
	__u64 body = user_read_u64(cf->iseq + RB_ISEQ_BODY), encoded, pos;
	struct rb_location loc;

	if (!body || bpf_probe_read_user(&loc, sizeof(loc), (void *)(body + w->info.body_location)))
		return -1;
	encoded = user_read_u64(body + w->info.body_encoded);
	pos = cf->pc >= encoded ? (cf->pc - encoded) / 8 : 0;
	/* pc points past the running instruction (rb_vm_get_sourceline's calc_pos). */
	if (pos)
		pos--;
	out->code = cf->iseq;
	out->flags = 0;
	out->lasti = pos < RB_MAX_POS ? pos : 0;
	out->firstlineno = (__u32)loc.first_lineno;
	out->check = (__u32)(loc.label ^ loc.pathobj ^ body);
	return 0;
}

/* One control frame per call. */
static __always_inline long rb_step_walk(struct rb_walk *w)
{
	struct interp_frame *out;
	struct rb_cfp cf;
	__u64 flags, magic;
	__u32 n;

	if (!w || !w->cfp || w->cfp >= w->end)
		return 1;
	if (bpf_probe_read_user(&cf, sizeof(cf), (void *)w->cfp))
		return 1;
	w->cfp += w->info.cfp_size;
	if (!cf.ep)
		return 0;
	flags = user_read_u64(cf.ep);
	magic = flags & RB_FRAME_MAGIC_MASK;
	if (magic == RB_FRAME_MAGIC_DUMMY || magic == RB_FRAME_MAGIC_IFUNC)
		return 0;
	n = w->stack.nframes;
	if (n >= SPANPROF_INTERP_MAX_FRAMES) {
		w->stack.truncated = 1;
		return 1;
	}
	out = &w->stack.frames[n];
	__builtin_memset(out, 0, sizeof(*out));
	if (magic == RB_FRAME_MAGIC_CFUNC || (flags & RB_FRAME_FLAG_CFRAME))
		cfunc_frame(&cf, out);
	else if (!cf.pc || !cf.iseq || iseq_frame(w, &cf, out))
		return 0;
	if (flags & RB_FRAME_FLAG_FINISH)
		out->flags |= SPANPROF_RB_FRAME_FINISH;
	w->hash = (w->hash ^ out->code ^ ((__u64)out->lasti << 40) ^ ((__u64)out->flags << 60)) *
		  0x100000001b3ull;
	w->stack.nframes = n + 1;
	return 0;
}

WALK_STEP_FN(rb_step, rb_step_walk, rb_walk_scratch)
WALK_STEP_FN(rb_step_off_cpu, rb_step_walk, off_cpu_rb_walk_scratch)

/* The thread's rb_execution_context_t, or 0 (no Ruby thread, or unreadable). */
static __always_inline __u64 current_ec(const struct rb_proc_info *info)
{
	struct task_struct *task;
	__u64 fsbase, dtv, block;

	if (info->ec_mode == SPANPROF_RB_EC_GLOBAL)
		return user_read_u64(info->ec_addr);
	if (info->ec_mode != SPANPROF_RB_EC_TLS)
		return 0;
	task = bpf_get_current_task_btf();
	fsbase = BPF_CORE_READ(task, thread.fsbase);
	if (!fsbase)
		return 0;
	/* glibc: tcb->dtv at fsbase + 8; dtv_t entries are 16 bytes {void *val; void *to_free}. */
	dtv = user_read_u64(fsbase + 8);
	if (!dtv)
		return 0;
	block = user_read_u64(dtv + 16 * info->tls_modid);
	/* TLS_DTV_UNALLOCATED (-1): the module's block was never set up in this thread. */
	if (!block || block == ~0ull)
		return 0;
	return user_read_u64(block + info->tls_offset);
}

/* Sets up the walk from ec: cfp and the end of the VM stack. Returns 0 or -1. */
static __always_inline int walk_bounds(struct rb_walk *w, __u64 ec)
{
	struct {
		__u64 vm_stack, vm_stack_size, cfp;
	} head;

	if (bpf_probe_read_user(&head, sizeof(head), (void *)ec) || !head.cfp || !head.vm_stack)
		return -1;
	w->cfp = head.cfp;
	w->end = head.vm_stack + 8 * head.vm_stack_size - w->info.cfp_size;
	return 0;
}

/* Walks the current thread's control frames with w (its program's scratch) and step (the
 * callback that finds w), and stores them in stacks; returns their hash, or 0 when the process
 * is no known Ruby, the thread has no frames, or the map is full (counted at drop_reason). */
static __always_inline __u64 rb_walk_store(__u32 pid, struct rb_walk *w,
					   long (*step)(__u32, void *), void *stacks,
					   __u32 drop_reason)
{
	struct rb_proc_info *info = bpf_map_lookup_elem(&rb_procs, &pid);
	__u64 ec;

	if (!info || !w)
		return 0;
	w->info = *info;
	interp_stack_begin(&w->stack, SPANPROF_INTERP_RUBY);
	w->hash = 0x84222325cbf29ce4ull;
	ec = current_ec(&w->info);
	if (!ec)
		return 0; /* a thread Ruby never ran on has no EC: not an error */
	if (walk_bounds(w, ec)) {
		counter_inc(&drop_counts, SPANPROF_DROP_RB_EC);
		return 0;
	}
	return interp_walk_run(step, SPANPROF_INTERP_MAX_FRAMES + 16, &w->stack, &w->hash, stacks,
			       &drop_counts, drop_reason);
}

/* Records the current thread's Ruby frames in window slot's interp_stacks (a CPU sample). */
__noinline __u64 rb_capture(__u32 pid, __u32 slot)
{
	__u32 zero = 0;

	return rb_walk_store(pid, bpf_map_lookup_elem(&rb_walk_scratch, &zero), rb_step,
			     INTERP_STACKS_OF(slot), SPANPROF_DROP_RB_STACK);
}

/* The same for an off-CPU stack, into window slot's off_cpu_interp_stacks. */
__noinline __u64 rb_capture_off_cpu(__u32 pid, __u32 slot)
{
	__u32 zero = 0;

	return rb_walk_store(pid, bpf_map_lookup_elem(&off_cpu_rb_walk_scratch, &zero),
			     rb_step_off_cpu, OFF_CPU_INTERP_STACKS_OF(slot),
			     SPANPROF_DROP_OFF_CPU_INTERP_STACK);
}
