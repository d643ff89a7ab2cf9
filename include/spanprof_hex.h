/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Hex digits as the agent and its BPF programs read them (span ids, percent-escapes): one
 * definition for both sides, with nothing from libc so that BPF code can include it. */
#ifndef SPANPROF_HEX_H
#define SPANPROF_HEX_H

/* Value of one hex digit (either case), or -1. */
static inline __attribute__((always_inline)) int spanprof_hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

#endif /* SPANPROF_HEX_H */
