// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* JSON string and hex writers. */
#include <stddef.h>

#include "util/json_escape.h"
#include "view/json_out.h"

static void put_piece(void *ctx, const char *s, size_t n)
{
	fwrite(s, 1, n, ctx);
}

void json_out_str(FILE *f, const char *s)
{
	putc('"', f);
	json_escape(s, put_piece, f);
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
