/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Pyroscope push requests (push.v1.PushRequest, docs/wire-format.md): one series per service around one
 * pprof profile, gzipped, and the checks the server applies to series labels. */
#ifndef SPANPROF_PUSH_ENCODE_H
#define SPANPROF_PUSH_ENCODE_H

#include <stddef.h>
#include <stdint.h>

#include "profile/pprof.h"
#include "util/label_rules.h"

#define PUSH_PROFILE_NAME "process_cpu" /* __name__ of CPU profiles */
#define PUSH_UNKNOWN_SERVICE "unknown_service" /* what the server would fill in */
#define PUSH_MAX_SERIES_LABELS LABEL_MAX_SERIES /* the server's limit per series */
#define PUSH_MAX_STATIC_LABELS LABEL_MAX_STATIC /* beside __name__, service_name */
#define PUSH_MAX_LABEL_NAME LABEL_NAME_MAX
#define PUSH_MAX_LABEL_VALUE LABEL_VALUE_MAX

/* Checks labels meant for every series: each passes label_rules_check() and appears once; at
 * most PUSH_MAX_STATIC_LABELS.
 * Returns 0, or -EINVAL with *why set to a static description and *bad to the offending index
 * (n when the count is the problem). */
int push_check_labels(const struct pprof_label *labels, size_t n, const char **why, size_t *bad);

/* Builds a PushRequest with one RawProfileSeries labelled __name__=process_cpu,
 * service_name=<service> (PUSH_UNKNOWN_SERVICE when NULL or empty; repaired to UTF-8 and cut to
 * PUSH_MAX_LABEL_VALUE bytes) and the static labels (which must pass push_check_labels), sorted
 * by name, holding one RawSample: the uncompressed pprof `profile` and a new v4 UUID. The packed
 * request is gzipped into *out (malloc'ed, owned by the caller).
 * Returns 0 or -EINVAL, -ENOMEM, -EIO (getrandom or zlib). */
int push_encode(const char *service, const struct pprof_label *labels, size_t nlabels,
		const uint8_t *profile, size_t len, uint8_t **out, size_t *out_len);

/* push_encode(), but the series is labelled __name__=<name> (push_profile_name()). */
int push_encode_named(const char *name, const char *service, const struct pprof_label *labels,
		      size_t nlabels, const uint8_t *profile, size_t len, uint8_t **out,
		      size_t *out_len);

/* The __name__ of a profile whose sample type is sample_type: "process_cpu" for "cpu" (what
 * Pyroscope's eBPF agent sends), the sample type itself otherwise ("off_cpu"). */
const char *push_profile_name(const char *sample_type);

#endif /* SPANPROF_PUSH_ENCODE_H */
