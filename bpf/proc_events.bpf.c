// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Tells the agent when to rescan a process (exec, code mapped or made executable) and when one
 * exits, so hooks in new binaries and dlopen'ed libraries are attached, and JIT code is unwound,
 * without polling all of /proc. */
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "helpers.bpf.h"
#include "maps.bpf.h"

#define PROT_EXEC 0x4

extern DROP_COUNTS_MAP;
extern EVENT_COUNTS_MAP;

/* With --pid, only the processes named (target_pids) raise events: the agent has nothing to do
 * for the others, and a node's exec and exit storm would cost it a map update or delete each. */
extern const volatile bool cfg_filter_pids; /* span_hook.bpf.c */

/* Defined by span_hook.bpf.c, the first in link order. */
extern TARGET_PIDS_MAP;
extern THREAD_SPANS_MAP;
extern SPAN_TASKS_MAP;
extern SPAN_AREAS_MAP;

static __always_inline bool wanted(__u32 pid)
{
	return !cfg_filter_pids || bpf_map_lookup_elem(&target_pids, &pid);
}

/* ~770 exec events (680 bytes each) between reads. The agent maps the ring's data twice (so a
 * record that wraps reads whole), which its resident memory counts twice: 1 MiB here showed as
 * 2 MiB of RSS on top of its 1 MiB of map memory. A ring that fills loses events, counted
 * (proc_event_lost), and the next rescan reads every process. */
#define PROC_EVENTS_BYTES (512 * 1024)

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, PROC_EVENTS_BYTES);
} proc_events SEC(".maps");

/* Wake-ups. The agent sleeps until its next drain (a second) unless woken: a process event
 * wakes it at once, so a new program's hooks and unwind tables come without delay, but at most
 * one event per PROC_EVENTS_WAKE_GAP_NS does (a node that runs builds execs hundreds of
 * processes a second, and each wake-up costs the agent a loop), and one whenever a quarter of
 * the ring is used. An event that finds the gap not yet over is read when the agent looks again
 * after a wake-up by an event: within SPANPROF_EVENTS_FOLLOWUP_MS, longer than the gap. */
#define PROC_EVENTS_WAKE_BYTES (PROC_EVENTS_BYTES / 4)
#define PROC_EVENTS_WAKE_GAP_NS (100ull * 1000 * 1000)
_Static_assert(PROC_EVENTS_WAKE_GAP_NS < SPANPROF_EVENTS_FOLLOWUP_MS * 1000000ull,
	       "the agent's follow-up look must come after the wake-up gap is over");

/* When an event last woke the agent (bpf_ktime_get_ns). Updated without atomics: two CPUs
 * racing both wake it, which costs one loop. */
__u64 proc_events_woken_ns = 0;

static __always_inline __u64 wakeup_flag(void)
{
	__u64 now = bpf_ktime_get_ns();

	if (now - proc_events_woken_ns >= PROC_EVENTS_WAKE_GAP_NS ||
	    bpf_ringbuf_query(&proc_events, BPF_RB_AVAIL_DATA) >= PROC_EVENTS_WAKE_BYTES) {
		proc_events_woken_ns = now;
		return BPF_RB_FORCE_WAKEUP;
	}
	return BPF_RB_NO_WAKEUP;
}

/* The environment is read in chunks this large into per-CPU scratch (too big for the 512-byte
 * stack); ENV_CHUNKS bounds the loop for the verifier and the cost of one exec (~24 KiB). */
#define ENV_CHUNK 256
#define ENV_CHUNKS 96

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, char[ENV_CHUNK]);
} env_scratch SEC(".maps");

/* Processes with a rescan request not yet handled: a process start maps a dozen files, and one
 * event is enough. The agent deletes the entry when it scans, the exit program when the process
 * ends. Not preallocated; the agent sets the bound (--pending-scan-entries). When it is full a
 * request is sent without its mark (nothing is lost, the agent may get the same request twice)
 * and counted. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, __u8);
} pending_scans SEC(".maps");

/* Marks pid's rescan pending. Returns 0 when the mark is new or could not be made (the map is
 * full, or an element could not be allocated: counted, and the caller sends the request
 * unmarked), -EEXIST when a request is pending already. */
static __always_inline long mark_pending(__u32 pid, __u64 flags)
{
	__u8 one = 1;
	long err = bpf_map_update_elem(&pending_scans, &pid, &one, flags);

	if (err && err != -EEXIST) {
		counter_inc(&event_counts, SPANPROF_EVENT_PENDING_SCANS_FULL);
		return 0;
	}
	return err;
}

static __always_inline void emit(__u32 type, __u32 pid)
{
	struct spanprof_proc_event *ev;

	ev = bpf_ringbuf_reserve(&proc_events, sizeof(*ev), 0);
	if (!ev) {
		counter_inc(&drop_counts, SPANPROF_DROP_PROC_EVENT);
		return;
	}
	ev->type = type;
	ev->pid = pid;
	bpf_ringbuf_submit(ev, wakeup_flag());
}

static __always_inline void request_scan(void)
{
	__u32 pid = bpf_get_current_pid_tgid() >> 32;

	if (!wanted(pid))
		return;
	if (mark_pending(pid, BPF_NOEXIST))
		return; /* already pending */
	emit(SPANPROF_PROC_SCAN, pid);
}

static __always_inline int has_prefix(const char *buf, const char *prefix, int n)
{
	int i;

	for (i = 0; i < n; i++)
		if (buf[i] != prefix[i])
			return 0;
	return 1;
}

#define SERVICE_VAR "OTEL_SERVICE_NAME="
#define RESOURCE_VAR "OTEL_RESOURCE_ATTRIBUTES="

/* Looks for the two OTel variables among the environment strings in [pos, end). A string longer
 * than a chunk is skipped chunk by chunk (`mid`: pos is inside a string, not at a name). The
 * first occurrence of each wins, as with getenv(). */
static __always_inline void read_env(struct spanprof_exec_event *ev, unsigned long pos,
				     unsigned long end)
{
	int found_service = 0, found_resource = 0, mid = 0, i;
	__u32 zero = 0;
	char *buf;
	long n;

	buf = bpf_map_lookup_elem(&env_scratch, &zero);
	if (!buf)
		return;
	for (i = 0; i < ENV_CHUNKS && pos < end; i++) {
		n = bpf_probe_read_user_str(buf, ENV_CHUNK, (const void *)pos);
		if (n <= 0)
			return;
		if (!mid && !found_service &&
		    has_prefix(buf, SERVICE_VAR, sizeof(SERVICE_VAR) - 1)) {
			bpf_probe_read_user_str(ev->service, sizeof(ev->service),
						(const void *)(pos + sizeof(SERVICE_VAR) - 1));
			found_service = 1;
		} else if (!mid && !found_resource &&
			   has_prefix(buf, RESOURCE_VAR, sizeof(RESOURCE_VAR) - 1)) {
			bpf_probe_read_user_str(ev->resource, sizeof(ev->resource),
						(const void *)(pos + sizeof(RESOURCE_VAR) - 1));
			found_resource = 1;
		}
		/* n == ENV_CHUNK: the string may go on; read on from its last copied byte. */
		mid = n == ENV_CHUNK;
		pos += mid ? n - 1 : n;
		if (found_service && found_resource)
			break;
	}
	ev->env_complete = pos >= end || (found_service && found_resource);
}

/* Emits the exec event and marks a rescan pending (the new program's mmaps need no event). */
SEC("tp_btf/sched_process_exec")
int BPF_PROG(on_exec, struct task_struct *p)
{
	__u32 pid = bpf_get_current_pid_tgid() >> 32;
	struct spanprof_exec_event *ev;

	/* Task storage survives exec, but the span, the span segment and the hook's area it
	 * describes belonged to the old program: read on, the area's and the record slot's
	 * addresses would be read in the new one. The new program's hook registers anew. */
	bpf_task_storage_delete(&span_areas, p);
	bpf_task_storage_delete(&span_tasks, p);
	bpf_task_storage_delete(&thread_spans, p);
	if (!wanted(pid))
		return 0;
	mark_pending(pid, BPF_ANY);
	ev = bpf_ringbuf_reserve(&proc_events, sizeof(*ev), 0);
	if (!ev) {
		bpf_map_delete_elem(&pending_scans, &pid); /* let a later mmap ask again */
		counter_inc(&drop_counts, SPANPROF_DROP_PROC_EVENT);
		return 0;
	}
	ev->hdr.type = SPANPROF_PROC_EXEC;
	ev->hdr.pid = pid;
	bpf_get_current_comm(ev->comm, sizeof(ev->comm));
	ev->service[0] = '\0';
	ev->resource[0] = '\0';
	ev->env_complete = 0;
	ev->_pad = 0;
	read_env(ev, BPF_CORE_READ(p, mm, env_start), BPF_CORE_READ(p, mm, env_end));
	bpf_ringbuf_submit(ev, wakeup_flag());
	return 0;
}

/* mmap() and mprotect() both take the protection third: asking for executable memory means the
 * process's code may have changed. */
static __always_inline int scan_if_exec(struct trace_event_raw_sys_enter *ctx)
{
	if (ctx->args[2] & PROT_EXEC)
		request_scan();
	return 0;
}

/* dlopen() and the dynamic loader map code with PROT_EXEC from a file descriptor, a JIT maps
 * anonymous memory with it; the memory is not mapped yet here, which is fine: the agent scans a
 * little later. A syscall tracepoint rather than fentry/kprobe on the mm code: those need ftrace
 * or kprobes, which some kernels (this project's VMs among them) do not offer. The agent treats
 * this program as optional. */
SEC("tracepoint/syscalls/sys_enter_mmap")
int on_mmap_enter(struct trace_event_raw_sys_enter *ctx)
{
	return scan_if_exec(ctx);
}

/* A JIT writes code into memory mapped read-write, then makes it executable (CPython's perf
 * trampolines, V8, LuaJIT): the unwinder must learn the new code range. At most one rescan is
 * pending per process (pending_scans), so a JIT flipping pages costs a map lookup per call.
 * Optional too. */
SEC("tracepoint/syscalls/sys_enter_mprotect")
int on_mprotect_enter(struct trace_event_raw_sys_enter *ctx)
{
	return scan_if_exec(ctx);
}

SEC("tp_btf/sched_process_fork")
int BPF_PROG(on_fork, struct task_struct *parent, struct task_struct *child)
{
	__u32 pid = BPF_CORE_READ(child, tgid);
	struct spanprof_fork_event *ev;

	if (BPF_CORE_READ(child, pid) != pid)
		return 0; /* a new thread of an existing process */
	if (!wanted(pid))
		return 0;
	ev = bpf_ringbuf_reserve(&proc_events, sizeof(*ev), 0);
	if (!ev) {
		counter_inc(&drop_counts, SPANPROF_DROP_PROC_EVENT);
		return 0;
	}
	ev->hdr.type = SPANPROF_PROC_FORK;
	ev->hdr.pid = pid;
	ev->parent = BPF_CORE_READ(parent, tgid);
	ev->_pad = 0;
	bpf_ringbuf_submit(ev, wakeup_flag());
	return 0;
}

SEC("tp_btf/sched_process_exit")
int BPF_PROG(on_exit, struct task_struct *task)
{
	__u32 pid = BPF_CORE_READ(task, tgid);

	/* signal->live drops to zero when the last thread of the group exits. */
	if (BPF_CORE_READ(task, signal, live.counter) != 0 || !wanted(pid))
		return 0;
	bpf_map_delete_elem(&pending_scans, &pid);
	emit(SPANPROF_PROC_EXIT, pid);
	return 0;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
