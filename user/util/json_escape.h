/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The one JSON string escaper: log lines, span logs and the viewer's answers all escape text
 * with the same rules. json-c's serializer is not used for them: it copies bytes that are not
 * UTF-8 through unchanged (so its output is not valid JSON for such input), and it allocates an
 * object per string, which the logger, called on allocation failures, must not do. */
#ifndef SPANPROF_JSON_ESCAPE_H
#define SPANPROF_JSON_ESCAPE_H

#include <stddef.h>

/* Receives one piece of output: one UTF-8 character or one whole escape sequence, never part of
 * either, so a writer that drops what does not fit never cuts an escape or a character. */
typedef void (*json_escape_put_fn)(void *ctx, const char *s, size_t n);

/* Writes s (NULL: empty) as the inside of a JSON string, without the quotes:
 * - '"' and '\\' get a backslash; newline, carriage return and tab are \n, \r and \t;
 * - other control characters, DEL and '<' are \u00XX ('<' so that the text can sit in an HTML
 *   page's script without closing it);
 * - valid UTF-8 is copied, and each byte that does not start a valid sequence becomes \ufffd.
 * The result is also a valid double-quoted logfmt value. */
void json_escape(const char *s, json_escape_put_fn put, void *ctx);

#endif /* SPANPROF_JSON_ESCAPE_H */
