// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* CRuby's succinct position -> insns_info index table, decoded from untrusted bytes. */
#include <string.h>

#include "interp/ruby_lines.h"
#include "util/unaligned.h"

size_t ruby_succ_table_bytes(uint32_t iseq_size)
{
	size_t blocks = 0;

	if (iseq_size > RUBY_SUCC_IMM_POSITIONS)
		blocks = (iseq_size - RUBY_SUCC_IMM_POSITIONS + RUBY_SUCC_BLOCK_POSITIONS - 1) /
			 RUBY_SUCC_BLOCK_POSITIONS;
	return RUBY_SUCC_IMM_BYTES + blocks * RUBY_SUCC_BLOCK_BYTES;
}

int ruby_succ_lookup(const uint8_t *table, size_t len, uint32_t pos)
{
	uint32_t bit, small, rank;
	const uint8_t *block;
	uint64_t bits, ranks;
	size_t at;
	int small_rank = 0;

	if (pos < RUBY_SUCC_IMM_POSITIONS) {
		at = (pos / 9) * 8;
		if (at + 8 > len)
			return -1;
		return (load_u64(table + at) >> ((pos % 9) * 7)) & 0x7f;
	}
	pos -= RUBY_SUCC_IMM_POSITIONS;
	at = RUBY_SUCC_IMM_BYTES +
	     (size_t)(pos / RUBY_SUCC_BLOCK_POSITIONS) * RUBY_SUCC_BLOCK_BYTES;
	if (at + RUBY_SUCC_BLOCK_BYTES > len)
		return -1;
	block = table + at;
	bit = pos % RUBY_SUCC_BLOCK_POSITIONS;
	small = bit / 64;
	memcpy(&rank, block, sizeof(rank));
	ranks = load_u64(block + 8);
	if (small)
		small_rank = (ranks >> ((small - 1) * 9)) & 0x1ff;
	/* Set bits at or below pos within its 64-bit word. */
	bits = load_u64(block + 16 + 8 * small) << (63 - bit % 64);
	return (int)(rank + small_rank + __builtin_popcountll(bits));
}

int ruby_line_for(const uint8_t *table, size_t table_len, const uint8_t *entries, size_t entry_size,
		  uint32_t nentries, uint32_t pos)
{
	int32_t line;
	int idx;

	if (!nentries || !entries || entry_size < sizeof(line))
		return 0;
	idx = 1;
	if (nentries > 1) {
		if (!table)
			return 0;
		idx = ruby_succ_lookup(table, table_len, pos);
		if (idx < 1 || (uint32_t)idx > nentries)
			return 0;
	}
	memcpy(&line, entries + (size_t)(idx - 1) * entry_size, sizeof(line));
	return line > 0 ? line : 0;
}
