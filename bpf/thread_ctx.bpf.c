// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The maps through which the sampler and the off-CPU program read spans other tracers publish:
 * OpenTelemetry thread context records (where each process keeps them, filled by the agent) and
 * OBI's pinned map (put in obi_traces by the agent once OBI has pinned it). The readers are in
 * thread_ctx.bpf.h; OBI's map is read here only (obi_ids), since the BPF linker cannot
 * join declarations of a map of maps. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

#include "thread_ctx_maps.bpf.h"

TCTX_PROCS_MAP;
TCTX_SCRATCH_MAP;
OBI_TRACES_MAP;

__noinline int obi_ids(__u64 pid_tgid, struct obi_trace_ctx *out)
{
	struct obi_trace_ctx *v;
	__u32 zero = 0;
	void *inner;

	if (!out)
		return 0;
	inner = bpf_map_lookup_elem(&obi_traces, &zero);
	v = inner ? bpf_map_lookup_elem(inner, &pid_tgid) : NULL;
	if (!v)
		return 0;
	__builtin_memcpy(out, v, sizeof(*out));
	return 1;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
