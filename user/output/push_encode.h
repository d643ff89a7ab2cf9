/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Pyroscope push requests (push.v1.PushRequest): one series per service around one pprof
 * profile, gzipped. */
#ifndef SPANPROF_PUSH_ENCODE_H
#define SPANPROF_PUSH_ENCODE_H

#include <stddef.h>
#include <stdint.h>

#include "profile/pprof.h"
#include "util/series_labels.h"

#define PUSH_PROFILE_NAME "process_cpu" /* __name__ of CPU profiles */

/* Builds a PushRequest with one RawProfileSeries labelled as series_label_set_build() says
 * (__name__=process_cpu, service_name=<service> and the static labels), holding one RawSample: the uncompressed pprof `profile` and a new v4 UUID. The packed
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
