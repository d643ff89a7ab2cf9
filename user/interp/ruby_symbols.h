/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Names CRuby frames the sampler captured: reads the iseq's label, path and line table from
 * /proc/PID/mem (bounded reads; the process's memory is untrusted) into a bounded cache keyed by
 * (pid, iseq address, first line, body/label/path check), so an iseq freed and reused by another
 * method is read anew and never shown under the old name. */
#ifndef SPANPROF_RUBY_SYMBOLS_H
#define SPANPROF_RUBY_SYMBOLS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <linux/types.h>

#include "spanprof_abi.h"
#include "interp/interp_budget.h"
#include "interp/ruby_offsets.h"
#include "util/frame.h"

/* A C function's frame when its name cannot be read (ruby_global_symbols not found, or the ID
 * not in it). */
#define RUBY_CFUNC_PLACEHOLDER "[ruby C function]"

/* Larger line tables are not kept: such frames show the method's first line. */
#define RUBY_SYMBOLS_MAX_INSN_ENTRIES 16384
#define RUBY_SYMBOLS_MAX_ISEQ_SIZE (1u << 20)

struct ruby_symbols;

struct ruby_symbols_stats {
	uint64_t hits, misses; /* cache lookups */
	uint64_t stale; /* iseqs that no longer matched what BPF captured */
	uint64_t read_errors; /* iseqs that could not be read */
	uint64_t
		evictions; /* entries dropped: max_entries were cached, or for room in the budget */
	uint64_t
		refused; /* iseqs and names not cached (the budget refused them): read at each use */
	uint64_t bytes; /* heap held now: the cache, its hash, ruby_symbols_entry_bytes() per entry
			 * and each entry's line tables (bytes asked of malloc) */
};

/* A cache of at most max_entries iseqs and C function names, its bytes charged to budget (NULL:
 * entries bounded by count only). NULL on failure: errno ENOMEM, or ENOSPC when the cache's
 * fixed bytes do not fit in the budget. */
struct ruby_symbols *ruby_symbols_new(const char *proc_root, size_t max_entries,
				      struct interp_budget *budget);
void ruby_symbols_free(struct ruby_symbols *rs); /* gives its bytes back to its budget */

/* Fills *line (label, path, line) for frame f of pid, a CRuby with offsets off. C functions
 * give their method's name, read from the symbol table at global_symbols (0: none), else
 * RUBY_CFUNC_PLACEHOLDER; unreadable or stale iseqs "[ruby code gone]" / "[ruby code
 * unreadable]", with no file. Strings stay valid until the next call. */
void ruby_symbols_resolve(struct ruby_symbols *rs, pid_t pid, const struct ruby_offsets *off,
			  uint64_t global_symbols, const struct interp_frame *f,
			  struct sym_line *line);

/* The fixed bytes of one cached iseq or C function name (label and path buffers included); an
 * iseq's line tables come on top: at most RUBY_SYMBOLS_MAX_INSN_ENTRIES insns_info entries and
 * a succ table for at most RUBY_SYMBOLS_MAX_ISEQ_SIZE instructions. */
size_t ruby_symbols_entry_bytes(void);

void ruby_symbols_get_stats(const struct ruby_symbols *rs, struct ruby_symbols_stats *out);

#endif /* SPANPROF_RUBY_SYMBOLS_H */
