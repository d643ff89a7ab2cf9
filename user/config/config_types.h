/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Plain types and defaults of the configuration that the stages it configures share, so that
 * neither side includes the other: the span scope and the upload defaults (a series label's type
 * is the label module's). */
#ifndef SPANPROF_CONFIG_TYPES_H
#define SPANPROF_CONFIG_TYPES_H

enum span_scope {
	SPAN_SCOPE_ROOT = 0, /* span_id = the local root span (Pyroscope's convention) */
	SPAN_SCOPE_ALL, /* span_id = the span active at the sample */
};

#include "util/series_labels.h" /* struct pprof_label */

/* Upload defaults: config_init() starts from them and the uploader fills a field left 0 with
 * them (output/upload.h), so the two cannot disagree. */
#define CONFIG_DEFAULT_CONNECT_TIMEOUT_S 5
#define CONFIG_DEFAULT_UPLOAD_TIMEOUT_S 30
#define CONFIG_DEFAULT_QUEUE_BYTES (64ull << 20)
#define CONFIG_DEFAULT_SPOOL_BYTES (512ull << 20)

/* Goroutines in a span at once, node-wide, at most: goroutine_spans (an LRU hash, about 200
 * bytes an entry, preallocated) starts at SPANPROF_GOROUTINES_START and grows up to this. */
#define CONFIG_DEFAULT_GOROUTINE_ENTRIES 16384
#define CONFIG_DEFAULT_SPAN_NAME_ENTRIES 4096
#define CONFIG_DEFAULT_PENDING_SCAN_ENTRIES 4096
#define CONFIG_DEFAULT_OFF_CPU_ENTRIES 8192

#endif /* SPANPROF_CONFIG_TYPES_H */
