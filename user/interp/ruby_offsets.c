// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The per-version CRuby offsets table (docs/interpreters.md explains them). */
#include <stddef.h>

#include "interp/ruby_offsets.h"

/* Ruby 3.2 moved insns_info 8 bytes down (RVARGC) and made first_lineno an int and strings
 * carry their length at +16 with embedded bytes at +24 and embedded arrays up to 7 bits of
 * length. cfp_size: 3.1/3.2 have jit_return. */
#define RB_OFFSETS(maj, min, ok, cfp, old, entry)                                      \
	{                                                                              \
		.major = (maj), .minor = (min), .tested = (ok),                        \
		.bpf = { .cfp_size = (cfp), .body_encoded = 8, .body_location = 64 },  \
		.iseq_body = 16, .body_iseq_size = 4, .insns_body = (old) ? 120 : 112, \
		.insns_size = (old) ? 136 : 128, .insns_succ = (old) ? 144 : 136,      \
		.insn_entry_size = (entry), .first_lineno_fixnum = (old),              \
		.str_embed_data = (old) ? 16 : 24, .str_embed_len_in_flags = (old),    \
		.ary_embed_len_mask = (old) ? 0x3 : 0x7f                               \
	}

static const struct ruby_offsets table[] = {
	RB_OFFSETS(2, 7, 0, 56, 1, 8), /* untested */
	RB_OFFSETS(3, 0, 0, 56, 1, 8), /* untested */
	RB_OFFSETS(3, 1, 1, 64, 1, 12), /* Debian 12's 3.1.7, checked live */
	RB_OFFSETS(3, 2, 0, 64, 0, 12), /* untested */
	RB_OFFSETS(3, 3, 1, 56, 0, 12), /* Debian 13's 3.3.8, checked live */
	RB_OFFSETS(3, 4, 1, 56, 0, 12), /* Debian experimental's 3.4.11, checked live */
};

const struct ruby_offsets *ruby_offsets_for(int major, int minor)
{
	size_t i;

	for (i = 0; i < sizeof(table) / sizeof(table[0]); i++)
		if (table[i].major == major && table[i].minor == minor)
			return &table[i];
	return NULL;
}
