/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Reads a process's OpenTelemetry process context (OTEP 4719): the mapping named OTEL_CTX that
 * an SDK fills with a header and a protobuf ProcessContext, for the resource's service name. */
#ifndef SPANPROF_PROCESS_CTX_H
#define SPANPROF_PROCESS_CTX_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "discover/labels.h"
#include "spanprof_process_ctx.h"

/* Thread context keys (OTEP 4947) a process announces in the context's attributes. */
#define PROCESS_CTX_SCHEMA_MAX 32
#define PROCESS_CTX_MAX_KEYS 256 /* a record's key index is a u8 */
#define PROCESS_CTX_KEY_BYTES 8192 /* all key names, NUL-terminated, one after the other */

/* What spanprof takes from the resource ("" when absent). Valid UTF-8, cut at a character. */
struct process_ctx {
	char service_name[LABELS_SERVICE_MAX];
	char service_namespace[LABELS_SERVICE_MAX];
	/* threadlocal.schema_version ("" when absent; cut at the field's size). */
	char tls_schema[PROCESS_CTX_SCHEMA_MAX];
	/* threadlocal.attribute_key_map: key i's name starts at key_names + key_at[i], for the
	 * first nkeys keys (those that fit key_names; later ones are left out). An entry that is
	 * no string is kept as "" so that the indexes of those after it stay right. */
	uint16_t nkeys;
	uint16_t key_at[PROCESS_CTX_MAX_KEYS];
	char key_names[PROCESS_CTX_KEY_BYTES];
	uint64_t published_at_ns; /* the header's timestamp: the keys change with it */
};

/* Finds <proc_root>/PID/maps' OTEL_CTX mapping ([anon:OTEL_CTX], [anon_shmem:OTEL_CTX] or
 * /memfd:OTEL_CTX), reads its header and payload through <proc_root>/PID/mem (bounded reads, no
 * symlinks followed, non-blocking), retries a read torn by a concurrent update, and decodes
 * the resource. Every byte read is treated as hostile. Returns 0; -ENOENT when the process
 * publishes no context (or is gone: -ESRCH); -EBADMSG for a malformed header or payload;
 * -EMSGSIZE for a payload over PROCESS_CTX_PAYLOAD_MAX; -EAGAIN when it kept changing; -errno. */
int process_ctx_read(const char *proc_root, pid_t pid, struct process_ctx *out);

/* Decodes a ProcessContext protobuf (resource attributes service.name / service.namespace,
 * string values; the attributes threadlocal.schema_version and threadlocal.attribute_key_map;
 * everything else skipped without recursion). Returns 0 or -EBADMSG. */
int process_ctx_decode(const uint8_t *buf, size_t len, struct process_ctx *out);

#endif /* SPANPROF_PROCESS_CTX_H */
