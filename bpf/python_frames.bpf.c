// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* CPython frames of the interrupted thread (docs/interpreters.md): the thread state through the
 * autoTSSkey pthread key (glibc x86-64 TSD), then the frame chain with bpf_loop. The frames go into
 * the window's interp_stacks map under a hash that the sampler puts in the sample's key. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>

#include "helpers.bpf.h"
#include "maps.bpf.h"

/* glibc 2.32-2.36 x86-64: the value of pthread key k (< 32) is at fsbase + 0x310 + 16k + 8. */
#define GLIBC_TSD_OFFSET 0x310
#define GLIBC_TSD_STATIC_KEYS 32
/* 3.12+ shim frame pushed by each C activation (FRAME_OWNED_BY_CSTACK): not user code. */
#define PY_OWNER_CSTACK 3

extern DROP_COUNTS_MAP;

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, SPANPROF_MAX_PY_PROCS);
	__type(key, __u32);
	__type(value, struct py_proc_info);
} py_procs SEC(".maps");

INTERP_STACK_MAP(interp_stacks_0);
INTERP_STACK_MAP(interp_stacks_1);
/* The frames of off-CPU stacks, taken when a thread runs again after a wait (off_cpu.bpf.c). */
OFF_CPU_INTERP_STACK_MAP(off_cpu_interp_stacks_0);
OFF_CPU_INTERP_STACK_MAP(off_cpu_interp_stacks_1);

/* The walk's state: an interp_stack is too big for the 512-byte stack. */
struct py_walk {
	struct interp_stack stack;
	struct py_proc_info info;
	__u64 frame; /* next frame to read; 0 at the end */
	__u64 hash;
};

WALK_SCRATCH_MAP(py_walk_scratch, struct py_walk);
WALK_SCRATCH_MAP(off_cpu_py_walk_scratch, struct py_walk);

/* The instruction of frame f: f_lasti (<= 3.10), else the instruction pointer made an index. */
static __always_inline __u32 frame_lasti(const struct py_proc_info *info, __u64 f, __u64 code)
{
	__u64 ip;

	if (info->minor <= 10)
		return user_read_u32(f + info->frame_lasti);
	ip = user_read_u64(f + info->frame_lasti);
	if (ip < code + info->code_adaptive)
		return 0;
	return (ip - code - info->code_adaptive) / 2;
}

/* SPANPROF_PY_FRAME_ENTRY when frame f is the first its _PyEval_EvalFrameDefault activation ran:
 * every frame up to 3.10 (one activation per frame), is_entry on 3.11. On 3.12+ the shim frame
 * under it tells (py_step), so 0 here. */
static __always_inline __u32 frame_entry(const struct py_proc_info *info, __u64 f)
{
	__u8 entry = 0;

	if (info->minor <= 10)
		return SPANPROF_PY_FRAME_ENTRY;
	if (info->frame_entry == SPANPROF_PY_NO_FIELD)
		return 0;
	bpf_probe_read_user(&entry, 1, (void *)(f + info->frame_entry));
	return entry ? SPANPROF_PY_FRAME_ENTRY : 0;
}

/* One frame per call. */
static __always_inline long py_step_walk(struct py_walk *w)
{
	struct interp_frame *out;
	__u8 owner = 0;
	__u64 f, code;
	__u32 n;

	if (!w || !w->frame)
		return 1;
	f = w->frame;
	w->frame = user_read_u64(f + w->info.frame_back);
	n = w->stack.nframes;
	if (w->info.frame_owner != SPANPROF_PY_NO_FIELD) {
		bpf_probe_read_user(&owner, 1, (void *)(f + w->info.frame_owner));
		if (owner == PY_OWNER_CSTACK) {
			/* The shim under an activation's frames: the frame before it was that
			 * activation's entry frame. */
			if (n - 1 < SPANPROF_INTERP_MAX_FRAMES)
				w->stack.frames[n - 1].flags = SPANPROF_PY_FRAME_ENTRY;
			w->hash = (w->hash ^ PY_OWNER_CSTACK) * 0x100000001b3ull;
			return 0;
		}
	}
	code = user_read_u64(f + w->info.frame_code);
	if (!code)
		return 0;
	if (n >= SPANPROF_INTERP_MAX_FRAMES) {
		w->stack.truncated = 1;
		return 1;
	}
	out = &w->stack.frames[n];
	out->code = code;
	out->firstlineno = user_read_u32(code + w->info.code_firstlineno);
	out->lasti = frame_lasti(&w->info, f, code);
	out->flags = frame_entry(&w->info, f);
	out->check = SPANPROF_PY_CHECK(user_read_u64(code + w->info.code_name),
				       user_read_u64(code + w->info.code_filename),
				       w->info.code_qualname != SPANPROF_PY_NO_FIELD ?
					       user_read_u64(code + w->info.code_qualname) :
					       0,
				       user_read_u64(code + w->info.code_linetable));
	w->hash = (w->hash ^ code ^ ((__u64)out->lasti << 40) ^ ((__u64)out->flags << 62)) *
		  0x100000001b3ull;
	w->stack.nframes = n + 1;
	return 0;
}

WALK_STEP_FN(py_step, py_step_walk, py_walk_scratch)
WALK_STEP_FN(py_step_off_cpu, py_step_walk, off_cpu_py_walk_scratch)

/* The first frame: tstate->frame, ->cframe->current_frame or ->current_frame. */
static __always_inline __u64 top_frame(const struct py_proc_info *info)
{
	struct task_struct *task = bpf_get_current_task_btf();
	__u64 fsbase = BPF_CORE_READ(task, thread.fsbase), tstate, frame;
	__u32 key;

	if (!fsbase)
		return 0;
	key = user_read_u32(info->tss_key_addr);
	if (key >= GLIBC_TSD_STATIC_KEYS)
		return 0;
	tstate = user_read_u64(fsbase + GLIBC_TSD_OFFSET + 16 * key + 8);
	if (!tstate)
		return 0;
	frame = user_read_u64(tstate + info->tstate_frame);
	if (frame && info->cframe_current != SPANPROF_PY_NO_FIELD)
		frame = user_read_u64(frame + info->cframe_current);
	return frame;
}

/* Walks the current thread's frames with w (its program's scratch) and step (the callback that
 * finds w), and stores them in stacks; returns their hash, or 0 when the process is no known
 * Python, the thread has no frames, or the map is full (counted at drop_reason). */
static __always_inline __u64 py_walk_store(__u32 pid, struct py_walk *w,
					   long (*step)(__u32, void *), void *stacks,
					   __u32 drop_reason)
{
	struct py_proc_info *info = bpf_map_lookup_elem(&py_procs, &pid);

	if (!info || !w)
		return 0;
	w->info = *info;
	interp_stack_begin(&w->stack, SPANPROF_INTERP_PYTHON);
	w->hash = 0xcbf29ce484222325ull;
	w->frame = top_frame(&w->info);
	if (!w->frame)
		return 0;
	return interp_walk_run(step, SPANPROF_INTERP_MAX_FRAMES + 8, &w->stack, &w->hash, stacks,
			       &drop_counts, drop_reason);
}

/* Records the current thread's Python frames in window slot's interp_stacks (a CPU sample). */
__noinline __u64 py_capture(__u32 pid, __u32 slot)
{
	__u32 zero = 0;

	return py_walk_store(pid, bpf_map_lookup_elem(&py_walk_scratch, &zero), py_step,
			     INTERP_STACKS_OF(slot), SPANPROF_DROP_PY_STACK);
}

/* The same for an off-CPU stack, into window slot's off_cpu_interp_stacks. */
__noinline __u64 py_capture_off_cpu(__u32 pid, __u32 slot)
{
	__u32 zero = 0;

	return py_walk_store(pid, bpf_map_lookup_elem(&off_cpu_py_walk_scratch, &zero),
			     py_step_off_cpu, OFF_CPU_INTERP_STACKS_OF(slot),
			     SPANPROF_DROP_OFF_CPU_INTERP_STACK);
}
