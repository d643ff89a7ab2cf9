/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Header-only helpers for C and C++ tracers: fill a struct spanprof_span from OpenTelemetry's
 * hex ids ("4bf92f3577b34da6a3ce929d0e0e4736") and the local root span's name. */
#ifndef SPANPROF_OTEL_H
#define SPANPROF_OTEL_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "spanprof.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Value of one hex digit (either case), or -1. */
static inline int spanprof_otel_hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/*
 * Decodes exactly 2 * n hex digits (either case, nothing before or after them) into out[n],
 * big-endian, as OpenTelemetry prints ids. Returns 0, or -EINVAL when hex is NULL, has another
 * length or a non-hex character; out is not touched then.
 */
static inline int spanprof_otel_hex_decode(const char *hex, uint8_t *out, size_t n)
{
	uint8_t tmp[16];
	size_t i;
	int hi, lo;

	if (!hex || n > sizeof(tmp))
		return -EINVAL;
	for (i = 0; i < n; i++) {
		/* A NUL before the end makes hex_digit() fail, so short strings stop here. */
		hi = spanprof_otel_hex_digit(hex[2 * i]);
		lo = hi < 0 ? -1 : spanprof_otel_hex_digit(hex[2 * i + 1]);
		if (lo < 0)
			return -EINVAL;
		tmp[i] = (uint8_t)(hi << 4 | lo);
	}
	if (hex[2 * n] != '\0')
		return -EINVAL;
	memcpy(out, tmp, n);
	return 0;
}

/* 1 when all n bytes are zero (OpenTelemetry's invalid id). */
static inline int spanprof_otel_is_zero(const uint8_t *id, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (id[i])
			return 0;
	return 1;
}

/* Copies name into dst[SPANPROF_SPAN_NAME_MAX], NUL-terminated; a longer name is cut before the
 * UTF-8 sequence that would not fit whole, so the agent never sees half a character. */
static inline void spanprof_otel_copy_name(char *dst, const char *name)
{
	size_t len = name ? strlen(name) : 0;

	if (len > SPANPROF_SPAN_NAME_MAX - 1) {
		len = SPANPROF_SPAN_NAME_MAX - 1;
		/* name[len] is the first byte left out: if it continues a character (10xxxxxx),
		 * back off to that character's lead byte and leave the whole character out. */
		while (len > 0 && ((unsigned char)name[len] & 0xc0) == 0x80)
			len--;
	}
	memset(dst, 0, SPANPROF_SPAN_NAME_MAX);
	if (len)
		memcpy(dst, name, len);
}

/*
 * Fills *span for spanprof_span_set() from OpenTelemetry hex ids:
 *   trace_id_hex      32 hex digits, not all zero;
 *   span_id_hex       16 hex digits, not all zero: the span now active on the thread;
 *   root_span_id_hex  16 hex digits of its local root span (the first span of the trace in this
 *                     process), or NULL / "" when the span is its own local root;
 *   root_name         the local root span's name (NULL: none), truncated to 255 bytes.
 * Returns 0, or -EINVAL for a malformed or all-zero id; *span is left unchanged then.
 */
static inline int spanprof_otel_span_init(struct spanprof_span *span, const char *trace_id_hex,
					  const char *span_id_hex, const char *root_span_id_hex,
					  const char *root_name)
{
	struct spanprof_span s;

	memset(&s, 0, sizeof(s));
	s.abi_version = SPANPROF_SPAN_ABI_VERSION;
	if (spanprof_otel_hex_decode(trace_id_hex, s.trace_id, sizeof(s.trace_id)) ||
	    spanprof_otel_is_zero(s.trace_id, sizeof(s.trace_id)))
		return -EINVAL;
	if (spanprof_otel_hex_decode(span_id_hex, s.span_id, sizeof(s.span_id)) ||
	    spanprof_otel_is_zero(s.span_id, sizeof(s.span_id)))
		return -EINVAL;
	/* An all-zero root id is the struct's own spelling of "own local root": accept it. */
	if (root_span_id_hex && root_span_id_hex[0] &&
	    spanprof_otel_hex_decode(root_span_id_hex, s.root_span_id, sizeof(s.root_span_id)))
		return -EINVAL;
	spanprof_otel_copy_name(s.name, root_name);
	*span = s;
	return 0;
}

#ifdef __cplusplus
}
#endif

#endif /* SPANPROF_OTEL_H */
