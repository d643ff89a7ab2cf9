/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Inlined frames of Go code from the runtime's inline trees (FUNCDATA_InlTree, reached through
 * moduledata.gofunc) and PCDATA_InlTreeIndex: Go 1.18+ layouts, amd64. */
#ifndef SPANPROF_GOPCLNTAB_INLINE_H
#define SPANPROF_GOPCLNTAB_INLINE_H

#include <stddef.h>
#include <stdint.h>

#include <libelf.h>

#include "util/gopclntab.h"

/* The go:func.* data the inline trees live in: a view over libelf's bytes, owns nothing. */
struct gopclntab_inl {
	const uint8_t *data; /* bytes from gofunc to the end of its section */
	size_t size;
};

/* One source-level frame. Strings point into the tables. */
struct gopclntab_frame {
	const char *function;
	const char *file; /* NULL when unknown */
	int line;
};

/* Finds moduledata (the runtime's first module, in .noptrdata: the word that points at the
 * loaded .gopclntab followed by the matching text start) and through it gofunc. t must come
 * from gopclntab_from_elf on the same elf. Returns 0, -ENODATA (not found, or Go < 1.18), or
 * -ENOEXEC. */
int gopclntab_inline_from_elf(struct gopclntab_inl *inl, const struct gopclntab *t, Elf *elf);

/* The frames at pc inside f, innermost (inlined) first and f itself last: at most max.
 * Returns how many were filled (>= 1 when max >= 1), or -ENOEXEC. inl may be NULL or empty:
 * then only f is returned. */
int gopclntab_inline_frames(const struct gopclntab *t, const struct gopclntab_inl *inl,
			    const struct gopclntab_func *f, uint64_t pc,
			    struct gopclntab_frame *out, int max);

#endif /* SPANPROF_GOPCLNTAB_INLINE_H */
