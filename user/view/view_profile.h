/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* One pprof file as the viewer keeps it: only the samples labelled with a span, their stacks as
 * frames (function, file, line), and the strings they use, in a few flat arrays. */
#ifndef SPANPROF_VIEW_PROFILE_H
#define SPANPROF_VIEW_PROFILE_H

#include <stddef.h>
#include <stdint.h>

#define VIEW_NO_STR UINT32_MAX

enum view_kind {
	VIEW_KIND_CPU = 0, /* sample type "cpu" */
	VIEW_KIND_OFF_CPU, /* sample type "off_cpu" */
};

/* A frame: offsets into strs (VIEW_NO_STR: none). */
struct view_frame {
	uint32_t name, file;
	int32_t line;
};

/* A location's frames are frames[first .. first + n), outermost (the caller) first. */
struct view_loc {
	uint32_t first, n;
};

/* A sample's stack is the locations stack[first .. first + n), root first. */
struct view_sample {
	uint64_t span_id; /* the span_id label as a number; 0: none */
	uint32_t span_name; /* offset into strs, or VIEW_NO_STR */
	uint32_t first, n;
	int64_t value; /* nanoseconds */
};

struct view_profile {
	enum view_kind kind;
	int64_t time_ns, duration_ns; /* the window, from the profile */
	struct view_sample *samples;
	size_t nsamples;
	uint32_t *stack; /* indexes into locs */
	size_t nstack;
	struct view_loc *locs;
	size_t nlocs;
	struct view_frame *frames;
	size_t nframes;
	char *strs; /* NUL-terminated strings back to back */
	size_t strs_len;
	size_t bytes; /* memory held, for the cache's budget */
};

/* Decodes a pprof profile (gzipped or not) from buf with protobuf-c and keeps its samples that
 * carry a span_id or span_name label. The value is the profile's first sample type, which must
 * be "cpu" or "off_cpu" in nanoseconds. Returns a new profile, or NULL with errno: EBADMSG (not
 * a profile, or a reference out of range), ENODATA (a truncated gzip stream), EFBIG (larger
 * than max_bytes once unpacked), ENOTSUP (another sample type), ENOMEM. why (size why_size)
 * gets a short reason for the page. */
struct view_profile *view_profile_decode(const uint8_t *buf, size_t len, size_t max_bytes,
					 char *why, size_t why_size);

/* The string at off, or "" for VIEW_NO_STR. */
const char *view_profile_str(const struct view_profile *p, uint32_t off);

void view_profile_free(struct view_profile *p); /* NULL-safe */

#endif /* SPANPROF_VIEW_PROFILE_H */
