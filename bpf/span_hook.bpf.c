// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* uprobe on spanprof_span_set(): copies the hook's span context into the calling thread's
 * task storage, double-buffered so a sample interrupting the copy still sees a whole span. */
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

_Static_assert(sizeof(struct span_ctx) == 48, "span_ctx ABI");
_Static_assert(sizeof(struct thread_span) == 104, "thread_span ABI");
_Static_assert(__builtin_offsetof(struct span_ctx, name_id) == SPANPROF_ABI_SPAN_NAME_OFFSET,
	       "the ids are the hook struct's first 40 bytes");

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
	if (bpf_map_update_elem(&span_names, &id, &buf, BPF_ANY)) {
		counter_inc(&drop_counts, SPANPROF_DROP_SPAN_NAME);
		return 0;
	}
	return id;
}

/* Copies the hook's ids into the slot that is not current, interns the name, then publishes. */
static __always_inline void write_span(struct thread_span *ts, const void *user_span)
{
	/* `& 1` keeps the index provably inside slot[] for the verifier. */
	__u32 next = (ts->current ^ 1) & 1;
	struct span_ctx *slot = &ts->slot[next];
	__u32 version;

	if (bpf_probe_read_user(slot, SPANPROF_ABI_SPAN_NAME_OFFSET, user_span)) {
		counter_inc(&drop_counts, SPANPROF_DROP_SPAN_READ);
		return;
	}
	version = slot->abi_version;
	if (version != SPANPROF_ABI_VERSION && version != SPANPROF_ABI_VERSION_V1) {
		counter_inc(&drop_counts, SPANPROF_DROP_SPAN_VERSION);
		return;
	}
	slot->name_id = intern_name(user_span, version, ts->slot[ts->current & 1].name_id);
	/* Publish: the sampler runs on this CPU only between instructions, so two plain stores in
	 * this order are enough; the barrier keeps the compiler from reordering them. */
	ts->current = next;
	__asm__ __volatile__("" ::: "memory");
	ts->active = 1;
	counter_inc(&event_counts, SPANPROF_EVENT_SPAN_SET);
}

/* BPF_KPROBE reads the argument registers; libbpf 1.1 has no BPF_UPROBE spelling yet. */
SEC("uprobe")
int BPF_KPROBE(on_span_set, const void *user_span)
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
 * belongs to the running goroutine, not to the thread. The attach cookie is the executable's
 * g offset from FS base (struct go_proc's g_tls_offset, set per file by the agent). */
SEC("uprobe")
int BPF_KPROBE(on_go_span_set, const void *user_span)
{
	static const struct thread_span empty;
	struct goroutine_key key = { .pid = bpf_get_current_pid_tgid() >> 32 };
	__s32 g_tls_offset = (__s32)bpf_get_attach_cookie(ctx);
	struct thread_span *ts;
	int err;

	if (current_goroutine(bpf_get_current_task_btf(), g_tls_offset, &key.g)) {
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
