/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* CRuby 2.6+ line numbers: an instruction position to its iseq_insn_info_entry through the
 * iseq's succinct index table (iseq.c succ_index_lookup), over bytes read from the process. */
#ifndef SPANPROF_RUBY_LINES_H
#define SPANPROF_RUBY_LINES_H

#include <stddef.h>
#include <stdint.h>

/* struct succ_index_table: imm_part[6] (7-bit ranks of positions 0..53, 9 per word), then
 * 80-byte blocks {u32 rank; u64 small_block_ranks (7 x 9 bits); u64 bits[8]} of 512 positions. */
#define RUBY_SUCC_IMM_POSITIONS 54
#define RUBY_SUCC_IMM_BYTES 48
#define RUBY_SUCC_BLOCK_BYTES 80
#define RUBY_SUCC_BLOCK_POSITIONS 512

/* Bytes of the table of an iseq with iseq_size instruction slots. */
size_t ruby_succ_table_bytes(uint32_t iseq_size);

/* The rank (1-based index of the insns_info entry) of position pos, or -1 when the table (len
 * bytes) does not reach it. */
int ruby_succ_lookup(const uint8_t *table, size_t len, uint32_t pos);

/* The line of position pos: entries holds nentries iseq_insn_info_entry of entry_size bytes
 * (int line_no first); table may be NULL when nentries <= 1. Returns the line, or 0 when the
 * data does not give one. */
int ruby_line_for(const uint8_t *table, size_t table_len, const uint8_t *entries, size_t entry_size,
		  uint32_t nentries, uint32_t pos);

#endif /* SPANPROF_RUBY_LINES_H */
