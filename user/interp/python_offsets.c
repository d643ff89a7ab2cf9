// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The per-version CPython offsets table (docs/interpreters.md lists them). */
#include <stddef.h>

#include "interp/python_offsets.h"

#define NONE SPANPROF_PY_NO_FIELD

/* <= 3.10: PyFrameObject chain from tstate->frame, f_lasti an int. */
#define PY_OLD(m, key, lasti)                                                              \
	{                                                                                  \
		.minor = (m), .runtime_tss_key = (key),                                    \
		.bpf = { .tstate_frame = 24,                                               \
			 .cframe_current = NONE,                                           \
			 .frame_code = 32,                                                 \
			 .frame_back = 24,                                                 \
			 .frame_lasti = (lasti),                                           \
			 .frame_owner = NONE,                                              \
			 .frame_entry = NONE,                                              \
			 .code_firstlineno = 40,                                           \
			 .code_adaptive = NONE,                                            \
			 .code_name = 112,                                                 \
			 .code_filename = 104,                                             \
			 .code_qualname = NONE,                                            \
			 .code_linetable = 120,                                            \
			 .minor = (m) },                                                   \
		.co_filename = 104, .co_name = 112, .co_qualname = 0, .co_linetable = 120, \
		.str_state = 32, .str_length = 16, .str_ascii_data = 48, .bytes_size = 16, \
		.bytes_data = 32                                                           \
	}

/* 3.12+: _PyInterpreterFrame chain (from cframe->current_frame on 3.12, from the thread state
 * on 3.13), owner byte instead of is_entry, shorter compact-ASCII header. */
#define PY_NEW(m, key, tstate, cframe, adaptive)                                             \
	{                                                                                    \
		.minor = (m), .runtime_tss_key = (key),                                      \
		.bpf = { .tstate_frame = (tstate),                                           \
			 .cframe_current = (cframe),                                         \
			 .frame_code = 0,                                                    \
			 .frame_back = 8,                                                    \
			 .frame_lasti = 56,                                                  \
			 .frame_owner = 70,                                                  \
			 .frame_entry = NONE,                                                \
			 .code_firstlineno = 68,                                             \
			 .code_adaptive = (adaptive),                                        \
			 .code_name = 120,                                                   \
			 .code_filename = 112,                                               \
			 .code_qualname = 128,                                               \
			 .code_linetable = 136,                                              \
			 .minor = (m) },                                                     \
		.co_filename = 112, .co_name = 120, .co_qualname = 128, .co_linetable = 136, \
		.str_state = 32, .str_length = 16, .str_ascii_data = 40, .bytes_size = 16,   \
		.bytes_data = 32                                                             \
	}

static const struct python_offsets table[] = {
	PY_OLD(8, 1392, 104),
	PY_OLD(9, 584, 104),
	PY_OLD(10, 584, 96),
	{ .minor = 11,
	  .runtime_tss_key = 592,
	  .bpf = { .tstate_frame = 56,
		   .cframe_current = 8,
		   .frame_code = 32,
		   .frame_back = 48,
		   .frame_lasti = 56,
		   .frame_owner = NONE,
		   .frame_entry = 68,
		   .code_firstlineno = 72,
		   .code_adaptive = 184,
		   .code_name = 120,
		   .code_filename = 112,
		   .code_qualname = 128,
		   .code_linetable = 136,
		   .minor = 11 },
	  .co_filename = 112,
	  .co_name = 120,
	  .co_qualname = 128,
	  .co_linetable = 136,
	  .str_state = 32,
	  .str_length = 16,
	  .str_ascii_data = 48,
	  .bytes_size = 16,
	  .bytes_data = 32 },
	PY_NEW(12, 1544, 56, 0, 192),
	PY_NEW(13, 2160, 72, NONE, 200),
};

const struct python_offsets *python_offsets_for(int major, int minor)
{
	size_t i;

	if (major != 3)
		return NULL;
	for (i = 0; i < sizeof(table) / sizeof(table[0]); i++)
		if (table[i].minor == minor)
			return &table[i];
	return NULL;
}
