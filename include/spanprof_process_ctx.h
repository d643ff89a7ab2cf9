/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The OpenTelemetry process context's header (OTEP 4719) as the hook library writes it at the
 * start of its OTEL_CTX mapping and the agent reads it from another process's memory: one
 * definition for the writer and the reader. The protobuf payload follows the header. */
#ifndef SPANPROF_PROCESS_CTX_ABI_H
#define SPANPROF_PROCESS_CTX_ABI_H

#include <stdint.h>

#define PROCESS_CTX_SIGNATURE "OTEL_CTX" /* 8 bytes, no NUL in the header */
#define PROCESS_CTX_VERSION 2
#define PROCESS_CTX_HEADER_SIZE 32
/* Larger payloads are refused by the reader (a resource is a few hundred bytes), so the writer
 * publishes none. */
#define PROCESS_CTX_PAYLOAD_MAX (64 * 1024)

struct process_ctx_header {
	char signature[8];
	uint32_t version;
	uint32_t payload_size; /* bytes of payload */
	uint64_t published_at_ns; /* CLOCK_REALTIME; 0 while the writer updates the mapping */
	uint64_t payload; /* the payload's address in the writer */
};

_Static_assert(sizeof(struct process_ctx_header) == PROCESS_CTX_HEADER_SIZE, "OTEP 4719 header");

#endif /* SPANPROF_PROCESS_CTX_ABI_H */
