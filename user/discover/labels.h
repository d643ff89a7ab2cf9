/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Derives the labels spanprof attaches: a process's service name, and span ids as hex text. */
#ifndef SPANPROF_LABELS_H
#define SPANPROF_LABELS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* A service name's bytes with its NUL: Pyroscope takes label values of up to 2048 bytes, and
 * the name must match the trace's service.name whole. */
#define LABELS_SERVICE_MAX 2049

/* Service name from a process environment block (NUL-separated "K=V" strings, as in
 * /proc/PID/environ) and the executable's name: OTEL_SERVICE_NAME if set and non-empty, else
 * service.name in OTEL_RESOURCE_ATTRIBUTES (comma-separated k=v, values percent-decoded),
 * else exe_name, else "unknown_service" when exe_name is NULL or empty. Writes at most size bytes
 * including the NUL, truncating at a UTF-8 character boundary, cleaned by labels_clean().
 * Returns 0, -EINVAL, or -ENOMEM. */
int labels_service_from_environ(const char *environ, size_t environ_len, const char *exe_name,
				char *out, size_t size);

/* Same, from the two variables' values alone (NULL or "" when not set), as an exec event
 * carries them. Returns 0, -EINVAL, or -ENOMEM. */
int labels_service_from_values(const char *otel_service_name, const char *otel_resource_attributes,
			       const char *exe_name, char *out, size_t size);

/* Same, reading /proc/PID/environ (first 64 KiB) and /proc/PID/comm (or the exe link's basename
 * when comm is empty) under proc_root. An unreadable environ counts as empty.
 * Returns 0, -ENOENT/-ESRCH when the process is gone, or -errno. */
int labels_service_for_pid(const char *proc_root, pid_t pid, char *out, size_t size);

/* Same, but when the process names no OTel service, `fallback` (if not NULL) is used instead of
 * its executable's name (e.g. "<namespace>/<container>" on Kubernetes). */
int labels_service_for_pid_or(const char *proc_root, pid_t pid, const char *fallback, char *out,
			      size_t size);

/* Makes the NUL-terminated s safe as a label value, in place: every control character (C0
 * U+0000..U+001F such as newline and ESC, DEL U+007F, C1 U+0080..U+009F) and every byte that
 * does not start valid UTF-8 becomes '?'. The result is never longer than s. Every value an
 * application controls (service names, span names, pod placement) passes through here before
 * it becomes a label, a file name part or a series label. */
void labels_clean(char *s);

/* Lower-case hex of n bytes into out (2n+1 bytes, NUL-terminated). */
void labels_hex(const uint8_t *bytes, size_t n, char *out);

/* 1 when all n bytes are zero. */
int labels_is_zero(const uint8_t *bytes, size_t n);

#endif /* SPANPROF_LABELS_H */
