/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* CPython 3.8-3.13 structure offsets (docs/interpreters.md; each checked on a live build): the
 * frame-chain ones BPF needs and the code-object and string ones the resolver needs. */
#ifndef SPANPROF_PYTHON_OFFSETS_H
#define SPANPROF_PYTHON_OFFSETS_H

#include <stdint.h>
#include <linux/types.h>

#include "spanprof_abi.h"

struct python_offsets {
	int minor;
	uint32_t runtime_tss_key; /* _PyRuntime -> the autoTSSkey's pthread_key_t (int) */
	struct py_proc_info bpf; /* tss_key_addr left 0 */
	/* code object */
	uint16_t co_filename, co_name, co_qualname, co_linetable; /* co_qualname 0: none */
	/* unicode: state word, length, and where compact-ASCII data starts */
	uint16_t str_state, str_length, str_ascii_data;
	/* bytes: size and data */
	uint16_t bytes_size, bytes_data;
};

/* The offsets of CPython 3.<minor>, or NULL when that version is not supported. */
const struct python_offsets *python_offsets_for(int major, int minor);

#endif /* SPANPROF_PYTHON_OFFSETS_H */
