/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* UTF-8 validation and repair for strings that leave the agent (pprof requires valid UTF-8). */
#ifndef SPANPROF_UTF8_H
#define SPANPROF_UTF8_H

#include <stddef.h>

/* Length of the valid UTF-8 sequence starting at s (1-4), or 0 when s does not start one
 * (overlong forms, surrogates and code points above U+10FFFF are invalid). s is NUL-terminated. */
size_t utf8_seq_len(const unsigned char *s);

/* 1 when the NUL-terminated s is valid UTF-8, else 0. */
int utf8_valid(const char *s);

/* Returns a malloc'ed copy of s in which each byte that does not start a valid sequence is
 * replaced by U+FFFD. NULL with errno = ENOMEM on failure. */
char *utf8_sanitize(const char *s);

/* Largest length <= len (len < strlen(s) + 1) that does not cut a multi-byte sequence of s,
 * for truncating text at a character boundary. */
size_t utf8_boundary(const char *s, size_t len);

#endif /* SPANPROF_UTF8_H */
