/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* CRuby 2.7-3.4 structure offsets: what BPF needs to walk control frames and what the resolver
 * needs to name an iseq. 3.1 (Debian 12), 3.3 (Debian 13) and 3.4 (Debian experimental) are
 * checked on live interpreters; the other columns come from the Ruby headers and are marked
 * untested. */
#ifndef SPANPROF_RUBY_OFFSETS_H
#define SPANPROF_RUBY_OFFSETS_H

#include <stdint.h>
#include <linux/types.h>

#include "spanprof_abi.h"

struct ruby_offsets {
	int major, minor;
	int tested; /* 1: checked against a live interpreter of this version */
	struct rb_proc_info bpf; /* ec fields left 0 */
	/* rb_iseq_t -> body; body fields */
	uint16_t iseq_body, body_iseq_size;
	uint16_t insns_body, insns_size, insns_succ; /* body.insns_info */
	uint16_t insn_entry_size; /* sizeof(struct iseq_insn_info_entry); line_no at 0 */
	int first_lineno_fixnum; /* location.first_lineno is a Fixnum VALUE (<= 3.1), else int */
	/* RString: bytes of an embedded string; embedded length in flags (<= 3.1) or at +16 */
	uint16_t str_embed_data;
	int str_embed_len_in_flags;
	/* RArray: length of an embedded array, (flags >> 15) & this (2 bits before 3.2's RVARGC) */
	uint16_t ary_embed_len_mask;
};

/* The offsets of CRuby major.minor, or NULL when that version is not supported. */
const struct ruby_offsets *ruby_offsets_for(int major, int minor);

/* location fields, relative to body_location (all versions). */
#define RUBY_LOC_PATHOBJ 0
#define RUBY_LOC_BASE_LABEL 8
#define RUBY_LOC_LABEL 16
#define RUBY_LOC_FIRST_LINENO 24
/* RBasic flags: type and the embed flag (RSTRING_NOEMBED / RARRAY_EMBED_FLAG = FL_USER1). */
#define RUBY_T_MASK 0x1f
#define RUBY_T_STRING 0x05
#define RUBY_T_ARRAY 0x07
#define RUBY_FL_USER1 (1ull << 13)
#define RUBY_STR_HEAP_LEN 16
#define RUBY_STR_HEAP_PTR 24
#define RUBY_ARY_EMBED 16
#define RUBY_ARY_HEAP_PTR 32
#define RUBY_ARY_HEAP_LEN 16
#define RUBY_ARY_EMBED_LEN_SHIFT 15
/* rb_symbols_t (ruby_global_symbols): {u32 last_id; st_table *str_sym; VALUE ids; ...}; ids is
 * an Array of Arrays of ID_ENTRY_UNIT [String, Symbol] pairs, indexed by the ID's serial:
 * id >> 4 (ID_SCOPE_SHIFT), or the ID itself for operators (id <= tLAST_OP_ID). */
#define RUBY_SYMBOLS_LAST_ID 0
#define RUBY_SYMBOLS_IDS 16
#define RUBY_ID_ENTRY_UNIT 512
#define RUBY_ID_ENTRY_SIZE 2
#define RUBY_ID_SCOPE_SHIFT 4
#define RUBY_LAST_OP_ID 0xa9

#endif /* SPANPROF_RUBY_OFFSETS_H */
