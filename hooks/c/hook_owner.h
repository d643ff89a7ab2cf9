/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Which copy of the hook a process's calls go through (docs/thread-context.md, "Two copies of
 * the hook in one process"). Internal to libspanprof. */
#ifndef SPANPROF_HOOK_OWNER_H
#define SPANPROF_HOOK_OWNER_H

#include <stddef.h>

#include "spanprof.h"

typedef void (*hook_span_set_fn)(const struct spanprof_span *span);
typedef int (*hook_active_fn)(void);
typedef int (*hook_publish_fn)(const char *const *keys, const char *const *values, size_t n);

/* The copy this one forwards its calls to; every field NULL when this copy is its own owner.
 * active and publish are NULL too when the owner does not export them (span_set alone then
 * goes there). */
struct hook_owner {
	hook_span_set_fn span_set;
	hook_active_fn active;
	hook_publish_fn publish;
};

/* Every copy built from this source carries a loaded ELF note (in a PT_NOTE segment) that
 * names its functions: owner HOOK_OWNER_NOTE_NAME, type HOOK_OWNER_NOTE_TYPE, descriptor three
 * signed 64-bit distances from the descriptor's start to spanprof_span_set, spanprof_active and
 * spanprof_process_context_publish. */
#define HOOK_OWNER_NOTE_NAME "spanprof"
#define HOOK_OWNER_NOTE_TYPE 0x4f574e31 /* "OWN1" */

/* This copy's owner, found at load (all NULL until then, and for the owner itself). */
extern struct hook_owner hook_owner __attribute__((visibility("hidden")));

/* Finds the owner of the process's spans, as seen from the copy that holds the code at self:
 * the object loaded first (the dynamic linker's order) that carries the owner note, or, built
 * before the note existed, exports spanprof_span_set and spanprof_active. When that is another object, fills owner with its functions
 * and pins it (it is never unloaded after this); else, or when it cannot be pinned, leaves
 * owner zeroed. Called from a constructor: it takes the dynamic linker's locks. */
void hook_owner_find(struct hook_owner *owner, const void *self)
	__attribute__((visibility("hidden")));

#endif /* SPANPROF_HOOK_OWNER_H */
