/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* One ELF file's unwind table, built from its own CFI (.eh_frame, else .debug_frame) with libdw:
 * rows sorted by PC, each saying how to find the CFA, the return address and the caller's rbp. */
#ifndef SPANPROF_CFI_TABLE_H
#define SPANPROF_CFI_TABLE_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include <libelf.h>
#include <linux/types.h>

#include "spanprof_abi.h"

/* A row applies from pc up to the next row's pc. */
struct cfi_row {
	uint64_t pc; /* ELF virtual address */
	struct spanprof_unwind_rule rule;
};

struct cfi_table_stats {
	uint64_t fdes; /* FDEs read */
	uint64_t text_bytes; /* size of the executable PT_LOAD segments */
	uint64_t invalid_rows; /* rows with a rule the unwinder cannot follow (counted, kept) */
	uint64_t plt_rows, signal_rows, stop_rows;
	uint64_t build_us; /* time the build took */
};

struct cfi_table {
	struct cfi_row *rows; /* sorted by pc, no two neighbours with the same rule */
	size_t nrows;
	struct cfi_table_stats stats;
};

/* Files with more executable bytes than this are not read: at 18-30k rows per MB their table
 * would exceed what the BPF unwinder can hold (SPANPROF_UNWIND_TABLE_CHUNKS chunks). */
#define CFI_TABLE_MAX_TEXT (40ull << 20)

/* Builds the table of elf (not consumed). Returns 0, -ENOENT when the file has no CFI at all
 * (callers fall back to frame pointers), -E2BIG above CFI_TABLE_MAX_TEXT, -ENOMEM, -EINVAL
 * for an unreadable CFI section, or -ECANCELED once *cancel (NULL: never) is set, which is
 * looked at between FDEs: another thread can stop a long build within microseconds. */
int cfi_table_build(Elf *elf, struct cfi_table *out, const atomic_int *cancel);

/* Same, from an open file descriptor (not closed). */
int cfi_table_build_fd(int fd, struct cfi_table *out, const atomic_int *cancel);

/* Frees the rows and empties t. NULL-safe. */
void cfi_table_release(struct cfi_table *t);

/* The row that applies at pc, or NULL before the first row. */
const struct cfi_row *cfi_table_find(const struct cfi_table *t, uint64_t pc);

#endif /* SPANPROF_CFI_TABLE_H */
