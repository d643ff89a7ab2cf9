/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Names CPython frames the sampler captured: reads the code object's qualified name, file name
 * and line table from /proc/PID/mem (bounded reads; the process's memory is untrusted) into a
 * bounded cache keyed by (pid, code address, first line, name/file check), so a code object freed
 * and reused by another function is read anew and never shown under the old name. */
#ifndef SPANPROF_PYTHON_SYMBOLS_H
#define SPANPROF_PYTHON_SYMBOLS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <linux/types.h>

#include "spanprof_abi.h"
#include "interp/interp_budget.h"
#include "interp/python_offsets.h"
#include "util/frame.h"

/* Longer line tables are not kept: such frames show the function's first line. */
#define PYTHON_SYMBOLS_TABLE_MAX (64 * 1024)

struct python_symbols;

struct python_symbols_stats {
	uint64_t hits, misses; /* cache lookups */
	uint64_t stale; /* code objects that no longer matched what BPF captured */
	uint64_t read_errors; /* code objects that could not be read */
	uint64_t
		evictions; /* entries dropped: max_entries were cached, or for room in the budget */
	uint64_t refused; /* code objects not cached (the budget refused them): read at each use */
	uint64_t bytes; /* heap held now: the cache, its hash, python_symbols_entry_bytes() per
			 * entry and each entry's line table (bytes asked of malloc) */
};

/* A cache of at most max_entries code objects, its bytes charged to budget (NULL: entries
 * bounded by count only). NULL on failure: errno ENOMEM, or ENOSPC when the cache's fixed bytes
 * do not fit in the budget. */
struct python_symbols *python_symbols_new(const char *proc_root, size_t max_entries,
					  struct interp_budget *budget);
void python_symbols_free(struct python_symbols *ps); /* gives its bytes back to its budget */

/* Fills *line (function "qualname", file, line) for frame f of pid, a CPython with offsets off.
 * Unreadable or stale code objects give "[python code gone]" / "[python code unreadable]" with no
 * file. Strings stay valid until the next call. */
void python_symbols_resolve(struct python_symbols *ps, pid_t pid, const struct python_offsets *off,
			    const struct interp_frame *f, struct sym_line *line);

/* The fixed bytes of one cached code object (its name and file buffers included); its line table,
 * at most PYTHON_SYMBOLS_TABLE_MAX bytes, comes on top. */
size_t python_symbols_entry_bytes(void);

void python_symbols_get_stats(const struct python_symbols *ps, struct python_symbols_stats *out);

#endif /* SPANPROF_PYTHON_SYMBOLS_H */
