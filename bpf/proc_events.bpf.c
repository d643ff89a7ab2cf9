// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Tells the agent when to rescan a process (exec, an executable file mapped) and when one exits,
 * so hooks in new binaries and dlopen'ed libraries are attached without polling all of /proc. */
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "helpers.bpf.h"
#include "maps.bpf.h"

#define PROT_EXEC 0x4

extern DROP_COUNTS_MAP;

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 256 * 1024);
} proc_events SEC(".maps");

/* Processes with a rescan request not yet handled: a process start maps a dozen files, and one
 * event is enough. The agent deletes the entry when it scans. LRU keeps it bounded. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, __u8);
} pending_scans SEC(".maps");

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
	bpf_ringbuf_submit(ev, 0);
}

static __always_inline void request_scan(void)
{
	__u32 pid = bpf_get_current_pid_tgid() >> 32;
	__u8 one = 1;

	if (bpf_map_update_elem(&pending_scans, &pid, &one, BPF_NOEXIST))
		return; /* already pending */
	emit(SPANPROF_PROC_SCAN, pid);
}

SEC("tp_btf/sched_process_exec")
int BPF_PROG(on_exec)
{
	request_scan();
	return 0;
}

/* dlopen() and the dynamic loader map code with PROT_EXEC from a file descriptor; the file is not
 * mapped yet here, which is fine: the agent scans a little later. A syscall tracepoint rather
 * than fentry/kprobe on the mm code: those need ftrace or kprobes, which some kernels (this
 * project's VMs among them) do not offer. The agent treats this program as optional. */
SEC("tracepoint/syscalls/sys_enter_mmap")
int on_mmap_enter(struct trace_event_raw_sys_enter *ctx)
{
	unsigned long prot = ctx->args[2];
	int fd = ctx->args[4];

	if (fd >= 0 && (prot & PROT_EXEC))
		request_scan();
	return 0;
}

SEC("tp_btf/sched_process_exit")
int BPF_PROG(on_exit, struct task_struct *task)
{
	__u32 pid = BPF_CORE_READ(task, tgid);

	/* signal->live drops to zero when the last thread of the group exits. */
	if (BPF_CORE_READ(task, signal, live.counter) != 0)
		return 0;
	bpf_map_delete_elem(&pending_scans, &pid);
	emit(SPANPROF_PROC_EXIT, pid);
	return 0;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
