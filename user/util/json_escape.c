// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Escapes text into the inside of a JSON string (the rules are in the header). */
#include <stdio.h>
#include <string.h>

#include "util/json_escape.h"
#include "util/utf8.h"

/* The escape for byte c, or NULL when it is copied as it is. */
static const char *escape_of(unsigned char c, char buf[8])
{
	switch (c) {
	case '"':
		return "\\\"";
	case '\\':
		return "\\\\";
	case '\n':
		return "\\n";
	case '\r':
		return "\\r";
	case '\t':
		return "\\t";
	}
	if (c < 0x20 || c == 0x7f || c == '<') {
		snprintf(buf, 8, "\\u%04x", c);
		return buf;
	}
	return NULL;
}

void json_escape(const char *s, json_escape_put_fn put, void *ctx)
{
	const unsigned char *p = (const unsigned char *)(s ? s : "");
	const char *esc;
	char buf[8];
	size_t n;

	for (; *p; p += n) {
		n = *p < 0x80 ? 1 : utf8_seq_len(p);
		esc = n == 1 ? escape_of(*p, buf) : n ? NULL : "\\ufffd";
		if (esc)
			put(ctx, esc, strlen(esc));
		else
			put(ctx, (const char *)p, n);
		n = n ? n : 1;
	}
}
