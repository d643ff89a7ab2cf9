// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Control characters and broken UTF-8 out of process-controlled text. */
#include <string.h>

#include "util/text_clean.h"
#include "util/utf8.h"

void text_clean(char *s)
{
	const unsigned char *in = (const unsigned char *)s;
	char *out = s;
	size_t n;

	while (*in) {
		n = utf8_seq_len(in);
		/* C1 controls are the two-byte sequences c2 80 .. c2 9f. */
		if (!n || (n == 1 && (*in < 0x20 || *in == 0x7f)) ||
		    (n == 2 && in[0] == 0xc2 && in[1] <= 0x9f)) {
			*out++ = '?';
			in += n ? n : 1;
			continue;
		}
		memmove(out, in, n);
		out += n;
		in += n;
	}
	*out = '\0';
}
