/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The span of a thread whose hook library (ABI version 3) registered its area: read from the
 * thread's OpenTelemetry thread context record, through the otel_thread_ctx_v1 slot the hook
 * registered, so no TLS layout is worked out and the process needs no thread context set-up by
 * the agent. The record is read by the thread context reader (thread_ctx.bpf.h) with the keys
 * the hook writes: the local root span id at index 0, the root's name at index 1. */
#ifndef SPANPROF_SPAN_AREA_BPF_H
#define SPANPROF_SPAN_AREA_BPF_H

#include "thread_ctx.bpf.h"

/* The includer declares span_areas (SPAN_AREAS_MAP, extern outside span_hook.bpf.c). */

/* Fills span from task's registered record and returns 1, or returns 0 (no area registered,
 * no valid record). scratch: TCTX_SCRATCH_SAMPLE or TCTX_SCRATCH_OFF_CPU. */
static __always_inline int own_record_span(struct span_ctx *span, struct task_struct *task,
					   __u32 scratch)
{
	struct span_area *sa = bpf_task_storage_get(&span_areas, task, NULL, 0);
	struct tctx_proc tp = {
		.tls = SPANPROF_TCTX_TLS_STATIC,
		.nkeys = 2,
		.root_key = 0,
		.name_key = 1,
		.label_keys = { SPANPROF_TCTX_NO_KEY, SPANPROF_TCTX_NO_KEY, SPANPROF_TCTX_NO_KEY,
				SPANPROF_TCTX_NO_KEY },
	};

	if (!sa || !sa->slot)
		return 0;
#if defined(__TARGET_ARCH_x86)
	/* The slot's address, as the reader's static TLS case computes it from fsbase. */
	tp.tp_offset = (__s64)(sa->slot - BPF_CORE_READ(task, thread.fsbase));
	return tctx_record_span(span, &tp, task, scratch);
#else
	return 0;
#endif
}

#endif /* SPANPROF_SPAN_AREA_BPF_H */
