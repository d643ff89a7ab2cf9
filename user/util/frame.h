/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Plain frame types: what one sampled address resolved to (function, file and line, inlined
 * callers, mapping). The symbolizer fills them in and the encoder reads them; neither owns them. */
#ifndef SPANPROF_FRAME_H
#define SPANPROF_FRAME_H

#include <stdint.h>

/* At most this many frames (one real + inlined callers) per address. */
#define SYM_MAX_INLINE 8

/* One source line of a frame. Strings belong to whoever filled the frame in (the symbolizer's
 * stay valid until its next call). */
struct sym_line {
	const char *function; /* demangled; NULL when unknown */
	const char *file; /* source file or NULL */
	int line; /* 0 when unknown */
};

/* The mapping a frame belongs to, for pprof's Mapping. Strings as for sym_line. */
struct sym_mapping {
	uint64_t start, limit, offset;
	const char *path; /* "/usr/lib/x.so", "[kernel.kallsyms]", "[vdso]", ... */
	const char *build_id; /* lower-case hex, or NULL */
};

/* What one address resolved to. lines[0] is the innermost (inlined) function, the last entry the
 * function that really contains the address. nlines == 0 means "not symbolized": readers show
 * "[unknown]" with the mapping's name. */
struct sym_frame {
	uint64_t addr; /* the address as sampled */
	int has_mapping; /* 0: no mapping contains addr */
	/* A Python or Ruby frame: its name is the source's ("<module>", "block in <main>"), and it
	 * has no linker name beside it. */
	int interpreted;
	struct sym_mapping mapping;
	int nlines;
	struct sym_line lines[SYM_MAX_INLINE];
};

#endif /* SPANPROF_FRAME_H */
