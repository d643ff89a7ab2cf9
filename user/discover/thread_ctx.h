/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Finds where a process publishes OpenTelemetry thread context (docs/thread-context.md): its
 * process context announces the schema and the attribute keys, and a loaded ELF module exports
 * the TLS variable otel_thread_ctx_v1; the result is what the sampler needs to reach each
 * thread's record (struct tctx_proc). */
#ifndef SPANPROF_THREAD_CTX_H
#define SPANPROF_THREAD_CTX_H

#include <stddef.h>
#include <sys/types.h>
#include <linux/types.h>

#include "discover/proc_maps.h"
#include "discover/process_ctx.h"
#include "discover/tctx_elf.h"
#include "spanprof_abi.h"

/* Schemas of the TLS record: the OTEP's development name and its announced stable name. */
#define THREAD_CTX_SCHEMA_DEV "tlsdesc_v1_dev"
#define THREAD_CTX_SCHEMA "tls_v1"
/* Keys whose value is the local root span id (16 lower-case hex characters) and the span name. */
#define THREAD_CTX_ROOT_KEY_DATADOG "datadog.local_root_span_id"
#define THREAD_CTX_ROOT_KEY "spanprof.local_root_span_id"
#define THREAD_CTX_NAME_KEY "spanprof.span_name"
/* ELF files opened per process scan, at most. */
#define THREAD_CTX_MAX_FILES 512

/* Label attributes: names of record keys whose values become sample labels. */
struct thread_ctx_labels {
	const char *names[SPANPROF_TCTX_MAX_LABELS];
	size_t n;
};

/* ELF files known not to export the variable, by (device, inode): each is parsed once. */
struct thread_ctx_files;
struct thread_ctx_files *thread_ctx_files_new(size_t max_files); /* NULL: ENOMEM */
void thread_ctx_files_free(struct thread_ctx_files *f); /* NULL-safe */

/* Reads a mapped module's ELF file fd (path is the mapping's): tctx_elf_read()'s results, or
 * -EBUSY when the file's verdict is not known yet because it is being parsed elsewhere (off the
 * caller's thread): the process is then retried later. */
typedef int (*thread_ctx_elf_fn)(void *ctx, int fd, const char *path, struct tctx_elf *out);

/* Routes the files' parses through read(ctx, ...); by default (NULL) tctx_elf_read() runs in
 * the caller. */
void thread_ctx_files_set_reader(struct thread_ctx_files *f, thread_ctx_elf_fn read, void *ctx);

/* Looks for pid's thread context among maps (its executable mappings). Returns 0 with *out
 * filled; -ENOENT when no module exports the variable, or the process context names no
 * thread-local schema; -EAGAIN when a module exports it but the process context is not
 * published yet, or the dynamic linker has not yet filled what tells where the variable is
 * (retry later); -EINPROGRESS when deadline_ns (CLOCK_MONOTONIC; UINT64_MAX: none) passed with
 * files not parsed yet, or when the reader put off a file's parse and no other module settles
 * the process (retry later: the files parsed are remembered); -ENOTSUP for a schema or
 * TLS access this reader does not know (*why says which); another -errno. Every byte read is
 * treated as hostile. */
int thread_ctx_find(struct thread_ctx_files *files, const char *proc_root, pid_t pid,
		    const struct proc_maps *maps, const struct thread_ctx_labels *labels,
		    uint64_t deadline_ns, struct tctx_proc *out, const char **why);

/* Sets out's key fields (nkeys, root_key, name_key, label_keys) from ctx's key map and clears
 * its rescan flag; the TLS fields are left as they are. */
void thread_ctx_set_keys(const struct process_ctx *ctx, const struct thread_ctx_labels *labels,
			 struct tctx_proc *out);

/* Re-reads pid's process context for its key map into out (after the sampler met an index it
 * did not know). Returns 0 or process_ctx_read()'s error. */
int thread_ctx_reread_keys(const char *proc_root, pid_t pid, const struct thread_ctx_labels *labels,
			   struct tctx_proc *out);

#endif /* SPANPROF_THREAD_CTX_H */
