/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Plain types and defaults of the configuration that the stages it configures share, so that
 * neither side includes the other: the span scope, a series label, and the upload defaults. */
#ifndef SPANPROF_CONFIG_TYPES_H
#define SPANPROF_CONFIG_TYPES_H

enum span_scope {
	SPAN_SCOPE_ROOT = 0, /* span_id = the local root span (Pyroscope's convention) */
	SPAN_SCOPE_ALL, /* span_id = the span active at the sample */
};

/* One label: of a series (--label), or of a sample (span_id, pod, ...). pprof's Label with a
 * string value; the strings belong to whoever filled it in. */
struct pprof_label {
	const char *key;
	const char *value;
};

/* Upload defaults: config_init() starts from them and the uploader fills a field left 0 with
 * them (output/upload.h), so the two cannot disagree. */
#define CONFIG_DEFAULT_CONNECT_TIMEOUT_S 5
#define CONFIG_DEFAULT_UPLOAD_TIMEOUT_S 30
#define CONFIG_DEFAULT_QUEUE_BYTES (64ull << 20)
#define CONFIG_DEFAULT_SPOOL_BYTES (512ull << 20)

/* Goroutines in a span at once, node-wide (the goroutine_spans map, 184 bytes each). */
#define CONFIG_DEFAULT_GOROUTINE_ENTRIES 16384

#endif /* SPANPROF_CONFIG_TYPES_H */
