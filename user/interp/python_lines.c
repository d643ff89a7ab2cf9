// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Decodes CPython's three line-table formats, bounded by the table's length. */
#include <errno.h>

#include "interp/python_lines.h"

/* A decoded line is kept inside this range, whatever the (hostile) deltas add up to. */
#define LINE_MAX_VALUE 100000000

static int clamp_line(long line)
{
	return line > 0 && line < LINE_MAX_VALUE ? (int)line : 0;
}

/* <= 3.9 co_lnotab: (address increment in bytes, signed line increment) pairs. */
static int lnotab_line(const uint8_t *tab, size_t len, int first, uint32_t lasti)
{
	long line = first;
	uint64_t addr = 0;
	size_t i;

	for (i = 0; i + 1 < len; i += 2) {
		addr += tab[i];
		if (addr > lasti)
			break;
		line += (int8_t)tab[i + 1];
	}
	return clamp_line(line);
}

/* 3.10 co_linetable: (start delta in bytes, signed line delta; -128 = no line) pairs. */
static int linetable310_line(const uint8_t *tab, size_t len, int first, uint32_t lasti)
{
	uint64_t start, end = 0, addr = (uint64_t)lasti * 2;
	long line = first;
	size_t i;

	for (i = 0; i + 1 < len; i += 2) {
		start = end;
		end += tab[i];
		if ((int8_t)tab[i + 1] != -128)
			line += (int8_t)tab[i + 1];
		if (addr >= start && addr < end)
			return (int8_t)tab[i + 1] == -128 ? 0 : clamp_line(line);
	}
	return -EINVAL;
}

/* Reads a 6-bit-chunk varint at *pos; -1 when the table ends first or it is too long. */
static long read_varint(const uint8_t *tab, size_t len, size_t *pos)
{
	unsigned long val = 0;
	unsigned int shift = 0;
	uint8_t b;

	do {
		if (*pos >= len || shift > 30)
			return -1;
		b = tab[(*pos)++];
		val |= (unsigned long)(b & 63) << shift;
		shift += 6;
	} while (b & 64);
	return (long)val;
}

static int read_svarint(const uint8_t *tab, size_t len, size_t *pos, long *out)
{
	long uv = read_varint(tab, len, pos);

	if (uv < 0)
		return -EINVAL;
	*out = (uv & 1) ? -(uv >> 1) : (uv >> 1);
	return 0;
}

/* Decodes the line change of one 3.11+ entry with the given code and moves *pos past it.
 * *has_line is cleared for code 15 (no line). */
static int location_entry(const uint8_t *tab, size_t len, size_t *pos, int code, long *line,
			  int *has_line)
{
	long delta;
	int i;

	*has_line = 1;
	if (code == 15) {
		*has_line = 0;
		return 0;
	}
	if (code == 14 || code == 13) {
		if (read_svarint(tab, len, pos, &delta))
			return -EINVAL;
		*line += delta;
		for (i = 0; code == 14 && i < 3; i++)
			if (read_varint(tab, len, pos) < 0)
				return -EINVAL;
		return 0;
	}
	if (code >= 10) {
		*line += code - 10;
		*pos += 2;
	} else {
		*pos += 1;
	}
	return *pos <= len ? 0 : -EINVAL;
}

/* 3.11+ location table: entries of a header byte (bit 7 set, code in bits 3-6, length - 1 in
 * code units in bits 0-2) and code-dependent line and column data. */
static int location_line(const uint8_t *tab, size_t len, int first, uint32_t lasti)
{
	uint64_t start = 0, end;
	long line = first;
	size_t pos = 0;
	int has_line;
	uint8_t b;

	while (pos < len) {
		b = tab[pos++];
		if (!(b & 0x80))
			return -EINVAL;
		end = start + (b & 7) + 1;
		if (location_entry(tab, len, &pos, (b >> 3) & 15, &line, &has_line))
			return -EINVAL;
		if (lasti >= start && lasti < end)
			return has_line ? clamp_line(line) : 0;
		start = end;
	}
	return -EINVAL;
}

int python_line_for(int minor, const uint8_t *tab, size_t len, int firstlineno, uint32_t lasti)
{
	if (minor >= 8 && minor <= 9)
		return lnotab_line(tab, len, firstlineno, lasti);
	if (minor == 10)
		return linetable310_line(tab, len, firstlineno, lasti);
	if (minor >= 11 && minor <= 14)
		return location_line(tab, len, firstlineno, lasti);
	return -EINVAL;
}
