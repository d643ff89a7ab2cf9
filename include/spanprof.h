/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* spanprof's public hook: apps (or their tracer libraries) call spanprof_span_set() whenever the
 * active OpenTelemetry span of the calling thread changes. Link with -lspanprof. */
#ifndef SPANPROF_H
#define SPANPROF_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SPANPROF_SPAN_NAME_MAX 256
/* Put in spanprof_span.abi_version; the agent ignores spans of a version it does not know.
 * Version 1 had a 64-byte name (SPANPROF_SPAN_NAME_MAX was 64); agents read both, so programs
 * built against the old header keep working, with names cut at 63 bytes. */
#define SPANPROF_SPAN_ABI_VERSION 2

struct spanprof_span {
	uint32_t abi_version; /* SPANPROF_SPAN_ABI_VERSION */
	uint32_t reserved; /* zero */
	uint8_t trace_id[16]; /* OTel trace id, big-endian bytes as in its hex form */
	uint8_t span_id[8]; /* the span that is now active on this thread */
	uint8_t root_span_id
		[8]; /* its local root span; all zero = the span is its own local root */
	/* The local root span's name, NUL-terminated, at most 255 bytes. Only the bytes up to the
	 * NUL are read, so a short name costs no more than before. */
	char name[SPANPROF_SPAN_NAME_MAX];
};

/*
 * Tells spanprof which span is now active on the calling thread; NULL: none. The struct is read
 * during the call only; it may live on the caller's stack.
 *
 * How it is built, and why: the function is an empty body around a USDT-style probe site. It
 * first loads a 2-byte semaphore that lives in the library's own .probes data section; the
 * agent's uprobe is attached with ref_ctr_offset pointing at it, so the kernel raises it in every
 * process while the agent is attached. With no agent the call is that load and a not-taken
 * branch (about 1-3 ns). With the agent, the branch reaches `nop; nop5` with the span pointer in
 * the first argument register, and a .note.stapsdt note (provider "spanprof", probe "span_set",
 * readable by readelf -n, perf and bpftrace) records where the site and the semaphore are. On
 * x86-64 kernels 6.18+ the agent attaches to the 5-byte nop, which the kernel turns into a call
 * to a trampoline instead of a trap (~0.5 us per hit); elsewhere it attaches to the 1-byte nop,
 * which works on every kernel with uprobes. On other architectures the site is a single nop.
 * In short: free without the agent, cheap with it, and never a behaviour change for the app.
 */
void spanprof_span_set(const struct spanprof_span *span);

/* Non-zero while a spanprof agent has the hook attached in this process. Integrations may use it
 * to skip preparing a struct spanprof_span when nobody listens; it costs one load. */
int spanprof_active(void);

/*
 * Publishes the app's OpenTelemetry resource as OTEP 4719 process context: a mapping named
 * OTEL_CTX (a memfd of that name, else anonymous memory named with prctl PR_SET_VMA_ANON_NAME)
 * holding a header and a protobuf ProcessContext whose
 * resource has the n string attributes keys[i] = values[i] (service.name, service.namespace,
 * service.instance.id, ...). The spanprof agent (and any OTEP 4719 reader) takes the process's
 * service name from it, ahead of OTEL_SERVICE_NAME. Call it once at start-up; calling again
 * replaces the resource (readers retry a read that races with it). The mapping is not inherited
 * by fork(). Returns 0, -EINVAL, -EMSGSIZE (over 64 KiB), or -errno of mmap, or of prctl when
 * no memfd could be made and the kernel cannot name anonymous memory (no CONFIG_ANON_VMA_NAME).
 */
int spanprof_process_context_publish(const char *const *keys, const char *const *values, size_t n);

#ifdef __cplusplus
}
#endif

#endif /* SPANPROF_H */
