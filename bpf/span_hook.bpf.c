// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* uprobe on spanprof_span_set(): copies the hook's span context into the calling thread's
 * task storage, double-buffered so a sample interrupting the copy still sees a whole span. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "helpers.bpf.h"
#include "maps.bpf.h"

THREAD_SPANS_MAP;
GOROUTINE_SPANS_MAP;
GO_PIDS_MAP;
DROP_COUNTS_MAP;
EVENT_COUNTS_MAP;

_Static_assert(sizeof(struct span_ctx) == 104, "span_ctx ABI");
_Static_assert(sizeof(struct thread_span) == 216, "thread_span ABI");

/* Copies the hook's struct into the slot that is not current, then publishes it. */
static __always_inline void write_span(struct thread_span *ts, const struct span_ctx *user_span)
{
	/* `& 1` keeps the index provably inside slot[] for the verifier. */
	__u32 next = (ts->current ^ 1) & 1;

	if (bpf_probe_read_user(&ts->slot[next], sizeof(ts->slot[next]), user_span)) {
		counter_inc(&drop_counts, SPANPROF_DROP_SPAN_READ);
		return;
	}
	if (ts->slot[next].abi_version != SPANPROF_ABI_VERSION) {
		counter_inc(&drop_counts, SPANPROF_DROP_SPAN_VERSION);
		return;
	}
	/* Publish: the sampler runs on this CPU only between instructions, so two plain stores in
	 * this order are enough; the barrier keeps the compiler from reordering them. */
	ts->current = next;
	__asm__ __volatile__("" ::: "memory");
	ts->active = 1;
	counter_inc(&event_counts, SPANPROF_EVENT_SPAN_SET);
}

/* BPF_KPROBE reads the argument registers; libbpf 1.1 has no BPF_UPROBE spelling yet. */
SEC("uprobe")
int BPF_KPROBE(on_span_set, const struct span_ctx *user_span)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct thread_span *ts;

	if (!user_span) {
		/* Clearing needs no storage: a thread that never set a span has none. */
		ts = bpf_task_storage_get(&thread_spans, task, NULL, 0);
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
	write_span(ts, user_span);
	return 0;
}

/* The Go hook (hooks/go) puts the span pointer in the first argument register too, but the span
 * belongs to the running goroutine, not to the thread. */
SEC("uprobe")
int BPF_KPROBE(on_go_span_set, const struct span_ctx *user_span)
{
	static const struct thread_span empty;
	struct goroutine_key key = { .pid = bpf_get_current_pid_tgid() >> 32 };
	struct thread_span *ts;
	int err;

	if (current_goroutine(bpf_get_current_task_btf(), &key.g)) {
		counter_inc(&drop_counts, SPANPROF_DROP_GOROUTINE_READ);
		return 0;
	}
	ts = bpf_map_lookup_elem(&goroutine_spans, &key);
	if (!user_span) {
		if (ts)
			ts->active = 0;
		counter_inc(&event_counts, SPANPROF_EVENT_SPAN_CLEAR);
		return 0;
	}
	if (!ts)
		ts = map_lookup_or_init(&goroutine_spans, &key, &empty, &err);
	if (!ts) {
		counter_inc(&drop_counts, SPANPROF_DROP_GOROUTINE_FULL);
		return 0;
	}
	write_span(ts, user_span);
	return 0;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
