/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The labels of one sample: its span (span_id by the configured scope, trace_id, span_name and
 * a thread context's attributes) and its process (service namespace, Kubernetes placement); and
 * which of them a push leaves out. Names and budget follow util/series_labels. */
#ifndef SPANPROF_SAMPLE_LABELS_H
#define SPANPROF_SAMPLE_LABELS_H

#include <stddef.h>

#include "config/config_types.h"
#include "discover/proc_table.h"
#include "profile/drain.h"
#include "util/series_labels.h"
#include "util/spanprof_types.h"

/* span_id, trace_id, span_name, service_namespace, namespace, pod, container and the
 * attributes. */
#define SAMPLE_LABELS_MAX (7 + SPANPROF_TCTX_MAX_LABELS)
#define SAMPLE_LABEL_ATTR_NAME_MAX 72

struct sample_label_options {
	enum span_scope scope; /* which span's id span_id carries */
	const char *const *tctx_labels; /* label names of a thread context's attributes, in order */
	size_t ntctx_labels;
};

/* The labels and the bytes they point into: valid while this struct is. */
struct sample_labels {
	struct pprof_label labels[SAMPLE_LABELS_MAX];
	size_t n;
	char span_hex[17], trace_hex[33], name[SPANPROF_ABI_SPAN_NAME_MAX + 1];
	char attr_names[SPANPROF_TCTX_MAX_LABELS][SAMPLE_LABEL_ATTR_NAME_MAX];
	char attr_values[SPANPROF_TCTX_MAX_LABELS][SPANPROF_ABI_SPAN_NAME_MAX + 1];
};

/* Fills out with s's labels (none for its span when it has none) and proc's (NULL: none).
 * Values are cleaned (no newline, ESC or broken UTF-8); a zero span or trace id is left out, so
 * an unsampled span is labelled with its name only. Returns out->n. */
size_t sample_labels_build(struct sample_labels *out, const struct sample_label_options *o,
			   const struct sample *s, const struct proc_info *proc);

/* The sample label key a push leaves out of its profiles: "trace_id" unless trace ids are
 * pushed (trace_id_sent), else NULL. The server would lift it into the series. */
const char *sample_labels_push_omit(int trace_id_sent);

#endif /* SPANPROF_SAMPLE_LABELS_H */
