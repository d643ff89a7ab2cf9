/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Builds one pprof Profile (cpu/nanoseconds) from symbolized samples and encodes it with
 * protobuf-c (proto/profile.proto). Strings, functions, mappings and locations are interned. */
#ifndef SPANPROF_PPROF_H
#define SPANPROF_PPROF_H

#include <stddef.h>
#include <stdint.h>

#include "config/config_types.h"
#include "util/frame.h"

/* period_ns: nanoseconds one sample stands for (1e9 / frequency); time_nanos: window start
 * (Unix ns); duration_nanos: window length. Returns NULL and sets errno on failure. */
struct pprof_builder *pprof_builder_new(int64_t period_ns, int64_t time_nanos,
					int64_t duration_nanos);
void pprof_builder_free(struct pprof_builder *b); /* NULL-safe */

/* Adds `count` samples with this stack (frames[0] is the leaf) and labels. Each frame becomes one
 * Location (deduplicated by mapping and address) with one Line per entry of frames[i].lines,
 * innermost first. A frame with nlines == 0 keeps its address and mapping and gets one Line whose
 * function is named "[unknown] (<basename of the mapping path>)", or "[unknown]" without a
 * mapping, so flame graphs stay readable. Samples with an identical stack and labels are merged.
 * Returns 0 or -ENOMEM/-EINVAL. */
int pprof_builder_add_sample(struct pprof_builder *b, const struct sym_frame *frames,
			     size_t nframes, int64_t count, const struct pprof_label *labels,
			     size_t nlabels);

/* Names the sample type and its unit (default "cpu", "nanoseconds"); the period type is the
 * same. Returns 0 or -ENOMEM/-EINVAL. */
int pprof_builder_set_sample_type(struct pprof_builder *b, const char *type, const char *unit);

/* The sample type's name ("cpu" unless set). */
const char *pprof_builder_sample_type(const struct pprof_builder *b);

/* Sets the window the profile covers (time_nanos, duration_nanos) once it is known: the
 * aggregate does it once, when the window closes; the encoders only read it. */
void pprof_builder_set_time(struct pprof_builder *b, int64_t time_nanos, int64_t duration_nanos);

/* The window the profile covers: its start (Unix ns) and length. */
int64_t pprof_builder_time(const struct pprof_builder *b);
int64_t pprof_builder_duration(const struct pprof_builder *b);

/* Number of samples (distinct stack+label combinations) added so far. */
size_t pprof_builder_sample_count(const struct pprof_builder *b);

/* Encodes the profile (not compressed). *out is malloc'ed, owned by the caller.
 * Returns 0 or -ENOMEM. */
int pprof_builder_encode(struct pprof_builder *b, uint8_t **out, size_t *len);

/* Receives one chunk from pprof_builder_encode_chunks(): a complete encoded (uncompressed) profile
 * of nsamples samples. buf belongs to the encoder and is only valid during the call.
 * Returns 0 to go on, or a negative errno that stops the encoding and is passed back. */
typedef int (*pprof_chunk_fn)(void *ctx, const uint8_t *buf, size_t len, size_t nsamples);

/* Encodes the builder's samples, in the order they were added, as consecutive profiles of at
 * most max_samples samples and max_bytes encoded bytes each (0: no limit), and calls fn once per
 * profile. Each one is complete and valid on its own: the builder's period, sample type, time
 * and duration, and only the strings, functions, mappings and locations its samples use, with
 * ids renumbered from 1. A sample too big to fit max_bytes alone goes out alone (len > max_bytes
 * tells the caller). An empty builder gives one empty profile. The builder is not changed.
 * Returns 0, -EINVAL, -ENOMEM, or the first error fn returned. */
int pprof_builder_encode_chunks(struct pprof_builder *b, size_t max_samples, size_t max_bytes,
				pprof_chunk_fn fn, void *ctx);

/* pprof_builder_encode_chunks(), but every sample label whose key is omit_key (NULL: none) is
 * left out, and so is its string when nothing else uses it. */
int pprof_builder_encode_chunks_omit(struct pprof_builder *b, const char *omit_key,
				     size_t max_samples, size_t max_bytes, pprof_chunk_fn fn,
				     void *ctx);

/* The distinct keys of the samples' labels, at most max of them, into keys (pointers into the
 * builder, valid while it lives). Returns how many were written. */
size_t pprof_builder_label_keys(const struct pprof_builder *b, const char **keys, size_t max);

/* Gzips buf (RFC 1952, as pprof files are stored). *out is malloc'ed. Returns 0 or -errno. */
int pprof_gzip(const uint8_t *buf, size_t len, uint8_t **out, size_t *out_len);

#endif /* SPANPROF_PPROF_H */
