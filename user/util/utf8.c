// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* UTF-8 validation, repair (invalid bytes become U+FFFD) and boundary-safe truncation. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util/utf8.h"

size_t utf8_seq_len(const unsigned char *s)
{
	unsigned char lo = 0x80, hi = 0xbf;
	size_t len, i;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		len = 2;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		len = 3;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		len = 4;
	else
		return 0;
	/* The second byte's range rules out overlong forms, surrogates and values > U+10FFFF. */
	if (s[0] == 0xe0)
		lo = 0xa0;
	else if (s[0] == 0xed)
		hi = 0x9f;
	else if (s[0] == 0xf0)
		lo = 0x90;
	else if (s[0] == 0xf4)
		hi = 0x8f;
	if (s[1] < lo || s[1] > hi)
		return 0;
	/* The NUL terminator is not a continuation byte, so this never reads past the string. */
	for (i = 2; i < len; i++) {
		if (s[i] < 0x80 || s[i] > 0xbf)
			return 0;
	}
	return len;
}

int utf8_valid(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n;

	while (*p) {
		n = utf8_seq_len(p);
		if (!n)
			return 0;
		p += n;
	}
	return 1;
}

char *utf8_sanitize(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t len = strlen(s), n, o = 0;
	char *out;

	if (len > (SIZE_MAX - 1) / 3) {
		errno = ENOMEM;
		return NULL;
	}
	out = malloc(len * 3 + 1);
	if (!out)
		return NULL;
	while (*p) {
		n = utf8_seq_len(p);
		if (n) {
			memcpy(out + o, p, n);
			o += n;
			p += n;
		} else {
			memcpy(out + o, "\xef\xbf\xbd", 3);
			o += 3;
			p++;
		}
	}
	out[o] = '\0';
	return out;
}

size_t utf8_boundary(const char *s, size_t len)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t cut = len;

	/* A sequence is at most 4 bytes: back up at most 3 continuation bytes to its lead byte. */
	while (cut > 0 && len - cut < 3 && (p[cut] & 0xc0) == 0x80)
		cut--;
	return (p[cut] & 0xc0) == 0x80 ? len : cut;
}
