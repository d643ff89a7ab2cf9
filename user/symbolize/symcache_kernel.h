/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The kernel part of the symbol cache: kallsyms loaded lazily and reloaded when the set of
 * loaded modules changes. Embedded in struct symcache. */
#ifndef SPANPROF_SYMCACHE_KERNEL_H
#define SPANPROF_SYMCACHE_KERNEL_H

#include <stdint.h>

#include "symbolize/ksyms.h"
#include "util/frame.h"

struct symcache_kernel {
	const char *kallsyms_path; /* borrowed from the cache's limits */
	const char *proc_root;
	struct ksyms *ks;
	int unavailable; /* addresses hidden (kptr_restrict): reported once */
	uint64_t modules_sig; /* hash of <proc_root>/modules at the last load */
	uint64_t checked_ns; /* when the modules were last compared */
	char module[80]; /* "[ext4]" of the last frame */
	char name[KSYMS_NAME_MAX]; /* the symbol name of the last frame */
	uint64_t errors;
};

/* Records the paths (borrowed, must outlive kc). Loads nothing yet. Returns 0. */
int symcache_kernel_init(struct symcache_kernel *kc, const char *kallsyms_path,
			 const char *proc_root);

/* Frees the symbols. NULL-safe. */
void symcache_kernel_release(struct symcache_kernel *kc);

/* Fills out for a kernel address: mapping "[kernel.kallsyms]" (or "[module]") and the symbol
 * name, or nlines == 0 when kernel symbols are unavailable or addr is below every symbol. */
void symcache_kernel_resolve(struct symcache_kernel *kc, uint64_t addr, struct sym_frame *out);

#endif /* SPANPROF_SYMCACHE_KERNEL_H */
