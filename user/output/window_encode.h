/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The one encoder of a window's profile bytes: the gzipped pprof of a local file and the push
 * requests of an upload come from the same builder, whose window time was fixed when it closed. */
#ifndef SPANPROF_WINDOW_ENCODE_H
#define SPANPROF_WINDOW_ENCODE_H

#include <stddef.h>
#include <stdint.h>

#include "profile/pprof.h"

/* The whole profile, gzipped, as a local .pb.gz file holds it. The builder's time and duration
 * are written as they are (never set here). *gz is malloc'ed, owned by the caller.
 * Returns 0 or -errno (-ENOMEM, -EIO from zlib). */
int window_encode_file(struct pprof_builder *b, uint8_t **gz, size_t *gz_len);

/* What a push series carries beside the profile. */
struct window_push {
	const char *service; /* service_name (NULL or empty: "unknown_service") */
	const struct pprof_label *labels; /* static series labels, checked by the caller */
	size_t nlabels;
	const char *omit_key; /* sample label left out of the pushed profiles (NULL: none) */
	size_t max_samples, max_bytes; /* per pushed profile (uncompressed); 0: no limit */
};

/* Receives one push request: body (gzipped push.v1.PushRequest, malloc'ed, now owned by the
 * callee) and its length, or body NULL and err < 0 when this part of the window could not be
 * encoded (-E2BIG: one sample alone is bigger than max_bytes). Returns 0 to go on. */
typedef int (*window_push_fn)(void *ctx, uint8_t *body, size_t len, int err);

/* Splits the profile into pushed profiles within the limits (each complete, each with the
 * builder's time and duration) and wraps each in a push request named for its sample type
 * ("process_cpu" for cpu). An empty builder gives no request. Returns 0, or -errno when the
 * builder could not be encoded at all (nothing was handed to fn) or fn's first error. */
int window_encode_push(struct pprof_builder *b, const struct window_push *p, window_push_fn fn,
		       void *ctx);

#endif /* SPANPROF_WINDOW_ENCODE_H */
