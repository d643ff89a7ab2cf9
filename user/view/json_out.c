// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* JSON string and hex writers. */
#include <stddef.h>

#include "util/utf8.h"
#include "view/json_out.h"

void json_out_str(FILE *f, const char *s)
{
	const unsigned char *p = (const unsigned char *)(s ? s : "");
	size_t n;

	putc('"', f);
	while (*p) {
		n = utf8_seq_len(p);
		if (*p == '"' || *p == '\\') {
			putc('\\', f);
			putc(*p, f);
		} else if (*p < 0x20 || *p == '<') {
			fprintf(f, "\\u%04x", *p);
		} else if (!n) {
			fputs("\\ufffd", f);
			n = 1;
		} else {
			fwrite(p, 1, n, f);
		}
		p += n ? n : 1;
	}
	putc('"', f);
}

void json_out_hex(FILE *f, const uint8_t *b, size_t n)
{
	size_t i;

	putc('"', f);
	for (i = 0; i < n; i++)
		fprintf(f, "%02x", b[i]);
	putc('"', f);
}
